#include "nodeprobe/cuda_errors.h"

#include "nodeprobe/finding_ids.h"

namespace nodeprobe {
namespace {

// gpu.fabric_manager joined the vocabulary after the GPU probes; until a
// build has it, the Fabric Manager cause still reads in the text under
// gpu.not_found.
std::string fabric_manager_finding() {
  return find_finding_kind("gpu.fabric_manager") ? "gpu.fabric_manager" : "gpu.not_found";
}

}  // namespace

std::string nvidia_module_fix() {
  return "check the kernel module: `lsmod | grep nvidia`, `dmesg | grep -i nvrm`; after a kernel "
         "update rebuild it (`dkms autoinstall` or reinstall the driver the AMI documents), "
         "`dracut --force`, reboot";
}

CudaErrorHint cuda_error_hint(int code, int driver_version) {
  if ((code == cuda_rc::kInsufficientDriver || code == cuda_rc::kCallRequiresNewerDriver) &&
      driver_version == 0)
    return {"no NVIDIA driver loaded (driver version 0: libcuda.so.1 missing or the kernel module "
            "is not loaded)",
            "check the instance type has GPUs; " + nvidia_module_fix(), "gpu.not_found"};
  switch (code) {
    case cuda_rc::kSystemNotReady:
      return {"the NVSwitch fabric is not initialised: NVSwitch systems (p4d, p4de, p5, p5e, "
              "p5en) need the NVIDIA Fabric Manager (nvidia-fabricmanager) running, at exactly "
              "the driver's version",
              "`systemctl status nvidia-fabricmanager` and `journalctl -u nvidia-fabricmanager`; "
              "start it (`systemctl enable --now nvidia-fabricmanager`), install the package "
              "matching the driver version `nvidia-smi` shows if it is missing, then retry",
              fabric_manager_finding()};
    case cuda_rc::kSystemDriverMismatch:
      return {"the NVIDIA user-space driver does not match the loaded kernel module",
              "compare `cat /proc/driver/nvidia/version` with the libcuda/libnvidia-ml version; "
              "reboot after a driver update, or reinstall one driver for both",
              "gpu.driver_kernel_mismatch"};
    case cuda_rc::kStubLibrary:
      return {"the CUDA driver library loaded is the toolkit's stub, not the real driver",
              "remove the CUDA toolkit's lib64/stubs directory from LD_LIBRARY_PATH", "gpu.not_found"};
    case cuda_rc::kInsufficientDriver:
    case cuda_rc::kCallRequiresNewerDriver:
      return {"the NVIDIA driver is older than this CUDA runtime needs",
              "upgrade the NVIDIA driver, or use a build made for the CUDA version `nvidia-smi` "
              "shows",
              "gpu.cuda_driver_insufficient"};
    case cuda_rc::kCompatNotSupportedOnDevice:
      return {"the CUDA forward-compatibility package (cuda-compat) is on the library path, but "
              "this GPU does not support forward compatibility",
              "remove /usr/local/cuda/compat from LD_LIBRARY_PATH, or upgrade the driver",
              "gpu.cuda_driver_insufficient"};
    case cuda_rc::kNoDevice:
      return {"the driver is loaded but no CUDA device is visible",
              "check CUDA_VISIBLE_DEVICES and `nvidia-smi -L`; in a container pass the GPUs in "
              "(--gpus all / the NVIDIA device plugin); with MIG enabled, create GPU instances",
              "gpu.not_found"};
    case cuda_rc::kDevicesUnavailable:
      return {"the GPU is busy or unavailable: its compute mode is exclusive-process (another "
              "process holds it) or prohibited",
              "`nvidia-smi -q -d COMPUTE` and `nvidia-smi` (processes); stop the other process or "
              "set the default compute mode (`nvidia-smi -c DEFAULT`)",
              "gpu.not_found"};
    case cuda_rc::kInitializationError:
      return {"the CUDA driver failed to initialise", "run `nvidia-smi`; " + nvidia_module_fix(),
              "gpu.not_found"};
    case cuda_rc::kNoKernelImageForDevice:
      return {"this build has no GPU code for this GPU's architecture",
              "rebuild with the GPU's architecture in NODEPROBE_CUDA_ARCHS (or a CUDA toolkit "
              "that still supports it)",
              ""};
    case cuda_rc::kMemoryAllocation:
      return {"the GPU is out of memory", "another process holds GPU memory (`nvidia-smi`); free it",
              "gpu.oom"};
    case cuda_rc::kEccUncorrectable:
      return {"an uncorrectable ECC error", "`nvidia-smi -q -d ECC`; drain the node, reset or replace the GPU",
              "gpu.ecc"};
    case cuda_rc::kIllegalAddress:
    case cuda_rc::kLaunchFailure:
      return {"the GPU faulted (look for an Xid in the kernel log)",
              "`dmesg | grep -iE 'xid|nvrm'`; drain the node and reset or replace the GPU", "gpu.xid"};
    default: return {};
  }
}

std::string explain_cuda_error(const std::string& call, int code, const std::string& name,
                               const std::string& text, int driver_version) {
  std::string s = call + ": " + name + " (" + std::to_string(code) + ")";
  if (!text.empty()) s += ": " + text;
  const CudaErrorHint h = cuda_error_hint(code, driver_version);
  if (!h.summary.empty()) s += ": " + h.summary;
  if (!h.fix.empty()) s += "; fix: " + h.fix;
  return s;
}

std::string cuda_build_support(int runtime_version, int cc_major, int cc_minor) {
  // CUDA 13.0 removed Maxwell, Pascal and Volta (sm_5x, sm_6x, sm_70/72)
  // from nvcc and from its libraries (cuBLAS, cuDNN, NCCL builds for CUDA
  // 13): nothing GPU-side runs on a V100. Turing (7.5) stays.
  if (runtime_version >= 13000 && cc_major * 10 + cc_minor < 75) {
    const char* arch = cc_major >= 7 ? "Volta" : cc_major == 6 ? "Pascal" : "Maxwell or older GPUs";
    return std::string("this build does not support ") + arch +
           "; build with CUDA 12.x (GPU compute capability " +
           std::to_string(cc_major) + "." + std::to_string(cc_minor) + ", this build's CUDA " +
           std::to_string(runtime_version / 1000) + "." + std::to_string(runtime_version % 1000 / 10) + ")";
  }
  return {};
}

}  // namespace nodeprobe
