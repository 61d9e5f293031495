#pragma once
/// The per-GPU sections of the probe, each filling metrics, checks and the
/// GPU's data object. Shared by gemm_probe.cpp and the section files.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gemm_options.h"
#include "gpu_backend.h"
#include "gpu_specs.h"
#include "nodeprobe/probe.h"
#include "busy_window.h"
#include "nvml.h"

namespace nodeprobe::gemm {

/// Everything a section needs about one GPU.
struct DeviceRun {
  int dev = 0;
  DeviceInfo info;
  const GpuSpec* spec = nullptr;  ///< nullptr: unknown model (or a MIG slice not judged)
  std::shared_ptr<const GpuSpec> share_spec;  ///< a MIG slice's share of its GPU (spec points here)
  std::string mig_profile;        ///< "3g.20gb" for a MIG slice, else ""
  std::string unsupported;        ///< why this build cannot drive the GPU ("" when it can)
  int nvml_index = -1;            ///< -1: NVML does not know this GPU (for a MIG slice: its GPU)
  Json data = Json::object();     ///< the GPU's entry in probe data "gpus"
  std::string label() const { return std::to_string(dev); }
};

/// Inputs and CPU references shared by every GPU of the run (computed once).
struct SharedCache {
  /// Timing inputs per input format (TF32 shares FP32's): A and B, device format.
  std::map<std::string, std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> gemm_inputs;
  struct Verify {
    std::vector<std::uint8_t> a, b;
    RefResult ref;
  };
  std::map<Precision, Verify> gemm_verify;
  bool train_ready = false;
  TrainData train_data;
  std::vector<double> train_ref;
};

struct SectionEnv {
  ProbeContext& ctx;
  ProbeResult& r;
  GpuBackend& backend;
  const GemmOptions& opt;
  const Nvml& nvml;
  SharedCache& cache;
};

void run_gemm_section(SectionEnv& env, DeviceRun& d);
void run_conv_section(SectionEnv& env, DeviceRun& d);
void run_memory_section(SectionEnv& env, DeviceRun& d);
void run_train_section(SectionEnv& env, DeviceRun& d);


/// The BusyHook that fills `window` with NVML samples over a timed window;
/// empty (nothing sampled) when `enabled` is false or NVML does not know the GPU.
BusyHook window_sampler(SectionEnv& env, const DeviceRun& d, bool enabled, BusyWindow& window);

/// Turns an exception thrown inside a section into a check (status error, or
/// the finding the API error code points at) so the other sections still run.
void record_section_error(SectionEnv& env, const DeviceRun& d, const std::string& section,
                          const std::exception& e);

/// Check id for a GPU: "gpu0.gemm.verify.fp16".
std::string check_id(const DeviceRun& d, const std::string& what);

}  // namespace nodeprobe::gemm
