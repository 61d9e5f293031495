#include "nodeprobe/data_files.h"

#include <sys/stat.h>

#include <cstdlib>

#include "nodeprobe/subprocess.h"

namespace nodeprobe {
namespace {

std::string with_slash(std::string d) {
  if (!d.empty() && d.back() != '/') d += '/';
  return d;
}

}  // namespace

std::vector<std::string> data_dirs() {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("NODEPROBE_DATA_DIR"); d && *d) dirs.push_back(with_slash(d));
  const std::string exe = self_exe_dir();
  dirs.push_back(exe);
  dirs.push_back(exe + "../share/nodeprobe/");
  return dirs;
}

std::string find_data_file(const std::string& name, std::string* looked) {
  std::string where;
  for (const auto& d : data_dirs()) {
    const std::string p = d + name;
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return p;
    where += (where.empty() ? "" : ", ") + d;
  }
  if (looked) *looked = where;
  return "";
}

}  // namespace nodeprobe
