// STREAM-style device memory kernels: grid-stride loops over float4 so every
// access is a 16-byte coalesced load or store.
#include "kernels.h"

namespace nodeprobe::gemm::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void copy_kernel(float4* __restrict__ dst, const float4* __restrict__ src, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                             const float4* __restrict__ c, float s, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b > 65535u * 32u ? 65535u * 32u : (b == 0 ? 1 : b));
}

}  // namespace

cudaError_t copy(float4* dst, const float4* src, std::size_t n, cudaStream_t stream) {
  copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, src, n);
  return cudaGetLastError();
}

cudaError_t triad(float4* a, const float4* b, const float4* c, float scalar, std::size_t n,
                  cudaStream_t stream) {
  triad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, c, scalar, n);
  return cudaGetLastError();
}

}  // namespace nodeprobe::gemm::kernels
