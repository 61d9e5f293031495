#include <gtest/gtest.h>

#include "nodeprobe/key_numbers.h"
#include "nodeprobe/metric_select.h"
#include "report_fixtures.h"

namespace nodeprobe {
namespace {

TEST(MetricSelect, ProbePrefixMatchesOnDotBoundaries) {
  EXPECT_TRUE(probe_matches("allreduce.fabric.tcp", "allreduce"));
  EXPECT_TRUE(probe_matches("allreduce", "allreduce"));
  EXPECT_FALSE(probe_matches("allreducex", "allreduce"));
  EXPECT_TRUE(probe_matches("anything", ""));
}

TEST(MetricSelect, LabelsMatchSubsetsAndWildcards) {
  const Labels have = {{"precision", "bf16"}, {"device", "0"}};
  EXPECT_TRUE(labels_match(have, {{"precision", "bf16"}}));
  EXPECT_TRUE(labels_match(have, {{"device", "*"}}));
  EXPECT_FALSE(labels_match(have, {{"precision", "fp16"}}));
  EXPECT_FALSE(labels_match(have, {{"backend", "*"}}));
  EXPECT_EQ(labels_key(have), "device=0,precision=bf16");
}

TEST(MetricSelect, NumbersArePlainDecimal) {
  EXPECT_FALSE(parse_number("0x10"));
  EXPECT_FALSE(parse_number("nan"));
}

TEST(MetricSelect, SelectsByProbeNameAndLabels) {
  const Report r = testing::chart_report();
  EXPECT_EQ(select_metrics(r, "gemm", {"gemm.tflops"}, {{"precision", "bf16"}}).size(), 2u);
  EXPECT_EQ(select_metrics(r, "allreduce", {"busbw"}, {{"provider", "efa"}}).size(), 10u);
  EXPECT_TRUE(select_metrics(r, "io", {"busbw"}).empty());
}

TEST(KeyNumbers, PicksPreferredMetricsAndCheckCounts) {
  const Report r = testing::chart_report();
  for (const auto& p : r.probes) {
    const std::string k = key_numbers(p);
    if (p.name == "gemm") {
      EXPECT_NE(k.find("bf16 250 TFLOP/s"), std::string::npos) << k;
    } else if (p.name == "limits") {
      EXPECT_EQ(k, "2 checks: 1 pass, 1 warn");
    } else if (p.name == "allreduce.fabric.efa") {
      EXPECT_NE(k.find("busbw max"), std::string::npos) << k;
    } else if (p.name == "io-sweep") {
      // No key metric declared: the first metrics, as their descriptors show them (AU in %).
      EXPECT_NE(k.find("au{layout=files,workers=1} 30.0 %"), std::string::npos) << k;
    }
  }
}

}  // namespace
}  // namespace nodeprobe
