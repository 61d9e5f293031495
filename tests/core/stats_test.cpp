#include "nodeprobe/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace nodeprobe {
namespace {

TEST(Stats, EmptyGivesZeroCount) {
  const Stats s = compute_stats({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.median, 0);
}

TEST(Stats, SingleSample) {
  const Stats s = compute_stats({4.0});
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.median, 4.0);
  EXPECT_EQ(s.min, 4.0);
  EXPECT_EQ(s.max, 4.0);
  EXPECT_EQ(s.p5, 4.0);
  EXPECT_EQ(s.p95, 4.0);
  EXPECT_EQ(s.stddev, 0.0);
}

TEST(Stats, OddAndEvenMedian) {
  EXPECT_DOUBLE_EQ(compute_stats({3, 1, 2}).median, 2.0);
  EXPECT_DOUBLE_EQ(compute_stats({4, 1, 3, 2}).median, 2.5);
}

TEST(Stats, PercentilesInterpolateLinearly) {
  // 0..100: p5 = 5, p95 = 95 exactly with linear interpolation between ranks.
  std::vector<double> v;
  for (int i = 100; i >= 0; --i) v.push_back(i);
  const Stats s = compute_stats(v);
  EXPECT_DOUBLE_EQ(s.p5, 5.0);
  EXPECT_DOUBLE_EQ(s.p95, 95.0);
  EXPECT_DOUBLE_EQ(s.median, 50.0);
  EXPECT_DOUBLE_EQ(s.mean, 50.0);
  EXPECT_DOUBLE_EQ(s.min, 0.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);
  // Between ranks: 10 samples 1..10, p95 at position 8.55 -> 9.55.
  const Stats t = compute_stats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_NEAR(t.p95, 9.55, 1e-12);
  EXPECT_NEAR(t.p5, 1.45, 1e-12);
}

TEST(Stats, SampleStandardDeviation) {
  // Known data set: 2,4,4,4,5,5,7,9 -> sample sd = sqrt(32/7).
  const Stats s = compute_stats({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
}

TEST(Stats, NonFiniteSamplesAreIgnored) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Stats s = compute_stats({1, nan, 3, inf});
  EXPECT_EQ(s.n, 2u);
  EXPECT_DOUBLE_EQ(s.median, 2.0);
}

TEST(Stats, MappedThroughADecreasingFunctionSwapsTheTails) {
  // Seconds per iteration -> GB/s for 1e9 bytes: the slowest sample is the lowest bandwidth.
  const Stats t = compute_stats({1.0, 2.0, 4.0, 2.0, 1.0});
  const Stats bw = map_stats(t, [](double s) { return 1.0 / s; });
  EXPECT_EQ(bw.n, t.n);
  EXPECT_DOUBLE_EQ(bw.min, 0.25);
  EXPECT_DOUBLE_EQ(bw.max, 1.0);
  EXPECT_DOUBLE_EQ(bw.median, 0.5);
  EXPECT_DOUBLE_EQ(bw.p5, 1.0 / t.p95);
  EXPECT_DOUBLE_EQ(bw.p95, 1.0 / t.p5);
  EXPECT_DOUBLE_EQ(bw.mean, 1.0 / t.mean);
  EXPECT_NEAR(bw.stddev, t.stddev / (t.mean * t.mean), 1e-6);
  // Increasing and linear: a plain scale.
  const Stats x3 = map_stats(t, [](double s) { return 3 * s; });
  EXPECT_DOUBLE_EQ(x3.p95, 3 * t.p95);
  EXPECT_NEAR(x3.stddev, 3 * t.stddev, 1e-6);
}

}  // namespace
}  // namespace nodeprobe
