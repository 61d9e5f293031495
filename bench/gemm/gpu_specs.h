#pragma once
/// Datasheet figures per GPU model: dense (no sparsity) peak TFLOP/s per
/// precision, memory bandwidth, PCIe generation and the share of peak below
/// which a GEMM is judged slow. The table itself, with a source for every
/// row, is in gpu_specs.cpp.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numeric.h"

namespace nodeprobe::gemm {

struct GpuSpec {
  std::string_view model;      ///< short model key ("H100-SXM", "A10G", "T4")
  std::string_view family;     ///< what instance tables expect ("H100", "A10G", ...)
  /// Case-insensitive substrings that must all occur in the device name.
  std::vector<std::string_view> match;
  /// Substrings that must not occur (so "A10" does not match "A100").
  std::vector<std::string_view> exclude;
  double fp32 = 0;   ///< non-tensor FP32 TFLOP/s
  double tf32 = 0;   ///< TF32 tensor TFLOP/s, dense; 0: no TF32 tensor cores
  double fp16 = 0;   ///< FP16 tensor TFLOP/s with FP32 accumulate, dense
  double bf16 = 0;   ///< BF16 tensor TFLOP/s, dense; 0: not supported in hardware
  double fp8 = 0;    ///< FP8 tensor TFLOP/s, dense; 0: not supported
  double mem_gbs = 0;   ///< memory bandwidth, GB/s (1e9 B/s)
  int pcie_gen = 0;     ///< host link generation the board supports
  /// Tensor-core GEMM below this share of peak is gpu.compute_slow (percent).
  double slow_pct_tensor = 60;
  /// FP32 (non-tensor) GEMM below this share of peak is gpu.compute_slow.
  double slow_pct_fp32 = 60;
  std::string_view source;  ///< where the figures come from
  int sm_count = 0;         ///< SMs of the whole GPU (a MIG slice's share is its SMs / these)
};

/// A MIG slice as CUDA and NVML name it: "<GPU name> MIG <profile>"
/// ("NVIDIA A100-SXM4-40GB MIG 3g.20gb", "... MIG 1c.3g.20gb").
struct MigName {
  std::string parent;   ///< "NVIDIA A100-SXM4-40GB"
  std::string profile;  ///< "3g.20gb"
};
std::optional<MigName> parse_mig_name(std::string_view device_name);

/// The share of `whole` a MIG slice with `slice_sms` SMs can reach: peaks
/// scaled by slice_sms / whole.sm_count (clocks are the GPU's), memory
/// bandwidth left out (0: a slice's share of HBM is not its SM share, so it
/// is not judged). nullopt when the table has no SM count for the GPU.
std::optional<GpuSpec> mig_share(const GpuSpec& whole, int slice_sms);

/// Every model the probe knows, most specific first.
const std::vector<GpuSpec>& gpu_specs();

/// The spec whose patterns match `device_name` (as reported by CUDA or
/// NVML, e.g. "NVIDIA A100-SXM4-80GB"), or nullptr for an unknown GPU.
const GpuSpec* find_gpu_spec(std::string_view device_name);

/// Dense datasheet peak for a precision; 0 when the model has none
/// (no tensor-core support for it: the TFLOP/s are still reported).
double peak_tflops(const GpuSpec& spec, Precision p);

/// Default share of peak (percent) under which `p` is judged slow on this GPU.
double slow_threshold_pct(const GpuSpec& spec, Precision p);

/// Theoretical PCIe bandwidth per direction in GB/s for a link generation and
/// width (after 8b/10b or 128b/130b encoding); 0 for unknown generations.
double pcie_link_gbs(int gen, int width);

}  // namespace nodeprobe::gemm
