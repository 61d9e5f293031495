// Factories for backends this build does not have: the target is skipped
// with the reason, never faked.
#include "backend.h"
#include "driver.h"

namespace nodeprobe::allreduce {

#ifndef NODEPROBE_ALLREDUCE_HAVE_FABRIC
std::unique_ptr<Backend> make_fabric_backend(const BackendContext&, const std::string&) {
  throw BackendUnavailable("this build has no libfabric (configure with libfabric to get the fabric backend)");
}
std::string libfabric_version() { return {}; }
#endif

#ifndef NODEPROBE_ALLREDUCE_HAVE_NCCL
std::unique_ptr<Backend> make_nccl_backend(const BackendContext&, const std::string&) {
  throw BackendUnavailable("this build has no NCCL/CUDA (configure with NCCL_HOME to get the nccl backend)");
}
std::string nccl_library_version() { return {}; }
#endif

}  // namespace nodeprobe::allreduce
