// CUDA side of the staging buffers: page-locked host memory and real
// host-to-device copies. Host API only (no kernels, no nvcc). Every failure
// at run time (no driver, no device, driver too old, the NVSwitch fabric not
// up) becomes a reason string with the shared explanation
// (nodeprobe/cuda_errors.h), so the loader falls back to mlock and says why.
#include "io_format.h"
#include "nodeprobe/cuda/runtime.h"
#include "staging.h"

namespace nodeprobe::io::cuda {
namespace {

const nodeprobe::cuda::Runtime& rt() { return nodeprobe::cuda::linked_runtime(); }

std::string describe(const char* call, cudaError_t e) { return nodeprobe::cuda::describe(rt(), e, call); }

struct Copier {
  void* dev = nullptr;
  cudaStream_t stream = nullptr;
  std::size_t bytes = 0;
};

}  // namespace

std::string unusable(std::string* name) {
  int n = 0;
  const cudaError_t e = rt().cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    std::string why = describe("cudaGetDeviceCount", e);
    (void)rt().cudaGetLastError();
    return why;
  }
  if (n == 0) return "no CUDA device visible (CUDA_VISIBLE_DEVICES?)";
  cudaDeviceProp prop{};
  if (const cudaError_t pe = rt().cudaGetDeviceProperties(&prop, 0); pe != cudaSuccess)
    return describe("cudaGetDeviceProperties", pe);
  if (name) *name = prop.name;
  return {};
}

void* host_alloc(std::size_t n, std::string* why) {
  void* p = nullptr;
  const cudaError_t e = rt().cudaHostAlloc(&p, n, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    *why = describe("cudaHostAlloc", e);
    (void)rt().cudaGetLastError();
    return nullptr;
  }
  return p;
}

void host_free(void* p) {
  if (p) NP_CUDA_CHECK_NOTHROW(rt(), cudaFreeHost(p));
}

void* copier_create(std::size_t device_bytes, std::string* why) {
  auto* c = new Copier;
  c->bytes = device_bytes;
  cudaError_t e = rt().cudaMalloc(&c->dev, device_bytes);
  if (e == cudaSuccess) e = rt().cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    *why = describe("cudaMalloc/cudaStreamCreate", e);
    if (c->dev) (void)rt().cudaFree(c->dev);
    delete c;
    return nullptr;
  }
  return c;
}

void copier_copy(void* cp, const void* src, std::size_t n, std::size_t offset) {
  auto* c = static_cast<Copier*>(cp);
  if (offset + n > c->bytes) throw InputError("internal: H2D copy beyond the device batch buffer");
  NP_CUDA_CHECK(rt(), cudaMemcpyAsync(static_cast<char*>(c->dev) + offset, src, n, cudaMemcpyHostToDevice,
                                      c->stream));
}

void copier_sync(void* cp) { NP_CUDA_CHECK(rt(), cudaStreamSynchronize(static_cast<Copier*>(cp)->stream)); }

void copier_destroy(void* cp) {
  auto* c = static_cast<Copier*>(cp);
  if (c->stream) NP_CUDA_CHECK_NOTHROW(rt(), cudaStreamDestroy(c->stream));
  if (c->dev) NP_CUDA_CHECK_NOTHROW(rt(), cudaFree(c->dev));
  delete c;
}

}  // namespace nodeprobe::io::cuda
