#pragma once
// CPU stand-ins for the cuBLASLt and cuBLAS calls of the GEMM backend, on top
// of FakeCudaRuntime: every kernel is queued on the handle's (or the call's)
// stream and computes in column-major order exactly as the cuBLAS
// documentation defines the call, so the backend's own code (layouts,
// transposes, leading dimensions, the training loop's algebra, and the order
// of uploads and kernels) runs for real without a GPU. FP32 data only:
// other types answer CUBLAS_STATUS_NOT_SUPPORTED.

#include "cuda_common.h"
#include "fake_cuda_runtime.h"

namespace nodeprobe::gemm::testing {

class FakeCublas {
 public:
  explicit FakeCublas(nodeprobe::testing::FakeCudaRuntime& cuda);
  ~FakeCublas();
  FakeCublas(const FakeCublas&) = delete;
  FakeCublas& operator=(const FakeCublas&) = delete;

  /// The tables for CudaBackend.
  const cuda::Libraries& libraries() const { return libs_; }
  int matmuls = 0;

  static FakeCublas& current();

 private:
  cuda::CublasLt lt_;
  cuda::Cublas blas_;
  cuda::Libraries libs_;
};

}  // namespace nodeprobe::gemm::testing
