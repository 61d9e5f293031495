// CUDA side of the staging buffers: page-locked host memory and real
// host-to-device copies. Host API only (no kernels, no nvcc). Every failure
// at run time (no driver, no device, driver too old) becomes a reason string,
// so the loader falls back to mlock and says why.
#include <cuda_runtime_api.h>

#include "io_format.h"
#include "staging.h"

#define NP_CHECK_CUDA(call)                                                                     \
  do {                                                                                          \
    const cudaError_t np_e_ = (call);                                                           \
    if (np_e_ != cudaSuccess)                                                                   \
      ::nodeprobe::throw_api_error("cuda", static_cast<long long>(np_e_), cudaGetErrorName(np_e_), \
                                   cudaGetErrorString(np_e_), #call, __FILE__, __LINE__);      \
  } while (0)

namespace nodeprobe::io::cuda {
namespace {

std::string describe(const char* call, cudaError_t e) {
  return std::string(call) + ": " + cudaGetErrorName(e) + " (" + std::to_string(static_cast<int>(e)) +
         "): " + cudaGetErrorString(e);
}

struct Copier {
  void* dev = nullptr;
  cudaStream_t stream = nullptr;
  std::size_t bytes = 0;
};

}  // namespace

std::string unusable(std::string* name) {
  int driver = 0;
  const cudaError_t dv = cudaDriverGetVersion(&driver);
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    std::string why = describe("cudaGetDeviceCount", e);
    if (dv == cudaSuccess && driver == 0) why = "no NVIDIA driver loaded (" + why + ")";
    (void)cudaGetLastError();
    return why;
  }
  if (n == 0) return "no CUDA device visible (CUDA_VISIBLE_DEVICES?)";
  cudaDeviceProp prop{};
  if (const cudaError_t pe = cudaGetDeviceProperties(&prop, 0); pe != cudaSuccess)
    return describe("cudaGetDeviceProperties", pe);
  if (name) *name = prop.name;
  return {};
}

void* host_alloc(std::size_t n, std::string* why) {
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, n, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    *why = describe("cudaHostAlloc", e);
    (void)cudaGetLastError();
    return nullptr;
  }
  return p;
}

void host_free(void* p) {
  if (p && cudaFreeHost(p) != cudaSuccess) report_cleanup_failure("cudaFreeHost failed");
}

void* copier_create(std::size_t device_bytes, std::string* why) {
  auto* c = new Copier;
  c->bytes = device_bytes;
  cudaError_t e = cudaMalloc(&c->dev, device_bytes);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    *why = describe("cudaMalloc/cudaStreamCreate", e);
    if (c->dev) (void)cudaFree(c->dev);
    delete c;
    return nullptr;
  }
  return c;
}

void copier_copy(void* cp, const void* src, std::size_t n, std::size_t offset) {
  auto* c = static_cast<Copier*>(cp);
  if (offset + n > c->bytes) throw InputError("internal: H2D copy beyond the device batch buffer");
  NP_CHECK_CUDA(cudaMemcpyAsync(static_cast<char*>(c->dev) + offset, src, n, cudaMemcpyHostToDevice,
                                c->stream));
}

void copier_sync(void* cp) { NP_CHECK_CUDA(cudaStreamSynchronize(static_cast<Copier*>(cp)->stream)); }

void copier_destroy(void* cp) {
  auto* c = static_cast<Copier*>(cp);
  if (c->stream && cudaStreamDestroy(c->stream) != cudaSuccess) report_cleanup_failure("cudaStreamDestroy failed");
  if (c->dev && cudaFree(c->dev) != cudaSuccess) report_cleanup_failure("cudaFree failed");
  delete c;
}

}  // namespace nodeprobe::io::cuda
