#include <gtest/gtest.h>

#include "nodeprobe/stats.h"
#include "scaling.h"

namespace nodeprobe::allreduce {
namespace {

TEST(ScalingModel, AllreduceTimeIsLatencyPlusBandwidthTerm) {
  EXPECT_DOUBLE_EQ(model_allreduce_s(1e9, 1, 1e-5, 10), 0.0);
  // 4 ranks: 6 latency steps, 1.5 x 1 GB at 10 GB/s busbw.
  EXPECT_NEAR(model_allreduce_s(1e9, 4, 1e-5, 10), 6e-5 + 0.15, 1e-12);
}

TEST(ScalingModel, StepOverlapsCommunicationWithCompute) {
  // 4 buckets, 100 ms compute: bucket i ready at 25(i+1) ms.
  EXPECT_NEAR(model_step_s(0.1, 4, 0.010, 0.010), 0.110, 1e-12);  // only the last bucket shows
  EXPECT_NEAR(model_step_s(0.1, 4, 0.050, 0.050), 0.225, 1e-12);  // communication bound: 25 + 4 x 50
  EXPECT_NEAR(model_step_s(0.1, 0, 1, 1), 0.1, 1e-12);
  EXPECT_NEAR(model_step_s(0.0, 2, 0.01, 0.005), 0.015, 1e-12);
}

TEST(ScalingModel, EfficiencyIsThroughputOverNTimesOneNode) {
  EXPECT_DOUBLE_EQ(scaling_efficiency(400, 4, 100), 1.0);
  EXPECT_DOUBLE_EQ(scaling_efficiency(300, 4, 100), 0.75);
  EXPECT_DOUBLE_EQ(scaling_efficiency(300, 4, 0), 0.0);
}

TEST(ScalingModel, FitRecoversLatencyAndBusBandwidth) {
  const double alpha = 20e-6, bw = 12.5;
  const int n = 8;
  const double small = 4096, big = 25.0 * 1048576;
  double a = 0, b = 0;
  fit_alpha_busbw(small, model_allreduce_s(small, n, alpha, bw), big, model_allreduce_s(big, n, alpha, bw), n, &a, &b);
  EXPECT_NEAR(a, alpha, 1e-8);
  EXPECT_NEAR(b, bw, 0.01);
  fit_alpha_busbw(small, 1, big, 0.5, n, &a, &b);  // nonsense input: no bandwidth estimate
  EXPECT_EQ(b, 0.0);
}

TEST(ScalingModel, NamesTheLimitingTerm) {
  EXPECT_NE(limiting_term(0.1, 4, 1e-4, 1e-3, 0.1001).find("compute"), std::string::npos);
  EXPECT_NE(limiting_term(0.1, 4, 1e-4, 5e-2, 0.3).find("bandwidth"), std::string::npos);
  EXPECT_NE(limiting_term(0.1, 4, 5e-2, 1e-3, 0.3).find("latency"), std::string::npos);
}

ScalingResult measured_on_slow_links() {
  // 1 Gbit/s links carry 0.125 GB/s; the two-point fit, latency removed, claims 0.200.
  ScalingResult s;
  s.ranks_per_node = 1;
  s.compute_s = 0.050;
  s.buckets = 4;
  s.bucket_bytes = s.last_bucket_bytes = 25.0 * 1048576;
  s.grad_bytes = 100.0 * 1048576;
  s.alpha_s = 50e-6;
  s.busbw_gbps = 0.200;
  const std::pair<int, double> steps[] = {{1, 0.050}, {2, 0.95}, {4, 1.45}};
  for (const auto& [n, step] : steps) {
    ScalingPoint p;
    p.nodes = p.ranks = n;
    p.step_s = step;
    p.step_stats = compute_stats({step * 0.98, step, step * 1.03});
    p.throughput = p.ranks / step;
    p.efficiency = 0.050 / step;
    p.busbw_gbps = n == 1 ? 0 : (n == 2 ? 0.125 : 0.118);
    s.points.push_back(p);
  }
  return s;
}

TEST(ScalingModel, PredictionsNeverBeatTheMeasuredLinks) {
  ScalingResult s = measured_on_slow_links();
  add_predictions(s, {8, 16});
  ASSERT_EQ(s.points.size(), 5u);
  EXPECT_DOUBLE_EQ(s.link_busbw_gbps, 0.125);
  for (const auto& p : s.points)
    if (p.predicted) {
      EXPECT_LE(p.busbw_gbps, 0.125) << p.nodes;
    }
}

TEST(ScalingModel, PredictedStepIsAtLeastComputePlusTheAllreduceThatCannotOverlap) {
  for (const bool overlap : {true, false}) {
    ScalingResult s = measured_on_slow_links();
    s.overlap = overlap;
    add_predictions(s, {8, 16});
    for (const auto& p : s.points) {
      if (!p.predicted) continue;
      const double last = model_allreduce_s(s.last_bucket_bytes, p.ranks, s.alpha_s, s.model_busbw_gbps);
      EXPECT_GE(p.step_s, s.compute_s + last) << p.nodes;
      EXPECT_GE(p.step_s, 1.45) << "never shorter than the last measured step";
    }
  }
}

TEST(ScalingModel, EfficiencyNeverRisesPastTheLastMeasuredNodeCount) {
  ScalingResult s = measured_on_slow_links();
  // Even when the fit is optimistic enough to predict a faster step.
  s.alpha_s = 0;
  s.busbw_gbps = 100;
  add_predictions(s, {8, 16, 32});
  double prev = s.points[2].efficiency;
  for (const auto& p : s.points) {
    if (!p.predicted) continue;
    EXPECT_LE(p.efficiency, prev) << p.nodes;
    prev = p.efficiency;
  }
}

TEST(ScalingModel, MeasuredPointsKeepTheirSpreadAndTheModelStatesItsAssumptions) {
  ScalingResult s = measured_on_slow_links();
  add_predictions(s, {8});
  const Json j = scaling_json(s);
  EXPECT_EQ(j["points"][1]["step_spread_s"]["n"], 3);
  EXPECT_FALSE(j["points"][3].contains("step_spread_s"));  // a prediction has no samples
  const auto& a = j["model"]["assumptions"];
  ASSERT_GE(a.size(), 5u);
  std::string all;
  for (const auto& line : a) all += line.get<std::string>() + "\n";
  EXPECT_NE(all.find("never above 0.125 GB/s"), std::string::npos) << all;
  EXPECT_NE(all.find("compute + the last bucket"), std::string::npos) << all;
  const std::string text = scaling_text(s, "fabric:tcp");
  EXPECT_NE(text.find("# model: "), std::string::npos);
  EXPECT_NE(text.find("(predicted)"), std::string::npos);
}

TEST(ScalingModel, GradientSizeIsPrintedWithItsUnit) {  // --grad-bytes 16M once printed "17 MB"
  ScalingResult s = measured_on_slow_links();
  s.grad_bytes = 16.0 * 1024 * 1024;
  EXPECT_NE(scaling_text(s, "mpi").find(": 16 MiB gradients in "), std::string::npos) << scaling_text(s, "mpi");
}

}  // namespace
}  // namespace nodeprobe::allreduce
