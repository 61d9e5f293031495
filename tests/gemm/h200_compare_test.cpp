// compare on real reports of one idle H200 (reports/examples, written by
// scripts/gpu-check.sh's machine): nodeprobe-gemm --profile full twice and
// accept --profile quick twice, seconds apart, nothing changed in between.
// With the run-to-run factors gemm_metrics() declares, compare calls nothing
// worse or better; with the descriptors those runs wrote (no factors), it
// called nine metrics worse: the data can fail this test.
#include <gtest/gtest.h>

#include <string>

#include "gemm_metrics.h"
#include "nodeprobe/compare.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe::gemm {
namespace {

Report example(const std::string& name) {
  const std::string path = std::string(NODEPROBE_SOURCE_DIR) + "/reports/examples/" + name;
  return parse_report(testing::read_file(path), path);
}

// The gemm probe's descriptors as this build declares them.
Report with_current_descriptors(Report r) {
  for (auto& p : r.probes)
    if (p.name == "gemm") p.descriptors = gemm_metrics();
  return r;
}

std::string moved(const Comparison& c) {
  std::string out;
  for (const auto& m : c.metrics)
    if (m.judgement.verdict == Verdict::kWorse || m.judgement.verdict == Verdict::kBetter)
      out += m.probe + "/" + m.name + ": " + m.judgement.reason + "\n";
  return out;
}

TEST(H200Compare, TwoGemmRunsOfAnIdleNodeAreTheSame) {
  const Report a = example("nvidia-h200-gemm-A.json");
  const Report b = example("nvidia-h200-gemm-B.json");
  const Comparison as_written = compare_reports(a, b, CompareOptions{});
  EXPECT_GE(as_written.count(Verdict::kWorse), 5u) << "the runs' own descriptors carry no factor";
  const Comparison c = compare_reports(with_current_descriptors(a), with_current_descriptors(b), CompareOptions{});
  EXPECT_EQ(c.count(Verdict::kWorse) + c.count(Verdict::kBetter), 0u) << moved(c);
  // What stays judged: the large GEMMs and device bandwidth are still "same".
  std::size_t same_large = 0;
  for (const auto& m : c.metrics)
    if (m.name == "gemm.tflops" && m.labels.count("size") && m.labels.at("size") == "8192" &&
        m.judgement.verdict == Verdict::kSame)
      ++same_large;
  // fp32, fp16, bf16, fp8 (TF32's -5.7 % within overlapping spreads is ambiguous).
  EXPECT_GE(same_large, 4u);
}

TEST(H200Compare, TwoAcceptRunsOfAnIdleNodeAreTheSame) {
  const Comparison c = compare_reports(with_current_descriptors(example("nvidia-h200-accept-A.json")),
                                       with_current_descriptors(example("nvidia-h200-accept-B.json")),
                                       CompareOptions{});
  EXPECT_EQ(c.count(Verdict::kWorse) + c.count(Verdict::kBetter), 0u) << moved(c);
  EXPECT_GT(c.count(Verdict::kSame), 50u);
}

}  // namespace
}  // namespace nodeprobe::gemm
