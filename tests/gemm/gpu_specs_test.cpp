#include <gtest/gtest.h>

#include <set>

#include "gpu_specs.h"
#include "instance_types.h"
#include "nodeprobe/instance_table.h"

namespace nodeprobe::gemm {
namespace {

std::string model_of(const char* name) {
  const GpuSpec* s = find_gpu_spec(name);
  return s ? std::string(s->model) : "none";
}

TEST(GpuSpecs, RealDeviceNamesMapToTheRightModel) {
  EXPECT_EQ(model_of("Tesla T4"), "T4");
  EXPECT_EQ(model_of("NVIDIA A10G"), "A10G");
  EXPECT_EQ(model_of("Tesla V100-SXM2-16GB"), "V100-SXM2");
  EXPECT_EQ(model_of("Tesla V100-SXM2-32GB"), "V100-SXM2");
  EXPECT_EQ(model_of("Tesla V100-PCIE-16GB"), "V100-PCIE");
  EXPECT_EQ(model_of("NVIDIA A100-SXM4-40GB"), "A100-SXM4-40GB");
  EXPECT_EQ(model_of("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(model_of("NVIDIA A100 80GB PCIe"), "A100-PCIE-80GB");
  EXPECT_EQ(model_of("NVIDIA H100 80GB HBM3"), "H100-SXM");
  EXPECT_EQ(model_of("NVIDIA H100 PCIe"), "H100-PCIE");
  EXPECT_EQ(model_of("NVIDIA H200"), "H200-SXM");
  // GH200 contains "H200" but is its own GPU: 96 GB HBM3 at 4 TB/s (or 144 GB HBM3e).
  EXPECT_EQ(model_of("NVIDIA GH200 480GB"), "GH200");
  EXPECT_EQ(model_of("NVIDIA GH200 144G HBM3e"), "GH200-HBM3e");
  EXPECT_EQ(model_of("NVIDIA L4"), "L4");
  EXPECT_EQ(model_of("NVIDIA L40S"), "L40S");
  // Unknown GPUs get TFLOP/s without a peak, never a wrong peak.
  EXPECT_EQ(model_of("NVIDIA A10"), "none");
  EXPECT_EQ(model_of("NVIDIA L40"), "none");
  EXPECT_EQ(model_of("NVIDIA H100 NVL"), "none");
  EXPECT_EQ(model_of("NVIDIA GeForce RTX 4090"), "none");
  EXPECT_EQ(model_of(""), "none");
}

TEST(GpuSpecs, DensePeaksPerPrecision) {
  const GpuSpec& h100 = *find_gpu_spec("NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(peak_tflops(h100, Precision::kBf16), 989.5);  // 1,979 sparse / 2
  EXPECT_DOUBLE_EQ(peak_tflops(h100, Precision::kFp8), 1979);
  EXPECT_DOUBLE_EQ(peak_tflops(h100, Precision::kTf32), 494.5);
  EXPECT_DOUBLE_EQ(peak_tflops(h100, Precision::kFp32), 67);
  const GpuSpec& a100 = *find_gpu_spec("NVIDIA A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(peak_tflops(a100, Precision::kFp16), 312);
  EXPECT_DOUBLE_EQ(peak_tflops(a100, Precision::kFp8), 0);  // no FP8 on Ampere
  EXPECT_DOUBLE_EQ(a100.mem_gbs, 2039);
  const GpuSpec& v100 = *find_gpu_spec("Tesla V100-SXM2-32GB");
  EXPECT_DOUBLE_EQ(peak_tflops(v100, Precision::kBf16), 0);
  EXPECT_DOUBLE_EQ(peak_tflops(v100, Precision::kFp16), 125);
  const GpuSpec& t4 = *find_gpu_spec("Tesla T4");
  EXPECT_DOUBLE_EQ(peak_tflops(t4, Precision::kFp16), 65);
  EXPECT_LT(slow_threshold_pct(t4, Precision::kFp16), 37);  // power-capped T4 sustains ~37 %
  const GpuSpec& l40s = *find_gpu_spec("NVIDIA L40S");
  EXPECT_DOUBLE_EQ(peak_tflops(l40s, Precision::kFp8), 733);
}

TEST(GpuSpecs, EveryRowIsComplete) {
  for (const GpuSpec& s : gpu_specs()) {
    SCOPED_TRACE(std::string(s.model));
    EXPECT_GT(s.fp32, 0);
    EXPECT_GT(s.fp16, s.fp32);  // tensor cores beat FP32 on every listed GPU
    EXPECT_GT(s.mem_gbs, 0);
    EXPECT_GE(s.pcie_gen, 3);
    EXPECT_GT(s.sm_count, 0);
    EXPECT_FALSE(s.source.empty());
    EXPECT_FALSE(s.match.empty());
    EXPECT_GT(s.slow_pct_tensor, 0);
    EXPECT_LE(s.slow_pct_tensor, 100);
    if (s.bf16 > 0) {
      EXPECT_DOUBLE_EQ(s.bf16, s.fp16);
    }
    if (s.fp8 > 0) {
      EXPECT_NEAR(s.fp8, 2 * s.fp16, 0.02 * s.fp8);  // datasheets round each figure
    }
  }
}

TEST(GpuSpecs, Gh200IsNotAnH200) {
  const GpuSpec& gh = *find_gpu_spec("NVIDIA GH200 480GB");
  EXPECT_DOUBLE_EQ(gh.mem_gbs, 4000);
  EXPECT_DOUBLE_EQ(peak_tflops(gh, Precision::kBf16), 989.5);
  EXPECT_DOUBLE_EQ(find_gpu_spec("NVIDIA GH200 144G HBM3e")->mem_gbs, 4900);
  EXPECT_DOUBLE_EQ(find_gpu_spec("NVIDIA H200")->mem_gbs, 4800);
}

TEST(GpuSpecs, MigSlicesByTheirShare) {
  const auto mig = parse_mig_name("NVIDIA A100-SXM4-40GB MIG 3g.20gb");
  ASSERT_TRUE(mig);
  EXPECT_EQ(mig->parent, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(mig->profile, "3g.20gb");
  EXPECT_EQ(parse_mig_name("NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb")->profile, "1c.3g.40gb");
  EXPECT_FALSE(parse_mig_name("NVIDIA A100-SXM4-40GB"));
  // The slice finds its GPU's row, never the whole GPU's peak by accident...
  EXPECT_EQ(model_of("NVIDIA A100-SXM4-40GB MIG 3g.20gb"), "A100-SXM4-40GB");
  // ...and is judged by its SMs' share of it.
  const GpuSpec& a100 = *find_gpu_spec("NVIDIA A100-SXM4-40GB");
  const auto share = mig_share(a100, 42);
  ASSERT_TRUE(share);
  EXPECT_NEAR(peak_tflops(*share, Precision::kBf16), 312.0 * 42 / 108, 1e-9);
  EXPECT_EQ(share->mem_gbs, 0);  // a slice's memory bandwidth is not judged
  EXPECT_FALSE(mig_share(a100, 0));
  EXPECT_FALSE(mig_share(a100, 200));
}

TEST(GpuSpecs, PcieLinkBandwidth) {
  EXPECT_NEAR(pcie_link_gbs(3, 16), 15.75, 0.01);
  EXPECT_NEAR(pcie_link_gbs(4, 16), 31.5, 0.01);
  EXPECT_NEAR(pcie_link_gbs(5, 16), 63.0, 0.05);
  EXPECT_NEAR(pcie_link_gbs(4, 8), 15.75, 0.01);
  EXPECT_EQ(pcie_link_gbs(7, 16), 0);
}

TEST(InstanceTypes, ExpectedGpus) {
  auto e = expected_gpus("p4d.24xlarge");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->family, "A100");
  EXPECT_EQ(e->count, 8);
  EXPECT_EQ(expected_gpus("g4dn.xlarge")->count, 1);
  EXPECT_EQ(expected_gpus("g4dn.12xlarge")->count, 4);
  EXPECT_EQ(expected_gpus("g5.48xlarge")->family, "A10G");
  EXPECT_EQ(expected_gpus("p5en.48xlarge")->family, "H200");
  EXPECT_EQ(expected_gpus("p3.2xlarge")->family, "V100");
  EXPECT_EQ(expected_gpus("g6e.12xlarge")->count, 4);
  EXPECT_EQ(expected_gpus("c5.xlarge")->count, 0);  // known GPU-less family
  EXPECT_FALSE(expected_gpus("x9.unknown"));
  EXPECT_FALSE(expected_gpus(""));
}

TEST(InstanceTypes, EveryFamilyHasASpec) {
  const std::set<std::string> families = {"T4", "A10G", "V100", "A100", "H100", "H200", "GH200", "L4", "L40S"};
  std::set<std::string> spec_families;
  for (const auto& s : gpu_specs()) spec_families.insert(std::string(s.family));
  for (const auto& f : families) EXPECT_TRUE(spec_families.count(f)) << f;
  // Every type of the one instance table names a GPU family gemm has specs for.
  for (const auto& [t, spec] : instance_table().types)
    EXPECT_TRUE(families.count(std::string(expected_gpus(t)->family))) << t;
}

}  // namespace
}  // namespace nodeprobe::gemm
