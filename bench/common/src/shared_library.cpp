#include "nodeprobe/shared_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace nodeprobe {

SharedLibrary SharedLibrary::open(const std::string& name, const std::vector<std::string>& dirs) {
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
  std::string where = dirs.front();
  for (std::size_t i = 1; i < dirs.size(); ++i) where += ", " + dirs[i];
  lib.error_ = "cannot load " + name + " from " + where + ": " + tried;
  return lib;
}

SharedLibrary SharedLibrary::open_cuda(const std::string& name) { return open_cuda(name, cuda_toolkit_dirs()); }

SharedLibrary SharedLibrary::open_cuda(const std::string& name, const std::vector<std::string>& toolkit_dirs) {
  if (const auto dirs = cuda_library_dirs(); !dirs.empty()) {
    SharedLibrary lib = open(name, dirs);
    // "cannot load NAME from NODEPROBE_CUDA_LIBRARY_PATH=DIR[, DIR]: ...": the variable is why only they were searched.
    if (const std::string head = "cannot load " + name + " from "; !lib.ok() && lib.error_.rfind(head, 0) == 0)
      lib.error_.insert(head.size(), "NODEPROBE_CUDA_LIBRARY_PATH=");
    return lib;
  }
  SharedLibrary lib = open(name);
  if (lib.ok() || toolkit_dirs.empty()) return lib;
  SharedLibrary in_toolkit = open(name, toolkit_dirs);
  if (in_toolkit.ok()) return in_toolkit;
  // The loader's reason, and where else it was looked for (the directories' own
  // "No such file" lines add nothing).
  lib.error_ += "; nor in " + toolkit_dirs.front();
  for (std::size_t i = 1; i < toolkit_dirs.size(); ++i) lib.error_ += ", " + toolkit_dirs[i];
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
