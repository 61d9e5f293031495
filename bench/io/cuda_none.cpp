// Built without the CUDA toolkit: staging falls back to mlock and says why.
#include "staging.h"

namespace nodeprobe::io::cuda {

std::string unusable(std::string* /*name*/) { return "this build has no CUDA (built without the CUDA toolkit)"; }
void* host_alloc(std::size_t, std::string* why) {
  *why = unusable(nullptr);
  return nullptr;
}
void host_free(void*) {}
void* copier_create(std::size_t, std::string* why) {
  *why = unusable(nullptr);
  return nullptr;
}
void copier_copy(void*, const void*, std::size_t, std::size_t) {}
void copier_sync(void*) {}
void copier_destroy(void*) {}

}  // namespace nodeprobe::io::cuda
