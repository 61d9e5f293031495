#include "diagnosis.h"

namespace nodeprobe::gemm {
namespace {

constexpr int kNvmlLibRmVersionMismatch = 18;  // NVML_ERROR_LIB_RM_VERSION_MISMATCH
constexpr int kNvmlDriverNotLoaded = 9;        // NVML_ERROR_DRIVER_NOT_LOADED

}  // namespace

std::string format_cuda_version(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

Diagnosis diagnose_cuda(const CudaEnv& env, const GpuExpectation& expect, const NvmlView& nvml) {
  Diagnosis d;
  const std::string versions = "driver CUDA " + format_cuda_version(env.driver_version) +
                               ", runtime CUDA " + format_cuda_version(env.runtime_version);
  d.expected = expect.count > 0 ? std::to_string(expect.count) + " GPU(s) (" + expect.source + ")"
                                : "a usable CUDA GPU";
  if (!env.built_with_cuda) {
    d.problem = CudaProblem::kNotBuilt;
    d.summary = "this build of nodeprobe-gemm has no CUDA toolkit";
    d.reason = d.summary + " (rebuild with the CUDA toolkit installed)";
    d.observed = "built without CUDA";
    d.fix = "install the CUDA toolkit and rebuild (cmake finds it through CUDAToolkit_ROOT)";
    // The node may be fine: this is the build's fault, so never a node failure.
    d.status = expect.count > 0 || nvml.device_count > 0 ? Status::kError : Status::kSkip;
    return d;
  }
  if (env.rc == cuda_rc::kSuccess && env.device_count > 0) return d;

  d.finding = "gpu.not_found";
  // The node-level meaning of the code, shared with the other GPU probes.
  const auto use_hint = [&d](int code, int driver_version = -1) {
    const CudaErrorHint h = cuda_error_hint(code, driver_version);
    d.summary = h.summary;
    d.fix = h.fix;
    d.finding = h.finding;
  };
  if (nvml.init_rc == kNvmlLibRmVersionMismatch || env.rc == cuda_rc::kSystemDriverMismatch) {
    d.problem = CudaProblem::kDriverMismatch;
    use_hint(cuda_rc::kSystemDriverMismatch);
  } else if (env.rc == cuda_rc::kStubLibrary) {
    d.problem = CudaProblem::kStubDriver;
    use_hint(cuda_rc::kStubLibrary);
  } else if (env.driver_version == 0) {
    d.problem = CudaProblem::kNoDriver;
    use_hint(cuda_rc::kInsufficientDriver, 0);
  } else if (env.rc == cuda_rc::kInsufficientDriver ||
             (env.rc != cuda_rc::kNoDevice && env.rc != cuda_rc::kSuccess &&
              env.rc != cuda_rc::kSystemNotReady &&
              env.driver_version / 1000 < env.runtime_version / 1000)) {
    // Within a major version CUDA's minor-version compatibility lets an older
    // driver run a newer runtime, so only the runtime's verdict or a major
    // difference counts.
    d.problem = CudaProblem::kDriverTooOld;
    d.finding = "gpu.cuda_driver_insufficient";
    d.summary = "the NVIDIA driver (CUDA " + format_cuda_version(env.driver_version) +
                ") is older than the CUDA runtime (" + format_cuda_version(env.runtime_version) + ")";
    d.fix = "upgrade the NVIDIA driver to one supporting CUDA " +
            format_cuda_version(env.runtime_version) +
            ", or use a build made for CUDA " + format_cuda_version(env.driver_version);
  } else if (env.rc == cuda_rc::kSystemNotReady) {
    d.problem = CudaProblem::kNotReady;
    use_hint(cuda_rc::kSystemNotReady);
  } else if ((env.rc == cuda_rc::kNoDevice || env.rc == cuda_rc::kSuccess) && nvml.mig_enabled > 0 &&
             nvml.mig_devices == 0) {
    // CUDA enumerates MIG devices, not MIG-mode GPUs: with MIG on and no
    // instance created, nothing is visible although the GPUs are fine.
    d.problem = CudaProblem::kMigNoInstances;
    d.summary = "MIG mode is enabled on " + std::to_string(nvml.mig_enabled) +
                " GPU(s) but no MIG instance exists, so CUDA sees no device";
    d.fix = "create GPU and compute instances (`nvidia-smi mig -cgi <profile> -C`, list profiles "
            "with `nvidia-smi mig -lgip`) or disable MIG (`nvidia-smi -mig 0`, then reset the GPU)";
  } else if (env.rc == cuda_rc::kNoDevice || env.rc == cuda_rc::kSuccess) {
    d.problem = CudaProblem::kNoDevice;
    d.summary = "the driver is loaded but no CUDA device is visible";
    if (env.visible_devices_set)
      d.summary += " (CUDA_VISIBLE_DEVICES='" + env.visible_devices + "')";
    d.fix = env.visible_devices_set
                ? "unset CUDA_VISIBLE_DEVICES or list valid device indices/UUIDs"
                : "check the instance type has GPUs (`nvidia-smi -L`); in a container pass the "
                  "GPUs in (--gpus all / the NVIDIA device plugin)";
  } else {
    d.problem = CudaProblem::kOther;
    d.summary = "CUDA cannot use the GPUs";
    d.fix = "run `nvidia-smi`; " + nvidia_module_fix();
  }
  if (nvml.init_rc == kNvmlDriverNotLoaded && d.problem == CudaProblem::kNoDriver)
    d.summary += "; NVML agrees: driver not loaded";

  const std::string error = env.rc == cuda_rc::kSuccess
                                ? std::string("cudaGetDeviceCount returned 0 devices")
                                : "cudaGetDeviceCount: " + env.error_name + " (" +
                                      std::to_string(env.rc) + "): " + env.error_string;
  d.reason = d.summary + "; " + error + "; " + versions;
  d.observed = (env.rc == cuda_rc::kSuccess ? std::string("0 devices") : env.error_name) + ", " +
               versions;
  if (nvml.loaded && nvml.device_count > 0)
    d.observed += ", NVML sees " + std::to_string(nvml.device_count) + " GPU(s)";
  if (nvml.mig_enabled > 0)
    d.observed += " (" + std::to_string(nvml.mig_enabled) + " in MIG mode, " +
                  std::to_string(nvml.mig_devices) + " MIG device(s))";

  // A GPU that should be there (by flag, instance type, or because NVML sees
  // it) but cannot be used is a failure; otherwise there is nothing to test.
  const bool gpus_expected = expect.count > 0 || (nvml.loaded && nvml.device_count > 0);
  d.status = gpus_expected ? Status::kFail : Status::kSkip;
  if (d.problem == CudaProblem::kNoDevice && env.visible_devices_set && gpus_expected) {
    // The run's own environment hides the GPUs: nothing is known about the
    // node, so no node finding (on an H200 it read "fail, node action:
    // reboot"); the run could not test, which is an error of the run.
    d.status = Status::kError;
    d.finding.clear();
  }
  return d;
}

}  // namespace nodeprobe::gemm
