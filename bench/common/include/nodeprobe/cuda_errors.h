#pragma once
/// What a CUDA runtime error means on a GPU node and what to do about it: one
/// explanation for every probe that touches CUDA (nodeprobe-gemm, the nccl
/// backend of nodeprobe-allreduce, nodeprobe-io's pinned staging). Host-only:
/// codes are plain ints (checked against <cuda_runtime_api.h> by
/// static_asserts in bench/common/cuda/runtime.cpp).

#include <string>

namespace nodeprobe {

/// cudaError_t values the explanations distinguish.
namespace cuda_rc {
inline constexpr int kSuccess = 0;
inline constexpr int kMemoryAllocation = 2;
inline constexpr int kInitializationError = 3;
inline constexpr int kStubLibrary = 34;
inline constexpr int kInsufficientDriver = 35;
inline constexpr int kCallRequiresNewerDriver = 36;
inline constexpr int kDevicesUnavailable = 46;
inline constexpr int kNoDevice = 100;
inline constexpr int kNoKernelImageForDevice = 209;
inline constexpr int kEccUncorrectable = 214;
inline constexpr int kIllegalAddress = 700;
inline constexpr int kLaunchFailure = 719;
inline constexpr int kSystemNotReady = 802;
inline constexpr int kSystemDriverMismatch = 803;
inline constexpr int kCompatNotSupportedOnDevice = 804;
}  // namespace cuda_rc

/// The node-level meaning of one CUDA error; empty fields when the code has
/// no advice beyond CUDA's own text.
struct CudaErrorHint {
  std::string summary;  ///< "the NVSwitch fabric is not initialised (...)"
  std::string fix;      ///< what to run or change
  std::string finding;  ///< finding id from the vocabulary
};
/// `driver_version` is cudaDriverGetVersion's answer when known (0: no
/// driver library loaded, which the runtime also reports as "insufficient").
CudaErrorHint cuda_error_hint(int code, int driver_version = -1);

/// One line for a failed CUDA call: "cudaGetDeviceCount: cudaErrorSystemNotReady
/// (802): system not yet initialized: the NVSwitch fabric ...; fix: ...".
/// `name` and `text` are cudaGetErrorName / cudaGetErrorString of `code`.
std::string explain_cuda_error(const std::string& call, int code, const std::string& name,
                               const std::string& text, int driver_version = -1);

/// How to check and repair the NVIDIA kernel module (shared by the hints and
/// nodeprobe-gemm's diagnosis).
std::string nvidia_module_fix();

/// "" when a build whose CUDA runtime is `runtime_version` (12040 = 12.4) can
/// run its libraries on a GPU of compute capability `cc_major`.`cc_minor`,
/// else the reason (CUDA 13 dropped Maxwell, Pascal and Volta: compute capability < 7.5).
std::string cuda_build_support(int runtime_version, int cc_major, int cc_minor);

}  // namespace nodeprobe
