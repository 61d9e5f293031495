#pragma once
/// nodeprobe-gemm: does this GPU really compute, as fast as it should?
/// NVML inventory, cuBLASLt GEMM per precision vs the datasheet peak with
/// verification, cuDNN convolutions, memory bandwidth, a training smoke loop,
/// per GPU, plus a peer-to-peer matrix; without a usable GPU, a diagnosis.

#include <memory>
#include <string>

#include "gemm_options.h"
#include "gpu_backend.h"
#include "nodeprobe/probe.h"
#include "nvml.h"

namespace nodeprobe::gemm {

class GemmProbe final : public Probe {
 public:
  /// `nvml_library` "" = default lookup (see Nvml).
  GemmProbe(GpuBackend& backend, GemmOptions opt, std::string nvml_library = {})
      : backend_(backend), opt_(std::move(opt)), nvml_library_(std::move(nvml_library)) {}
  std::string key() const override { return "gemm"; }
  std::string description() const override {
    return "GPU smoke test: inventory, GEMM per precision vs peak (verified), cuDNN conv, "
           "memory bandwidth, training loop, P2P";
  }
  void run(ProbeContext& ctx, ProbeResult& r) override;
  void fill_host(HostInfo& host) const override;

 private:
  GpuBackend& backend_;
  GemmOptions opt_;
  std::string nvml_library_;
  // Facts for fill_host, gathered during run.
  Json host_gpus_ = Json::array();
  std::string driver_version_, cuda_runtime_;
};

}  // namespace nodeprobe::gemm
