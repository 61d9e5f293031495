#pragma once
/// Why there is no usable GPU, from the numbers the CUDA runtime gives even
/// without a GPU (cudaGetDeviceCount's error, cudaDriverGetVersion,
/// cudaRuntimeGetVersion) and NVML's view. Host-only, so every case is unit
/// tested; the CUDA backend only collects the numbers.

#include <string>

#include "nodeprobe/cuda_errors.h"
#include "nodeprobe/status.h"

namespace nodeprobe::gemm {

/// What the CUDA runtime said, collected before any device is touched.
struct CudaEnv {
  bool built_with_cuda = true;   ///< false: this build has no CUDA toolkit
  int rc = 0;                    ///< cudaGetDeviceCount's cudaError_t
  std::string error_name;        ///< cudaGetErrorName(rc)
  std::string error_string;      ///< cudaGetErrorString(rc)
  int driver_version = 0;        ///< cudaDriverGetVersion: 0 = no driver library loaded
  int runtime_version = 0;       ///< cudaRuntimeGetVersion (e.g. 12040)
  int device_count = 0;          ///< visible devices when rc == 0
  std::string visible_devices;   ///< $CUDA_VISIBLE_DEVICES as set ("" when unset)
  bool visible_devices_set = false;
};

/// NVML's view, when the library could be loaded.
struct NvmlView {
  bool loaded = false;       ///< libnvidia-ml.so.1 opened and nvmlInit succeeded
  int init_rc = -1;          ///< nvmlInit's return (-1: library not found)
  std::string init_error;    ///< why it could not be used
  int device_count = 0;      ///< GPUs the driver sees (ignores CUDA_VISIBLE_DEVICES)
  int mig_enabled = 0;       ///< GPUs in MIG mode
  int mig_devices = 0;       ///< MIG devices (GPU + compute instances) on them
};

/// How many GPUs the node should have, and who says so.
struct GpuExpectation {
  int count = -1;        ///< -1: unknown
  std::string family;    ///< expected GPU family ("A100"), "" when unknown
  std::string source;    ///< "--expect-gpus 8", "instance type p4d.24xlarge"
};

enum class CudaProblem {
  kNone,            ///< usable
  kNotBuilt,        ///< this build has no CUDA
  kNoDriver,        ///< driver version 0: no libcuda / kernel module
  kStubDriver,      ///< the toolkit's stub libcuda was loaded
  kDriverTooOld,    ///< driver older than the runtime
  kDriverMismatch,  ///< user-space driver and kernel module differ
  kNotReady,        ///< NVSwitch fabric not initialised (fabric manager)
  kMigNoInstances,  ///< MIG mode on, but no GPU instance exists: CUDA sees nothing
  kNoDevice,        ///< driver fine, no device visible
  kOther,
};

struct Diagnosis {
  CudaProblem problem = CudaProblem::kNone;
  Status status = Status::kPass;  ///< pass (usable), skip, fail or error
  std::string summary;   ///< "no NVIDIA driver loaded", ...
  std::string reason;    ///< one line for the probe's reason: summary + exact error + versions
  std::string finding;   ///< gpu.not_found, gpu.cuda_driver_insufficient, gpu.driver_kernel_mismatch,
                         ///< gpu.fabric_manager
  std::string observed, expected, fix;
};

/// "12.4" for 12040, "13.0" for 13000, "none" for 0.
std::string format_cuda_version(int v);

/// Judges the CUDA environment: skip when no GPU is expected, fail when the
/// expectation (or NVML seeing GPUs) says there should be one.
Diagnosis diagnose_cuda(const CudaEnv& env, const GpuExpectation& expect, const NvmlView& nvml);

}  // namespace nodeprobe::gemm
