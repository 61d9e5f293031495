#pragma once
// A CPU-emulated GPU for the probe's unit tests: timings follow configured
// speeds, results come from the CPU references (so verification passes for
// real unless a fault is injected).

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpu_backend.h"
#include "nodeprobe/clock.h"

namespace nodeprobe::gemm::testing {

struct FakeGpu {
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string uuid;  ///< "" = fake_uuid(index), as the fake NVML names GPU `index`
  int cc_major = 9, cc_minor = 0;
  int sm_count = 132;
  std::map<Precision, double> tflops = {{Precision::kFp32, 50},   {Precision::kTf32, 380},
                                        {Precision::kFp16, 780},  {Precision::kBf16, 790},
                                        {Precision::kFp8, 1400}};
  double conv_tflops = 300;
  double mem_gbs = 3000;
  bool corrupt_gemm = false;  // one wrong element in every verification GEMM
  bool flat_loss = false;     // the training loss does not fall
  bool oom_conv = false;      // cuDNN runs out of memory
  bool no_stem_algo = false;  // cuDNN has no algorithm for 3-channel inputs
  bool info_fails = false;    // the GPU cannot report its properties (off the bus)
  std::set<Precision> no_kernel;  // cuBLASLt has no algorithm for these
};

class FakeBackend final : public GpuBackend {
 public:
  CudaEnv env;
  std::vector<FakeGpu> gpus;
  bool kernels = true;
  bool cudnn = true;
  std::string blas_missing;        // cuBLAS could not be loaded (why)
  int busy_polls = 3;              // a timed window lasts this many still_busy() calls
  int time_gemm_calls = 0;
  FakeClock* clock = nullptr;      // when set, each timed GEMM advances it...
  double seconds_per_gemm = 0;     // ...by this much (wall time of a sweep step)

  FakeBackend();
  CudaEnv query_env() override;
  std::vector<LibraryState> libraries() override;
  std::string blas_unavailable_reason() override { return blas_missing; }
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
};

/// UUID the fake NVML library gives GPU `i`, so both sides match.
std::string fake_uuid(int i);
/// UUID the fake NVML library gives MIG device `m` of GPU `i`.
std::string fake_mig_uuid(int i, int m);

}  // namespace nodeprobe::gemm::testing
