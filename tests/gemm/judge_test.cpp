#include <gtest/gtest.h>

#include <cmath>

#include "judge.h"

namespace nodeprobe::gemm {
namespace {

TEST(JudgeCount, MatchesExpectation) {
  const GpuExpectation p4d{8, "A100", "instance type p4d.24xlarge"};
  const std::vector<std::string> eight(8, "NVIDIA A100-SXM4-40GB");
  const Verdict ok = judge_count(p4d, eight);
  EXPECT_EQ(ok.status, Status::kPass);
  EXPECT_EQ(ok.observed, "8 x NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(ok.expected, "8 x A100 (instance type p4d.24xlarge)");

  const Verdict missing = judge_count(p4d, std::vector<std::string>(7, "NVIDIA A100-SXM4-40GB"));
  EXPECT_EQ(missing.status, Status::kFail);
  EXPECT_NE(missing.fix.find("missing"), std::string::npos);

  const Verdict model = judge_count(p4d, std::vector<std::string>(8, "Tesla V100-SXM2-16GB"));
  EXPECT_EQ(model.status, Status::kFail);
  EXPECT_NE(model.detail.find("V100"), std::string::npos);

  EXPECT_EQ(judge_count({}, eight).status, Status::kPass);  // nothing to compare with
  EXPECT_EQ(judge_count({2, "", "--expect-gpus 2"}, {"a", "b"}).status, Status::kPass);
  EXPECT_EQ(judge_count({0, "", "instance type c5.xlarge"}, {}).observed, "0 GPUs");
}

TEST(JudgePcie, WidthAlwaysGenerationOnlyUnderLoad) {
  EXPECT_EQ(judge_pcie(4, 16, 4, 16, true).status, Status::kPass);
  const Verdict idle = judge_pcie(1, 16, 4, 16, false);  // power saving at idle
  EXPECT_EQ(idle.status, Status::kPass);
  EXPECT_NE(idle.detail.find("power saving"), std::string::npos);
  const Verdict slow = judge_pcie(3, 16, 4, 16, true);
  EXPECT_EQ(slow.status, Status::kWarn);
  EXPECT_EQ(slow.observed, "Gen3 x16 under load");
  EXPECT_EQ(slow.expected, "Gen4 x16");
  EXPECT_EQ(judge_pcie(4, 8, 4, 16, false).status, Status::kWarn);  // narrow even at idle
  EXPECT_EQ(judge_pcie(-1, 16, 4, 16, true).status, Status::kSkip);
}

TEST(JudgeEcc, Levels) {
  EccFacts clean;
  clean.uncorrected_volatile = 0;
  clean.remap_failure = 0;
  clean.remap_pending = 0;
  EXPECT_EQ(judge_ecc(clean).status, Status::kPass);
  EXPECT_EQ(judge_ecc(EccFacts{}).status, Status::kPass);  // nothing reported: nothing to judge
  EccFacts pending = clean;
  pending.remap_pending = 1;
  EXPECT_EQ(judge_ecc(pending).status, Status::kWarn);
  EccFacts dbe = clean;
  dbe.uncorrected_volatile = 2;
  EXPECT_EQ(judge_ecc(dbe).status, Status::kFail);
  EccFacts failed = clean;
  failed.remap_failure = 1;
  EXPECT_EQ(judge_ecc(failed).status, Status::kFail);
  EXPECT_NE(judge_ecc(failed).observed.find("remap failure 1"), std::string::npos);
}

TEST(JudgeSpeed, AgainstDatasheetPeak) {
  const GpuSpec* h100 = find_gpu_spec("NVIDIA H100 80GB HBM3");
  const Verdict ok = judge_speed(790, h100, Precision::kBf16, 0);
  EXPECT_EQ(ok.status, Status::kPass);
  EXPECT_EQ(ok.observed, "790.0 TFLOP/s (79.8 % of 989.5)");
  const Verdict slow = judge_speed(500, h100, Precision::kBf16, 0);
  EXPECT_EQ(slow.status, Status::kWarn);
  EXPECT_EQ(slow.expected, ">= 60 % of the datasheet dense peak");
  EXPECT_EQ(judge_speed(700, h100, Precision::kBf16, 75).status, Status::kWarn);  // --slow-pct
  // T4 is judged against its power-capped reality, not boost peaks.
  EXPECT_EQ(judge_speed(24, find_gpu_spec("Tesla T4"), Precision::kFp16, 0).status, Status::kPass);
  // No peak: reported, not judged.
  const Verdict unknown = judge_speed(100, nullptr, Precision::kFp16, 0);
  EXPECT_EQ(unknown.status, Status::kPass);
  EXPECT_NE(unknown.detail.find("unknown GPU"), std::string::npos);
  EXPECT_EQ(judge_speed(9, find_gpu_spec("Tesla V100-SXM2-16GB"), Precision::kBf16, 0).status,
            Status::kPass);
}

TEST(JudgeLoss, MustFall) {
  EXPECT_EQ(judge_loss({1.3, 1.0, 0.8}, 0.9).status, Status::kPass);
  const Verdict flat = judge_loss({1.3, 1.3, 1.29}, 0.9);
  EXPECT_EQ(flat.status, Status::kFail);
  EXPECT_NE(flat.detail.find("did not fall"), std::string::npos);
  EXPECT_EQ(judge_loss({1.3, NAN, 0.1}, 0.9).status, Status::kFail);
  EXPECT_EQ(judge_loss({}, 0.9).status, Status::kFail);
  EXPECT_EQ(judge_loss({1.3, 1.2}, 0.9).observed, "initial 1.3, final 1.2");
}

}  // namespace
}  // namespace nodeprobe::gemm
