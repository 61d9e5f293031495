#include "gpu_specs.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace nodeprobe::gemm {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains_ci(const std::string& hay_lower, std::string_view needle) {
  return hay_lower.find(lower(needle)) != std::string::npos;
}

}  // namespace

// Dense peaks: NVIDIA datasheets print tensor figures "with sparsity" (marked
// *); the dense figure is half of that. Memory bandwidth in GB/s (1e9 B/s).
// ../shared/reference/PERFORMANCE-ANCHORS.md section 5.1 collects the same
// numbers with its source tags [Sx].
const std::vector<GpuSpec>& gpu_specs() {
  static const std::vector<GpuSpec> specs = {
      // NVIDIA T4 datasheet: FP32 8.1, mixed FP16/FP32 tensor 65 TFLOPS, 320 GB/s
      // GDDR6, PCIe Gen3 x16, 70 W [S36][S37]. The 70 W cap keeps sustained
      // clocks far below boost: cuBLAS FP16 reaches ~24 TFLOPS (37 %) on a healthy
      // T4 [S37], hence the low thresholds.
      {"T4", "T4", {"T4"}, {}, 8.1, 0, 65, 0, 0, 320, 3, 25, 40,
       "NVIDIA T4 datasheet; PERFORMANCE-ANCHORS [S36][S37]", 40},
      // AWS does not publish A10G peaks. Derived from 80 SMs x 1.71 GHz boost:
      // FP32 35 TFLOPS; tensor FP16/BF16 with FP32 accumulate at half the A10's
      // per-SM rate ~70, TF32 ~35; 600 GB/s GDDR6; PCIe Gen4 [S38] (marked
      // "verify" there, hence the lower threshold).
      {"A10G", "A10G", {"A10G"}, {}, 35, 35, 70, 70, 0, 600, 4, 50, 50,
       "derived from SM count x boost clock; PERFORMANCE-ANCHORS [S38] (verify on device)", 80},
      // V100 SXM2 datasheet: FP32 15.7, tensor FP16 125 TFLOPS, 900 GB/s HBM2.
      // No BF16/TF32 tensor cores (BF16 is emulated, slow). Compute capability
      // 7.0: CUDA 13 dropped it, so a CUDA >= 13 build skips V100s
      // (cuda_build_support); these rows serve CUDA 11.8 / 12.x builds.
      {"V100-SXM2", "V100", {"V100", "SXM2"}, {}, 15.7, 0, 125, 0, 0, 900, 3, 60, 60,
       "NVIDIA V100 datasheet (SXM2); PERFORMANCE-ANCHORS [S39]", 80},
      {"V100-PCIE", "V100", {"V100", "PCIE"}, {"V100S"}, 14, 0, 112, 0, 0, 900, 3, 60, 60,
       "NVIDIA V100 datasheet (PCIe)", 80},
      // A100 datasheet: FP32 19.5, TF32 156, FP16/BF16 312 TFLOPS dense;
      // 40 GB HBM2 1,555 GB/s; 80 GB SXM HBM2e 2,039 GB/s; 80 GB PCIe 1,935 GB/s.
      {"A100-SXM4-40GB", "A100", {"A100", "SXM4", "40GB"}, {}, 19.5, 156, 312, 312, 0, 1555, 4,
       60, 60, "NVIDIA A100 datasheet; PERFORMANCE-ANCHORS [S5][S40]", 108},
      {"A100-SXM4-80GB", "A100", {"A100", "SXM4", "80GB"}, {}, 19.5, 156, 312, 312, 0, 2039, 4,
       60, 60, "NVIDIA A100 datasheet; PERFORMANCE-ANCHORS [S5][S40]", 108},
      {"A100-PCIE-40GB", "A100", {"A100", "PCIE", "40GB"}, {}, 19.5, 156, 312, 312, 0, 1555, 4,
       60, 60, "NVIDIA A100 datasheet (PCIe 40 GB)", 108},
      {"A100-PCIE-80GB", "A100", {"A100", "80GB", "PCIE"}, {}, 19.5, 156, 312, 312, 0, 1935, 4,
       60, 60, "NVIDIA A100 datasheet (PCIe 80 GB)", 108},
      // H100 SXM5 datasheet: FP32 67; TF32 989*, FP16/BF16 1,979*, FP8 3,958*
      // (* sparse) -> dense 494.5 / 989.5 / 1,979; 3.35 TB/s HBM3; PCIe Gen5.
      {"H100-SXM", "H100", {"H100", "HBM3"}, {"PCIE", "NVL"}, 67, 494.5, 989.5, 989.5, 1979, 3350,
       5, 60, 60, "NVIDIA H100 datasheet (SXM5); PERFORMANCE-ANCHORS [S5]", 132},
      // H100 PCIe datasheet: FP32 51; TF32 756*, FP16/BF16 1,513*, FP8 3,026*; 2 TB/s.
      {"H100-PCIE", "H100", {"H100", "PCIE"}, {}, 51, 378, 756.5, 756.5, 1513, 2000, 5, 60, 60,
       "NVIDIA H100 datasheet (PCIe)", 114},
      // GH200 Grace Hopper datasheet: the H100 SXM's compute (FP8 3,958*,
      // FP16/BF16 1,979*, TF32 989*, FP32 67) with 96 GB HBM3 at 4 TB/s
      // ("NVIDIA GH200 480GB"), or 144 GB HBM3e at 4.9 TB/s; the GPU hangs off
      // NVLink-C2C (900 GB/s) to the Grace CPU, PCIe Gen5 for the rest. Before
      // the H200 row: "GH200" contains "H200".
      {"GH200-HBM3e", "GH200", {"GH200", "HBM3e"}, {}, 67, 494.5, 989.5, 989.5, 1979, 4900, 5, 60,
       60, "NVIDIA GH200 Grace Hopper Superchip datasheet (144 GB HBM3e)", 132},
      {"GH200", "GH200", {"GH200"}, {}, 67, 494.5, 989.5, 989.5, 1979, 4000, 5, 60, 60,
       "NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3)", 132},
      // H200 SXM datasheet: same compute as H100 SXM; 4.8 TB/s HBM3e, 141 GB.
      {"H200-SXM", "H200", {"H200"}, {"NVL", "GH200"}, 67, 494.5, 989.5, 989.5, 1979, 4800, 5, 60, 60,
       "NVIDIA H200 datasheet (SXM); PERFORMANCE-ANCHORS [S5]", 132},
      // L40S datasheet: FP32 91.6; TF32 183 (366*), FP16/BF16 362.05 (733*),
      // FP8 733 (1,466*); 864 GB/s GDDR6; PCIe Gen4 x16; 350 W.
      {"L40S", "L40S", {"L40S"}, {}, 91.6, 183, 362.05, 362.05, 733, 864, 4, 60, 60,
       "NVIDIA L40S datasheet", 142},
      // L4 datasheet: FP32 30.3; TF32 120*, FP16/BF16 242*, FP8 485* -> dense
      // 60 / 121 / 242.5; 300 GB/s; PCIe Gen4 x16; 72 W (power-capped like T4).
      {"L4", "L4", {"L4"}, {"L40"}, 30.3, 60, 121, 121, 242.5, 300, 4, 40, 40,
       "NVIDIA L4 datasheet", 58},
  };
  return specs;
}

std::optional<MigName> parse_mig_name(std::string_view device_name) {
  const std::size_t at = device_name.find(" MIG ");
  if (at == std::string_view::npos) return std::nullopt;
  MigName m{std::string(device_name.substr(0, at)), std::string(device_name.substr(at + 5))};
  if (m.parent.empty() || m.profile.empty()) return std::nullopt;
  return m;
}

std::optional<GpuSpec> mig_share(const GpuSpec& whole, int slice_sms) {
  if (whole.sm_count <= 0 || slice_sms <= 0 || slice_sms > whole.sm_count) return std::nullopt;
  const double f = static_cast<double>(slice_sms) / whole.sm_count;
  GpuSpec s = whole;
  s.fp32 *= f;
  s.tf32 *= f;
  s.fp16 *= f;
  s.bf16 *= f;
  s.fp8 *= f;
  s.mem_gbs = 0;
  s.sm_count = slice_sms;
  return s;
}

const GpuSpec* find_gpu_spec(std::string_view device_name) {
  // A MIG slice is judged through its parent's row (scaled by mig_share).
  if (const auto mig = parse_mig_name(device_name)) return find_gpu_spec(mig->parent);
  const std::string name = lower(device_name);
  for (const GpuSpec& s : gpu_specs()) {
    const bool all = std::all_of(s.match.begin(), s.match.end(),
                                 [&](std::string_view m) { return contains_ci(name, m); });
    const bool none = std::none_of(s.exclude.begin(), s.exclude.end(),
                                   [&](std::string_view m) { return contains_ci(name, m); });
    if (all && none) return &s;
  }
  return nullptr;
}

double peak_tflops(const GpuSpec& spec, Precision p) {
  switch (p) {
    case Precision::kFp32: return spec.fp32;
    case Precision::kTf32: return spec.tf32;
    case Precision::kFp16: return spec.fp16;
    case Precision::kBf16: return spec.bf16;
    case Precision::kFp8: return spec.fp8;
  }
  return 0;
}

double slow_threshold_pct(const GpuSpec& spec, Precision p) {
  return p == Precision::kFp32 ? spec.slow_pct_fp32 : spec.slow_pct_tensor;
}

double pcie_link_gbs(int gen, int width) {
  // Per lane and direction after line encoding: Gen1/2 8b/10b at 2.5/5 GT/s,
  // Gen3+ 128b/130b at 8/16/32 GT/s.
  double lane = 0;
  switch (gen) {
    case 1: lane = 0.25; break;
    case 2: lane = 0.5; break;
    case 3: lane = 8.0 * 128 / 130 / 8; break;
    case 4: lane = 16.0 * 128 / 130 / 8; break;
    case 5: lane = 32.0 * 128 / 130 / 8; break;
    default: return 0;
  }
  return lane * width;
}

}  // namespace nodeprobe::gemm
