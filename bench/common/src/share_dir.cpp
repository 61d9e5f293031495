#include "nodeprobe/share_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "nodeprobe/subprocess.h"

namespace nodeprobe {
namespace {

constexpr off_t kMaxDataFile = 16 << 20;

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::optional<std::string> share_dir() {
  if (const char* d = std::getenv(kShareDirEnv); d && *d) {
    std::string s = d;
    if (s.back() != '/') s += '/';
    return s;
  }
  // The runner and the probes sit in BIN/ both installed (/usr/bin) and in
  // the build tree (BUILD/bin): BIN/../share/nodeprobe is the one layout.
  const std::string s = self_exe_dir() + "../share/nodeprobe/";
  if (is_dir(s)) return s;
  return std::nullopt;
}

std::optional<std::string> read_share_file(const std::string& rel) {
  const auto dir = share_dir();
  if (!dir) return std::nullopt;
  const std::string path = *dir + rel;
  auto fail = [&](const std::string& why) -> std::optional<std::string> {
    throw std::runtime_error("data file " + path + ": " + why + " (set " + kShareDirEnv +
                             " or --share-dir to the directory holding " + rel + ")");
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  if (st.st_size > kMaxDataFile) {
    ::close(fd);
    return fail("larger than 16 MiB");
  }
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, &out[got], out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

}  // namespace nodeprobe
