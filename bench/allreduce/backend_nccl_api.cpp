#include "backend_nccl_api.h"

#include "nodeprobe/shared_library.h"

namespace nodeprobe::allreduce {

const NcclApi& system_nccl_api() {
  static const NcclApi api = [] {
    static NcclLibrary lib;
    NcclApi a;
    a.rt = &cuda::linked_runtime();
    const std::string soname = "libnccl.so." + std::to_string(NCCL_MAJOR);
    const SharedLibrary so = SharedLibrary::open_cuda(soname);
    if (!so.ok()) {
      a.unavailable = so.error() + " (install NCCL " + std::to_string(NCCL_MAJOR) +
                      ", e.g. the libnccl2 package, or point NODEPROBE_CUDA_LIBRARY_PATH at its lib directory)";
      return a;
    }
    std::string missing;
#define NP_BIND_NCCL(fn) NP_BIND_SYMBOL(lib, so, missing, fn);
    NP_NCCL_FUNCS(NP_BIND_NCCL)
#undef NP_BIND_NCCL
    if (!missing.empty()) {
      a.unavailable = so.path() + " lacks " + missing + ": NCCL older than 2.14, which this build needs";
      return a;
    }
    a.nccl = &lib;
    a.path = so.path();
    return a;
  }();
  return api;
}

}  // namespace nodeprobe::allreduce
