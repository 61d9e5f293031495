#pragma once
/// The narrow seam between the probe's logic and the GPU. The CUDA backend
/// (cuda_backend.cpp, built when the CUDA toolkit is found) implements it with
/// the CUDA runtime, cuBLASLt, cuBLAS and cuDNN; unit tests use a fake. All
/// types here are host-only: no vendor header is needed to include this file.
/// Failures throw nodeprobe::ApiError (api "cuda", "cublas", "cudnn").

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cpu_reference.h"
#include "diagnosis.h"
#include "numeric.h"

namespace nodeprobe::gemm {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string uuid;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML prints it
  std::string pci_bus_id;  ///< "0000:00:1e.0"
  int cc_major = 0, cc_minor = 0;
  std::uint64_t memory_bytes = 0;
  int sm_count = 0;
};

/// A timed operation: one duration per timed repetition (CUDA events).
struct Timing {
  std::vector<double> seconds;
  std::string algo;           ///< what the library chose ("cublasLt algo 21 tile 20 ...")
  std::size_t workspace = 0;  ///< bytes of workspace used
};

struct GemmRequest {
  Precision precision = Precision::kFp32;
  int m = 0, n = 0, k = 0;  ///< C (m x n) = A^T (m x k) B (k x n), see gemm_reference
  int warmup = 3, reps = 10;
};

enum class ConvPass { kForward, kBackwardData, kBackwardFilter };
std::string_view to_string(ConvPass p);

/// Outputs of one small convolution in all three passes, for verification.
struct ConvOutputs {
  std::vector<float> y, dx, dw;
  std::string algo_forward, algo_backward_data, algo_backward_filter;
};

enum class DeviceCopy { kMemcpy, kCopyKernel, kTriadKernel };
std::string_view to_string(DeviceCopy c);

/// Bytes moved per repetition (read + write, as STREAM counts them).
struct Bandwidth {
  Timing timing;
  std::size_t bytes = 0;
};

/// Runs while timed work is queued on the GPU; `still_busy()` says whether it
/// is still running. The probe samples clocks, power and links through it, so
/// the samples cover the timed window.
using BusyHook = std::function<void(const std::function<bool()>& still_busy)>;

/// One CUDA library as this run found it.
struct LibraryState {
  std::string name;     ///< "cublaslt", "cublas", "cudnn", "cuda_build"
  std::string version;  ///< "13.1.0"; "" when not loaded
  std::string path;     ///< what was loaded
  std::string error;    ///< why it could not be loaded ("" when loaded)
};

struct TrainRun {
  std::vector<double> losses;  ///< before each step and after the last (steps + 1)
  double seconds = 0;          ///< all steps, GPU time
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  /// The runtime's view before any device is touched (never throws).
  virtual CudaEnv query_env() = 0;
  /// The CUDA libraries: loaded (with version) or why not.
  virtual std::vector<LibraryState> libraries() = 0;
  /// "" when cuBLAS / cuBLASLt are loaded (GEMM and training need them), else why not.
  virtual std::string blas_unavailable_reason() = 0;
  virtual DeviceInfo device_info(int dev) = 0;
  /// "" when the device and this build can run precision `p`, else why not.
  virtual std::string unsupported_reason(int dev, Precision p) = 0;
  /// Times C = A^T B with device-format inputs (input_bytes(p) per element,
  /// at least k*m and k*n elements). `while_busy` runs while the timed
  /// repetitions are queued on the GPU (to sample clocks, power and links).
  virtual Timing time_gemm(int dev, const GemmRequest& req, const std::vector<std::uint8_t>& a,
                           const std::vector<std::uint8_t>& b, const BusyHook& while_busy) = 0;
  /// One GEMM; returns C in device format (output_bytes(p) per element).
  virtual std::vector<std::uint8_t> run_gemm(int dev, Precision p, int m, int n, int k,
                                             const std::vector<std::uint8_t>& a,
                                             const std::vector<std::uint8_t>& b) = 0;
  /// "" when cuDNN can be used (in this build and loaded on this node), else why not.
  virtual std::string conv_unavailable_reason() = 0;
  /// FP32 runs NCHW without TF32; FP16/BF16 run NHWC on tensor cores.
  virtual Timing time_conv(int dev, const ConvShape& shape, Precision p, ConvPass pass, int warmup,
                           int reps) = 0;
  /// Inputs are floats already rounded to `p`, in the layout `p` runs in.
  virtual ConvOutputs run_conv(int dev, const ConvShape& shape, Precision p,
                               const std::vector<float>& x, const std::vector<float>& w,
                               const std::vector<float>& dy) = 0;
  /// "" when the kernel exists in this build (copy/triad need nvcc), else why not.
  virtual std::string copy_unavailable_reason(DeviceCopy c) = 0;
  virtual Bandwidth device_bandwidth(int dev, DeviceCopy c, std::size_t bytes, int warmup,
                                     int reps) = 0;
  virtual Bandwidth host_transfer(int dev, bool to_device, bool pinned, std::size_t bytes,
                                  int warmup, int reps, const BusyHook& while_busy) = 0;
  virtual TrainRun train(int dev, const TrainConfig& cfg, const TrainData& data) = 0;
  /// Whether `src` can access `dst` directly (NVLink or PCIe P2P).
  virtual bool peer_access(int src, int dst) = 0;
  /// cudaMemcpyPeer from src to dst, timed on the source device.
  virtual Bandwidth peer_copy(int src, int dst, std::size_t bytes, int warmup, int reps) = 0;
};

/// The CUDA backend, or (in a build without CUDA) one whose query_env() says so.
std::unique_ptr<GpuBackend> make_cuda_backend();

}  // namespace nodeprobe::gemm
