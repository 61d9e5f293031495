#include "nodeprobe/shared_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace nodeprobe {

namespace {

std::string join_dirs(const std::vector<std::string>& dirs) {
  std::string out;
  for (const std::string& d : dirs) out += (out.empty() ? "" : ", ") + d;
  return out;
}

}  // namespace

SharedLibrary SharedLibrary::open(const std::string& name, const std::vector<std::string>& dirs) {
  return open_from(name, dirs, join_dirs(dirs));
}

SharedLibrary SharedLibrary::open_from(const std::string& name, const std::vector<std::string>& dirs,
                                       const std::string& where) {
  SharedLibrary lib;
  // RTLD_NODELETE: dlclose never unloads (cuBLAS and cuDNN keep threads and
  // atexit handlers that must not outlive their code).
  const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
  if (dirs.empty()) {
    lib.path_ = name;
    lib.handle_ = ::dlopen(name.c_str(), flags);
    if (!lib.handle_) {
      const char* why = ::dlerror();
      lib.error_ = "cannot load " + name + ": " + (why ? why : "unknown error");
    }
    return lib;
  }
  std::string tried;
  for (const std::string& d : dirs) {
    const std::string path = d + "/" + name;
    lib.handle_ = ::dlopen(path.c_str(), flags);
    if (lib.handle_) {
      lib.path_ = path;
      return lib;
    }
    const char* why = ::dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why ? why : path + ": unknown error");
  }
  lib.path_ = name;
  lib.error_ = "cannot load " + name + " from " + where + ": " + tried;
  return lib;
}

SharedLibrary SharedLibrary::open_cuda(const std::string& name) { return open_cuda(name, cuda_toolkit_dirs()); }

SharedLibrary SharedLibrary::open_cuda(const std::string& name, const std::vector<std::string>& toolkit_dirs) {
  // The variable is why only its directories are searched: the error says so.
  if (const auto dirs = cuda_library_dirs(); !dirs.empty())
    return open_from(name, dirs, "NODEPROBE_CUDA_LIBRARY_PATH=" + join_dirs(dirs));
  SharedLibrary lib = open(name);
  if (lib.ok() || toolkit_dirs.empty()) return lib;
  SharedLibrary in_toolkit = open(name, toolkit_dirs);
  if (in_toolkit.ok()) return in_toolkit;
  // The loader's reason, and where else it was looked for (the directories' own
  // "No such file" lines add nothing).
  lib.error_ += "; nor in " + join_dirs(toolkit_dirs);
  return lib;
}

std::vector<std::string> cuda_toolkit_dirs() {
#if defined(__aarch64__)
  const char* target = "/usr/local/cuda/targets/sbsa-linux/lib";
#else
  const char* target = "/usr/local/cuda/targets/x86_64-linux/lib";
#endif
  return {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", target};
}

void* SharedLibrary::symbol(const char* name) const {
  return handle_ ? ::dlsym(handle_, name) : nullptr;
}

std::vector<std::string> cuda_library_dirs() {
  std::vector<std::string> dirs;
  const char* v = std::getenv("NODEPROBE_CUDA_LIBRARY_PATH");
  if (!v) return dirs;
  std::string s(v);
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = s.find(':', start);
    const std::string d = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!d.empty()) dirs.push_back(d);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return dirs;
}

}  // namespace nodeprobe
