#pragma once
/// Libraries loaded at run time (dlopen) instead of linked: NVML, cuBLAS,
/// cuBLASLt, cuDNN, NCCL. A node that lacks one still starts the probe, and
/// the report names what is missing and where it was looked for.

#include <string>
#include <vector>

namespace nodeprobe {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  /// Opens `name` (a soname such as "libcublas.so.13", or a path). With
  /// `dirs`, only those directories are tried, in order; without, the dynamic
  /// loader's own search (LD_LIBRARY_PATH, RUNPATH, ld.so.cache). Never throws:
  /// check ok() / error(). The library stays loaded for the life of the
  /// process (CUDA libraries do not survive being unloaded and reloaded).
  static SharedLibrary open(const std::string& name, const std::vector<std::string>& dirs = {});
  /// A CUDA library (cuBLAS, cuDNN, NCCL): from $NODEPROBE_CUDA_LIBRARY_PATH
  /// alone when it is set; else the loader's search, then `toolkit_dirs`
  /// (cuda_toolkit_dirs()): a Slurm health check, cron or a systemd unit runs
  /// without the LD_LIBRARY_PATH a login shell sets for /usr/local/cuda.
  static SharedLibrary open_cuda(const std::string& name, const std::vector<std::string>& toolkit_dirs);
  static SharedLibrary open_cuda(const std::string& name);

  bool ok() const { return handle_ != nullptr; }
  /// "cannot load libcudnn.so.9: <dlerror>" when !ok(); with directories,
  /// "cannot load NAME from DIR, DIR: <dlerror per directory>".
  const std::string& error() const { return error_; }
  /// What was opened: the path when found in `dirs`, else the name.
  const std::string& path() const { return path_; }
  /// The symbol's address, or nullptr.
  void* symbol(const char* name) const;

 private:
  /// open(), naming the directories `where` in its error.
  static SharedLibrary open_from(const std::string& name, const std::vector<std::string>& dirs,
                                 const std::string& where);
  void* handle_ = nullptr;
  std::string error_, path_;
};

/// Directories of $NODEPROBE_CUDA_LIBRARY_PATH (colon-separated; empty when
/// unset): where CUDA libraries are looked for instead of the loader's search
/// (a pip wheel's nvidia/*/lib, a conda environment, a test's fakes).
std::vector<std::string> cuda_library_dirs();

/// Where the CUDA toolkit keeps its libraries when no search path names it:
/// /usr/local/cuda/lib64, /usr/local/cuda/lib and the toolkit's
/// targets/<arch>/lib (x86_64-linux, sbsa-linux).
std::vector<std::string> cuda_toolkit_dirs();

}  // namespace nodeprobe

#define NP_STRINGIFY_(x) #x
#define NP_STRINGIFY(x) NP_STRINGIFY_(x)
/// For an X-macro list of API functions: sets `table.fn` from `lib`, or records
/// the first missing name in `missing`. Names the vendor headers #define to a
/// versioned symbol (cublasCreate -> cublasCreate_v2) bind to that symbol.
#define NP_BIND_SYMBOL(table, lib, missing, fn)                                    \
  do {                                                                            \
    (table).fn = reinterpret_cast<decltype((table).fn)>((lib).symbol(NP_STRINGIFY(fn))); \
    if (!(table).fn && (missing).empty()) (missing) = NP_STRINGIFY(fn);           \
  } while (0)
