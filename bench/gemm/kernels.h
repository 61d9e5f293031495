#pragma once
/// Launchers of the STREAM-style bandwidth kernels (kernels.cu, built by nvcc
/// when it is available; NODEPROBE_HAVE_CUDA_KERNELS is then defined).

#include <cuda_runtime_api.h>

#include <cstddef>

namespace nodeprobe::gemm::kernels {

/// dst[i] = src[i] for n float4 elements.
cudaError_t copy(float4* dst, const float4* src, std::size_t n, cudaStream_t stream);
/// a[i] = b[i] + scalar * c[i] for n float4 elements (STREAM triad).
cudaError_t triad(float4* a, const float4* b, const float4* c, float scalar, std::size_t n,
                  cudaStream_t stream);

}  // namespace nodeprobe::gemm::kernels
