#pragma once
/// The CUDA implementation of GpuBackend. Methods are spread over
/// cuda_backend.cpp (environment, devices, memory, P2P), cuda_gemm.cpp
/// (cuBLASLt), cuda_conv.cpp (cuDNN) and cuda_train.cpp (cuBLAS training loop).
/// Every CUDA, cuBLAS and cuBLASLt call goes through the tables in
/// `Libraries`, so the backend runs against CPU fakes in unit tests.

#include <map>
#include <memory>

#include "cuda_common.h"
#include "gpu_backend.h"

namespace nodeprobe::gemm::cuda {

/// Library handles of one device, created on first use.
struct DeviceHandles {
  cublasLtHandle_t lt = nullptr;
  cublasHandle_t blas = nullptr;
  void* cudnn = nullptr;  ///< cudnnHandle_t (kept opaque: cuDNN is optional)
  cudaStream_t stream = nullptr;
};

class CudaBackend final : public GpuBackend {
 public:
  explicit CudaBackend(const Libraries& libs) : libs_(libs), rt_(*libs.rt) {}
  ~CudaBackend() override;
  CudaEnv query_env() override;
  std::vector<LibraryState> libraries() override;
  std::string blas_unavailable_reason() override { return libs_.blas_unavailable; }
  DeviceInfo device_info(int dev) override;
  std::string unsupported_reason(int dev, Precision p) override;
  Timing time_gemm(int dev, const GemmRequest& req, const std::vector<std::uint8_t>& a,
                   const std::vector<std::uint8_t>& b, const BusyHook& while_busy) override;
  std::vector<std::uint8_t> run_gemm(int dev, Precision p, int m, int n, int k,
                                     const std::vector<std::uint8_t>& a,
                                     const std::vector<std::uint8_t>& b) override;
  std::string conv_unavailable_reason() override;
  Timing time_conv(int dev, const ConvShape& shape, Precision p, ConvPass pass, int warmup,
                   int reps) override;
  ConvOutputs run_conv(int dev, const ConvShape& shape, Precision p, const std::vector<float>& x,
                       const std::vector<float>& w, const std::vector<float>& dy) override;
  std::string copy_unavailable_reason(DeviceCopy c) override;
  Bandwidth device_bandwidth(int dev, DeviceCopy c, std::size_t bytes, int warmup, int reps) override;
  Bandwidth host_transfer(int dev, bool to_device, bool pinned, std::size_t bytes, int warmup,
                          int reps, const BusyHook& while_busy) override;
  TrainRun train(int dev, const TrainConfig& cfg, const TrainData& data) override;
  bool peer_access(int src, int dst) override;
  Bandwidth peer_copy(int src, int dst, std::size_t bytes, int warmup, int reps) override;

 private:
  /// The work stream of `dev` (the caller has made it current).
  cudaStream_t stream(int dev);
  /// cuBLASLt / cuBLAS handles of `dev`, bound to its stream; throws when
  /// cuBLAS could not be loaded.
  cublasLtHandle_t lt_handle(int dev);
  cublasHandle_t blas_handle(int dev);
  const CublasLt& lt() const;
  const Cublas& blas() const;
  void* cudnn_handle(int dev);            // cuda_conv.cpp
  static void destroy_cudnn(void* h);     // cuda_conv.cpp
  const Libraries& libs_;
  const Runtime& rt_;
  std::map<int, DeviceHandles> handles_;
  /// Random host bytes reused to fill large device buffers (conv timing).
  std::vector<std::uint8_t> noise_;
  const std::vector<std::uint8_t>& noise(std::size_t bytes);
};

/// Runs `while_busy` (when set) for as long as `events`' last stop is pending.
void sample_while_busy(const BusyHook& while_busy, const EventPairs& events);

}  // namespace nodeprobe::gemm::cuda

namespace nodeprobe::gemm::cuda {
/// cuDNN as loaded on this node: its version ("9.1.0"), or why it is not
/// usable (a build without cuDNN, the library missing) (cuda_conv.cpp).
LibraryState cudnn_state();
}  // namespace nodeprobe::gemm::cuda
