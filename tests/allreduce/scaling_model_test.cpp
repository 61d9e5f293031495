#include <gtest/gtest.h>

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

}  // namespace
}  // namespace nodeprobe::allreduce
