#pragma once
/// CUDA-side helpers of the backend: the cuBLASLt and cuBLAS function tables
/// (loaded at run time, so a node without cuBLAS still gets a report naming
/// it), the cuBLAS check macro, RAII owners for device and pinned memory,
/// events and streams. Included only by cuda_*.cpp and the backend tests.

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>
#include <string>
#include <vector>

#include "nodeprobe/cuda/runtime.h"
#include "nodeprobe/error.h"

namespace nodeprobe::gemm::cuda {

using nodeprobe::cuda::Runtime;

#define NP_CUBLASLT_FUNCS(X)                                                          \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion)                          \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) \
  X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)                        \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)                \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic)           \
  X(cublasLtMatmul) X(cublasLtMatmulAlgoConfigGetAttribute)

#define NP_CUBLAS_FUNCS(X)                                                            \
  X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasGetMathMode)             \
  X(cublasSetMathMode) X(cublasSgemm) X(cublasSger) X(cublasSgeam) X(cublasSnrm2)      \
  X(cublasSgemv) X(cublasSaxpy)

struct CublasLt {
  NP_CUBLASLT_FUNCS(NP_DECLARE_API_MEMBER)
};
struct Cublas {
  NP_CUBLAS_FUNCS(NP_DECLARE_API_MEMBER)
};

/// What the backend calls. `lt` and `blas` are null when cuBLAS could not be
/// loaded; `blas_unavailable` then says why ("cannot load libcublasLt.so.13: ...").
struct Libraries {
  const Runtime* rt = nullptr;
  const CublasLt* lt = nullptr;
  const Cublas* blas = nullptr;
  std::string blas_unavailable;
  std::string lt_path, blas_path;  ///< where they were loaded from
};

/// The linked runtime plus cuBLASLt / cuBLAS of this build's major version,
/// loaded once (from $NODEPROBE_CUDA_LIBRARY_PATH when set).
const Libraries& system_libraries();

/// "CUBLAS_STATUS_NOT_SUPPORTED" (a local table: no cuBLAS call needed).
std::string cublas_status_name(cublasStatus_t rc);
[[noreturn]] void throw_cublas(cublasStatus_t rc, const char* call, const char* file, int line);

}  // namespace nodeprobe::gemm::cuda

/// cuBLAS and cuBLASLt calls through a table: NP_CUBLAS_CHECK(lt, cublasLtCreate(&h)).
#define NP_CUBLAS_CHECK(table, call)                                              \
  do {                                                                            \
    const cublasStatus_t np_rc_ = (table).call;                                   \
    if (np_rc_ != CUBLAS_STATUS_SUCCESS)                                          \
      ::nodeprobe::gemm::cuda::throw_cublas(np_rc_, #call, __FILE__, __LINE__);   \
  } while (0)

namespace nodeprobe::gemm::cuda {

/// Makes `dev` current for the scope, restoring the previous device after.
class DeviceScope {
 public:
  DeviceScope(const Runtime& rt, int dev);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  const Runtime& rt_;
  int prev_ = 0;
};

/// cudaMalloc'ed bytes on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer(const Runtime& rt, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : rt_(o.rt_), p_(o.p_), n_(o.n_) { o.p_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  std::size_t size() const { return n_; }
  template <class T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  const Runtime* rt_;
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

/// cudaMallocHost'ed (page-locked) bytes.
class PinnedBuffer {
 public:
  PinnedBuffer(const Runtime& rt, std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }

 private:
  const Runtime& rt_;
  void* p_ = nullptr;
};

/// `n` (start, stop) event pairs for per-repetition timing.
class EventPairs {
 public:
  EventPairs(const Runtime& rt, std::size_t n);
  ~EventPairs();
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;
  void start(std::size_t i, cudaStream_t s);
  void stop(std::size_t i, cudaStream_t s);
  /// Whether the last stop event is still pending (the GPU is busy with the reps).
  bool busy() const;
  /// Waits for the last stop event, then returns every pair's seconds.
  std::vector<double> seconds();

 private:
  const Runtime& rt_;
  std::vector<cudaEvent_t> start_, stop_;
};

/// A new device buffer holding `bytes` from `host`, copied on `stream`: work
/// queued on that stream afterwards sees the data (a plain cudaMemcpy runs on
/// the legacy stream, which a non-blocking stream does not wait for).
DeviceBuffer upload(const Runtime& rt, const void* host, std::size_t bytes, cudaStream_t stream);

/// `bytes` of device memory copied to the host on `stream`, waiting for it.
std::vector<std::uint8_t> download(const Runtime& rt, const DeviceBuffer& d, cudaStream_t stream);

}  // namespace nodeprobe::gemm::cuda
