// The CUDA backend's own code (cuda_*.cpp: uploads, cuBLASLt layouts, the
// cuBLAS training loop, timing) on CPU fakes of the CUDA runtime, cuBLASLt
// and cuBLAS that keep CUDA's stream ordering (fake_cuda_runtime.h). No GPU
// has run this code yet; these tests are what checks it until one does.
#include <gtest/gtest.h>

#include "cpu_reference.h"
#include "cuda_backend.h"
#include "fake_cublas.h"
#include "verify.h"

namespace nodeprobe::gemm {
namespace {

using nodeprobe::testing::FakeCudaRuntime;
using testing::FakeCublas;

struct Fakes {
  FakeCudaRuntime cuda;
  FakeCublas blas{cuda};
};

// Issue 15 item 2: inputs uploaded with a plain cudaMemcpy (legacy stream)
// were not ordered before cuBLASLt on the non-blocking work stream.
TEST(CudaBackend, VerificationGemmSeesItsInputs) {
  Fakes f;
  cuda::CudaBackend backend(f.blas.libraries());
  const int m = 48, n = 40, k = 96;
  std::vector<float> av, bv;
  const auto a = random_inputs(Precision::kFp32, static_cast<std::size_t>(k * m), 11, &av);
  const auto b = random_inputs(Precision::kFp32, static_cast<std::size_t>(k * n), 12, &bv);
  const RefResult ref = gemm_reference(av, bv, m, n, k, 1);
  for (int round = 0; round < 2; ++round) {  // the second reuses the device's handles and stream
    const auto got = decode_outputs(Precision::kFp32, backend.run_gemm(0, Precision::kFp32, m, n, k, a, b));
    const Comparison cmp = compare_results(got, ref, static_cast<std::size_t>(k), gemm_tolerance(Precision::kFp32));
    EXPECT_TRUE(cmp.ok()) << cmp.describe();
  }
  for (const auto& c : f.cuda.calls) EXPECT_EQ(c.find("legacy stream"), std::string::npos) << c;
  EXPECT_EQ(f.blas.matmuls, 2);
}

// The cuBLAS training loop (never run on a GPU) reproduces the CPU
// reference's losses step by step: layouts, transposes and the SGD algebra.
TEST(CudaBackend, TrainingLoopMatchesTheCpuReference) {
  Fakes f;
  cuda::CudaBackend backend(f.blas.libraries());
  TrainConfig cfg;
  cfg.batch = 16;
  cfg.in = 64;
  cfg.out = 8;
  cfg.steps = 30;
  const TrainData data = make_train_data(cfg);
  const std::vector<double> ref = train_reference(cfg, data);
  const TrainRun run = backend.train(0, cfg, data);
  ASSERT_EQ(run.losses.size(), ref.size());
  const LossComparison lc = compare_losses(run.losses, ref);
  EXPECT_TRUE(lc.ok) << lc.describe();
  EXPECT_LT(run.losses.back(), 0.9 * run.losses.front());
  EXPECT_GT(run.seconds, 0);
}

TEST(CudaBackend, TimedGemmSamplesWhileBusyAndTimesEveryRep) {
  Fakes f;
  cuda::CudaBackend backend(f.blas.libraries());
  const auto a = random_inputs(Precision::kFp32, 64 * 64, 1);
  int hooks = 0;
  const Timing t = backend.time_gemm(0, {Precision::kFp32, 64, 64, 64, 2, 5}, a, a,
                                     [&](const std::function<bool()>& still_busy) {
                                       ++hooks;
                                       EXPECT_FALSE(still_busy());  // the fake finishes when asked
                                     });
  EXPECT_EQ(hooks, 1);
  ASSERT_EQ(t.seconds.size(), 5u);
  for (double s : t.seconds) EXPECT_GT(s, 0);
  EXPECT_EQ(f.blas.matmuls, 7);  // warm-up + timed
  // cuBLASLt with no kernel for a type: NOT_SUPPORTED, which the probe turns into a skip.
  const auto h = random_inputs(Precision::kBf16, 64 * 64, 1);
  try {
    backend.time_gemm(0, {Precision::kBf16, 64, 64, 64, 1, 1}, h, h, {});
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.info().code_name, "CUBLAS_STATUS_NOT_SUPPORTED");
  }
}

TEST(CudaBackend, TransfersAndDeviceInfo) {
  Fakes f;
  cuda::CudaBackend backend(f.blas.libraries());
  for (bool pinned : {false, true})
    for (bool h2d : {true, false}) EXPECT_EQ(backend.host_transfer(0, h2d, pinned, 1 << 16, 1, 3, {}).timing.seconds.size(), 3u);
  const Bandwidth d = backend.device_bandwidth(0, DeviceCopy::kMemcpy, 1 << 16, 1, 4);
  EXPECT_EQ(d.timing.seconds.size(), 4u);
  EXPECT_EQ(d.bytes, 2u << 16);
  const DeviceInfo info = backend.device_info(0);
  EXPECT_EQ(info.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(info.uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  // A MIG slice's UUID is the MIG-... NVML lists.
  std::snprintf(f.cuda.devices[0].name, sizeof f.cuda.devices[0].name, "%s", "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
  EXPECT_EQ(backend.device_info(0).uuid, "MIG-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(backend.query_env().device_count, 1);
}

TEST(CudaBackend, MissingCublasIsNamedWhenUsed) {
  FakeCudaRuntime cudart;
  cuda::Libraries libs;
  libs.rt = &cudart.runtime();
  libs.blas_unavailable = "cannot load libcublasLt.so.13: no such file";
  cuda::CudaBackend backend(libs);
  EXPECT_EQ(backend.blas_unavailable_reason(), libs.blas_unavailable);
  const auto a = random_inputs(Precision::kFp32, 16 * 16, 1);
  try {
    backend.run_gemm(0, Precision::kFp32, 16, 16, 16, a, a);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("libcublasLt.so.13"), std::string::npos);
  }
  // Sections without cuBLAS still run.
  EXPECT_EQ(backend.device_bandwidth(0, DeviceCopy::kMemcpy, 1 << 12, 1, 2).timing.seconds.size(), 2u);
}

}  // namespace
}  // namespace nodeprobe::gemm
