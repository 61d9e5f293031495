#pragma once
/// Pure judgements of the GPU probe: observed facts in, a status with
/// observed / expected text out. Unit tested without a GPU.

#include <string>
#include <vector>

#include "diagnosis.h"
#include "gpu_specs.h"
#include "nodeprobe/status.h"

namespace nodeprobe::gemm {

struct Verdict {
  Status status = Status::kPass;
  std::string observed, expected, fix, detail;
};

/// GPU count and model against the expectation (gpu.count_mismatch).
/// `names` are the device names seen (NVML's when available: CUDA_VISIBLE_DEVICES
/// does not hide GPUs from it).
Verdict judge_count(const GpuExpectation& expect, const std::vector<std::string>& names);

/// PCIe link (gpu.pcie_degraded). A narrower link than the maximum is always
/// degraded; a lower generation only counts when sampled under load, because
/// idle GPUs drop the link speed to save power. Negative values: unknown.
Verdict judge_pcie(int gen, int width, int gen_max, int width_max, bool under_load);

/// Memory errors (gpu.ecc): uncorrectable ECC errors since boot, a
/// failed row remapping, pending page retirement or row remapping.
/// Negative values: not reported by this GPU.
struct EccFacts {
  long long uncorrected_volatile = -1;
  long long corrected_volatile = -1;
  int retired_pending = -1;
  int remap_pending = -1;
  int remap_failure = -1;
  long long remapped_uncorrectable = -1;
};
Verdict judge_ecc(const EccFacts& f);

/// GEMM speed against the datasheet peak (gpu.compute_slow). `threshold_pct`
/// <= 0 uses the spec's default for the precision. Unknown GPU or a precision
/// without a datasheet figure: pass with the reason in detail.
Verdict judge_speed(double tflops, const GpuSpec* spec, Precision p, double threshold_pct);

/// Training loop: the loss must fall below `max_ratio` x the initial loss and
/// stay finite (gpu.compute_wrong when not).
Verdict judge_loss(const std::vector<double>& losses, double max_ratio);

}  // namespace nodeprobe::gemm
