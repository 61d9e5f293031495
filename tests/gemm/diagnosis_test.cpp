#include <gtest/gtest.h>

#include "diagnosis.h"

namespace nodeprobe::gemm {
namespace {

CudaEnv env(int rc, const char* name, const char* text, int driver, int runtime = 12040) {
  CudaEnv e;
  e.rc = rc;
  e.error_name = name;
  e.error_string = text;
  e.driver_version = driver;
  e.runtime_version = runtime;
  return e;
}

const GpuExpectation kNone{};
const GpuExpectation kEight{8, "A100", "instance type p4d.24xlarge"};
const NvmlView kNoNvml{};

// NVML loaded and answering, with `gpus` GPUs.
NvmlView nvml_seeing(int gpus) {
  NvmlView nv;
  nv.loaded = true;
  nv.init_rc = 0;
  nv.device_count = gpus;
  return nv;
}

TEST(Diagnosis, VersionFormatting) {
  EXPECT_EQ(format_cuda_version(12040), "12.4");
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(11080), "11.8");
  EXPECT_EQ(format_cuda_version(0), "none");
}

TEST(Diagnosis, UsableGpuIsNoProblem) {
  CudaEnv e = env(0, "", "", 12040);
  e.device_count = 2;
  const Diagnosis d = diagnose_cuda(e, kEight, kNoNvml);
  EXPECT_EQ(d.problem, CudaProblem::kNone);
  EXPECT_EQ(d.status, Status::kPass);
}

// Case 1 of the issue: no driver at all. The runtime reports "insufficient
// driver" with driver version 0 (exactly what this machine shows).
TEST(Diagnosis, NoDriverLoaded) {
  const CudaEnv e = env(cuda_rc::kInsufficientDriver, "cudaErrorInsufficientDriver",
                        "CUDA driver version is insufficient for CUDA runtime version", 0, 13000);
  const Diagnosis d = diagnose_cuda(e, kNone, kNoNvml);
  EXPECT_EQ(d.problem, CudaProblem::kNoDriver);
  EXPECT_EQ(d.status, Status::kSkip);
  EXPECT_EQ(d.finding, "gpu.not_found");
  EXPECT_NE(d.reason.find("no NVIDIA driver loaded"), std::string::npos);
  EXPECT_NE(d.reason.find("cudaErrorInsufficientDriver (35): CUDA driver version is insufficient"),
            std::string::npos);
  EXPECT_NE(d.reason.find("driver CUDA none, runtime CUDA 13.0"), std::string::npos);
  EXPECT_NE(d.fix.find("lsmod"), std::string::npos);
  // Expected GPUs turn the skip into a failure.
  EXPECT_EQ(diagnose_cuda(e, kEight, kNoNvml).status, Status::kFail);
  EXPECT_NE(diagnose_cuda(e, kEight, kNoNvml).expected.find("8 GPU(s) (instance type p4d.24xlarge)"),
            std::string::npos);
}

// Case 2: a driver is there but older than the runtime.
TEST(Diagnosis, DriverOlderThanRuntime) {
  const CudaEnv e = env(cuda_rc::kInsufficientDriver, "cudaErrorInsufficientDriver",
                        "CUDA driver version is insufficient for CUDA runtime version", 11040, 12040);
  const Diagnosis d = diagnose_cuda(e, kNone, kNoNvml);
  EXPECT_EQ(d.problem, CudaProblem::kDriverTooOld);
  EXPECT_EQ(d.finding, "gpu.cuda_driver_insufficient");
  EXPECT_EQ(d.status, Status::kSkip);
  EXPECT_NE(d.summary.find("(CUDA 11.4) is older than the CUDA runtime (12.4)"), std::string::npos);
  EXPECT_NE(d.fix.find("upgrade the NVIDIA driver"), std::string::npos);
  EXPECT_EQ(diagnose_cuda(e, {1, "", "--expect-gpus 1"}, kNoNvml).status, Status::kFail);
}

// Case 3: the driver is fine, there is no device.
TEST(Diagnosis, DriverFineNoDevice) {
  const CudaEnv e = env(cuda_rc::kNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected",
                        12040, 12040);
  const Diagnosis d = diagnose_cuda(e, kNone, kNoNvml);
  EXPECT_EQ(d.problem, CudaProblem::kNoDevice);
  EXPECT_EQ(d.finding, "gpu.not_found");
  EXPECT_EQ(d.status, Status::kSkip);
  EXPECT_NE(d.reason.find("driver CUDA 12.4, runtime CUDA 12.4"), std::string::npos);
  // A newer runtime minor on an older driver minor is fine (minor-version
  // compatibility): still "no device", not "driver too old".
  const CudaEnv minor = env(cuda_rc::kNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected",
                            12020, 12040);
  EXPECT_EQ(diagnose_cuda(minor, kNone, kNoNvml).problem, CudaProblem::kNoDevice);
  // Zero devices without an error is the same case.
  EXPECT_EQ(diagnose_cuda(env(0, "", "", 12040), kNone, kNoNvml).problem, CudaProblem::kNoDevice);
}

TEST(Diagnosis, HiddenByCudaVisibleDevices) {
  CudaEnv e = env(cuda_rc::kNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected", 12040);
  e.visible_devices_set = true;
  e.visible_devices = "";
  const Diagnosis d = diagnose_cuda(e, kNone, kNoNvml);
  EXPECT_NE(d.summary.find("CUDA_VISIBLE_DEVICES=''"), std::string::npos);
  EXPECT_NE(d.fix.find("unset CUDA_VISIBLE_DEVICES"), std::string::npos);
  // NVML sees the GPU the variable hides: the run could not test it, and
  // nothing is wrong with the node (no finding, so no node action).
  const Diagnosis hidden = diagnose_cuda(e, kNone, nvml_seeing(1));
  EXPECT_EQ(hidden.status, Status::kError);
  EXPECT_EQ(hidden.finding, "");
  EXPECT_NE(hidden.reason.find("CUDA_VISIBLE_DEVICES=''"), std::string::npos);
}

TEST(Diagnosis, NvmlSeeingGpusMakesItAFailure) {
  const CudaEnv e = env(cuda_rc::kNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected", 12040);
  const Diagnosis d = diagnose_cuda(e, kNone, nvml_seeing(8));
  EXPECT_EQ(d.status, Status::kFail);
  EXPECT_NE(d.observed.find("NVML sees 8 GPU(s)"), std::string::npos);
}

TEST(Diagnosis, DriverLibraryMismatch) {
  NvmlView nv;
  nv.init_rc = 18;  // NVML_ERROR_LIB_RM_VERSION_MISMATCH
  const CudaEnv e = env(cuda_rc::kSystemDriverMismatch, "cudaErrorSystemDriverMismatch",
                        "system has unsupported display driver / cuda driver combination", 12040);
  const Diagnosis d = diagnose_cuda(e, kNone, nv);
  EXPECT_EQ(d.problem, CudaProblem::kDriverMismatch);
  EXPECT_EQ(d.finding, "gpu.driver_kernel_mismatch");
  // NVML's verdict alone is enough.
  EXPECT_EQ(diagnose_cuda(env(cuda_rc::kNoDevice, "x", "y", 12040), kNone, nv).problem,
            CudaProblem::kDriverMismatch);
}

TEST(Diagnosis, StubDriverAndFabricManager) {
  const Diagnosis stub = diagnose_cuda(
      env(cuda_rc::kStubLibrary, "cudaErrorStubLibrary", "CUDA driver is a stub library", 0), kNone, kNoNvml);
  EXPECT_EQ(stub.problem, CudaProblem::kStubDriver);
  EXPECT_NE(stub.fix.find("stubs"), std::string::npos);
  const Diagnosis fm = diagnose_cuda(
      env(cuda_rc::kSystemNotReady, "cudaErrorSystemNotReady", "system not yet initialized", 12040),
      kEight, kNoNvml);
  EXPECT_EQ(fm.problem, CudaProblem::kNotReady);
  EXPECT_EQ(fm.status, Status::kFail);
  EXPECT_NE(fm.fix.find("nvidia-fabricmanager"), std::string::npos);
}

TEST(Diagnosis, FabricManagerTextIsTheSharedOne) {
  const Diagnosis fm = diagnose_cuda(
      env(cuda_rc::kSystemNotReady, "cudaErrorSystemNotReady", "system not yet initialized", 12040),
      kNone, kNoNvml);
  const CudaErrorHint h = cuda_error_hint(cuda_rc::kSystemNotReady);
  EXPECT_EQ(fm.summary, h.summary);
  EXPECT_EQ(fm.fix, h.fix);
  EXPECT_EQ(fm.finding, h.finding);
  EXPECT_NE(fm.reason.find("Fabric"), std::string::npos) << fm.reason;
}

// MIG on with no instance: CUDA sees nothing although the GPUs are fine;
// the diagnosis must say MIG, not blame containers or CUDA_VISIBLE_DEVICES.
TEST(Diagnosis, MigEnabledWithoutInstances) {
  NvmlView nv;
  nv.loaded = true;
  nv.init_rc = 0;
  nv.device_count = 8;
  nv.mig_enabled = 8;
  nv.mig_devices = 0;
  const CudaEnv e = env(cuda_rc::kNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected", 12040);
  const Diagnosis d = diagnose_cuda(e, kEight, nv);
  EXPECT_EQ(d.problem, CudaProblem::kMigNoInstances);
  EXPECT_EQ(d.status, Status::kFail);
  EXPECT_NE(d.summary.find("MIG mode is enabled on 8 GPU(s) but no MIG instance exists"), std::string::npos);
  EXPECT_EQ(d.summary.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  EXPECT_NE(d.fix.find("nvidia-smi mig -cgi"), std::string::npos);
  EXPECT_NE(d.observed.find("8 in MIG mode, 0 MIG device(s)"), std::string::npos);
  // With instances, "no device" is something else (e.g. hidden by CUDA_VISIBLE_DEVICES).
  nv.mig_devices = 2;
  EXPECT_EQ(diagnose_cuda(e, kEight, nv).problem, CudaProblem::kNoDevice);
}

TEST(CudaErrors, ExplanationsAndBuildSupport) {
  const std::string s = explain_cuda_error("cudaGetDeviceCount", 802, "cudaErrorSystemNotReady",
                                           "system not yet initialized");
  EXPECT_EQ(s.rfind("cudaGetDeviceCount: cudaErrorSystemNotReady (802): system not yet initialized: "
                    "the NVSwitch fabric is not initialised", 0), 0u) << s;
  EXPECT_NE(s.find("nvidia-fabricmanager"), std::string::npos);
  EXPECT_EQ(cuda_error_hint(cuda_rc::kMemoryAllocation).finding, "gpu.oom");
  EXPECT_EQ(cuda_error_hint(cuda_rc::kIllegalAddress).finding, "gpu.xid");
  EXPECT_TRUE(cuda_error_hint(1).summary.empty());  // cudaErrorInvalidValue: CUDA's text says it all
  EXPECT_EQ(explain_cuda_error("cudaMalloc", 1, "cudaErrorInvalidValue", "invalid argument"),
            "cudaMalloc: cudaErrorInvalidValue (1): invalid argument");
  // CUDA 13 dropped Volta (7.0, 7.2); Turing 7.5 stays; CUDA 12 builds keep Volta.
  EXPECT_EQ(cuda_build_support(13000, 7, 0).rfind("this build does not support Volta; build with CUDA 12.x", 0), 0u);
  EXPECT_NE(cuda_build_support(13010, 7, 2), "");
  EXPECT_EQ(cuda_build_support(13000, 6, 0).rfind("this build does not support Pascal", 0), 0u);
  EXPECT_EQ(cuda_build_support(13000, 7, 5), "");
  EXPECT_EQ(cuda_build_support(12080, 7, 0), "");
  EXPECT_EQ(cuda_build_support(11080, 7, 0), "");
}

TEST(Diagnosis, OtherErrorsAndMajorVersionGap) {
  const Diagnosis other = diagnose_cuda(
      env(cuda_rc::kInitializationError, "cudaErrorInitializationError", "initialization error", 12040),
      kNone, kNoNvml);
  EXPECT_EQ(other.problem, CudaProblem::kOther);
  const Diagnosis old = diagnose_cuda(
      env(cuda_rc::kInitializationError, "cudaErrorInitializationError", "initialization error", 11080, 12040),
      kNone, kNoNvml);
  EXPECT_EQ(old.problem, CudaProblem::kDriverTooOld);
}

TEST(Diagnosis, BuildWithoutCuda) {
  CudaEnv e;
  e.built_with_cuda = false;
  EXPECT_EQ(diagnose_cuda(e, kNone, kNoNvml).status, Status::kSkip);
  EXPECT_EQ(diagnose_cuda(e, kEight, kNoNvml).status, Status::kError);  // the build, not the node
  EXPECT_EQ(diagnose_cuda(e, kEight, kNoNvml).problem, CudaProblem::kNotBuilt);
}

}  // namespace
}  // namespace nodeprobe::gemm
