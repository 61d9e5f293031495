#pragma once
/// CUDA-side helpers of the backend: one check macro per API family (throwing
/// nodeprobe::ApiError with the code's name and text), RAII owners for device
/// and pinned memory, events and streams. Included only by cuda_*.cpp.

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "nodeprobe/error.h"

namespace nodeprobe::gemm::cuda {

[[noreturn]] void throw_cuda(cudaError_t rc, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t rc, const char* call, const char* file, int line);
std::string cublas_status_name(cublasStatus_t rc);

}  // namespace nodeprobe::gemm::cuda

/// CUDA runtime calls. Clears the sticky "last error" the failing call left.
#define NP_CUDA_CHECK(call)                                                       \
  do {                                                                            \
    const cudaError_t np_rc_ = (call);                                            \
    if (np_rc_ != cudaSuccess) {                                                  \
      (void)cudaGetLastError();                                                   \
      ::nodeprobe::gemm::cuda::throw_cuda(np_rc_, #call, __FILE__, __LINE__);     \
    }                                                                             \
  } while (0)

/// Cleanup paths: log and carry on.
#define NP_CUDA_CHECK_NOTHROW(call)                                               \
  do {                                                                            \
    const cudaError_t np_rc_ = (call);                                            \
    if (np_rc_ != cudaSuccess)                                                    \
      ::nodeprobe::report_cleanup_failure(std::string(#call) + ": " +             \
                                          cudaGetErrorName(np_rc_));              \
  } while (0)

/// cuBLAS and cuBLASLt calls (both return cublasStatus_t).
#define NP_CUBLAS_CHECK(call)                                                     \
  do {                                                                            \
    const cublasStatus_t np_rc_ = (call);                                         \
    if (np_rc_ != CUBLAS_STATUS_SUCCESS)                                          \
      ::nodeprobe::gemm::cuda::throw_cublas(np_rc_, #call, __FILE__, __LINE__);   \
  } while (0)

namespace nodeprobe::gemm::cuda {

/// Makes `dev` current for the scope, restoring the previous device after.
class DeviceScope {
 public:
  explicit DeviceScope(int dev);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int prev_ = 0;
};

/// cudaMalloc'ed bytes on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  std::size_t size() const { return n_; }
  template <class T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

/// cudaMallocHost'ed (page-locked) bytes.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// `n` (start, stop) event pairs for per-repetition timing.
class EventPairs {
 public:
  explicit EventPairs(std::size_t n);
  ~EventPairs();
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;
  void start(std::size_t i, cudaStream_t s);
  void stop(std::size_t i, cudaStream_t s);
  /// Waits for the last stop event, then returns every pair's seconds.
  std::vector<double> seconds();

 private:
  std::vector<cudaEvent_t> start_, stop_;
};

/// Copies `bytes` from host to a new device buffer.
DeviceBuffer upload(const void* host, std::size_t bytes);

}  // namespace nodeprobe::gemm::cuda
