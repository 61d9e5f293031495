// Compare verdicts on crafted report pairs.
#include <gtest/gtest.h>

#include <cmath>

#include "nodeprobe/compare.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/render_compare.h"
#include "report_fixtures.h"

namespace nodeprobe {
namespace {

using testing::add_probe;
using testing::base_report;
using testing::metric;

Report one_metric(const Metric& m, const std::string& probe = "io") {
  Report r = base_report();
  r.probes[add_probe(r, probe, Status::kPass)].metrics.push_back(m);
  return r;
}

/// One metric with its descriptor declared (kind and axes as given).
Report declared(const Metric& m, MetricKind kind, std::vector<std::string> axes = {}) {
  Report r = one_metric(m);
  MetricDescriptor d = DescriptorBuilder(kind, m.name, m.unit, m.better, "test metric").axes(std::move(axes));
  r.probes[0].descriptors.push_back(d);
  return r;
}

const MetricDiff& only(const Comparison& c) {
  EXPECT_EQ(c.metrics.size(), 1u);
  return c.metrics.front();
}

TEST(Compare, ClearImprovementWithSeparatedSpreadsIsBetter) {
  const auto b = one_metric(metric("mb_per_s", 100, "MB/s", Better::kHigher, {}, 97, 103, 20));
  const auto a = one_metric(metric("mb_per_s", 130, "MB/s", Better::kHigher, {}, 126, 134, 20));
  const auto c = compare_reports(b, a, {});
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kBetter);
  EXPECT_NEAR(only(c).judgement.delta_pct, 30, 1e-9);
  EXPECT_FALSE(c.any_worse());
}

TEST(Compare, ClearRegressionIsWorse) {
  const auto b = one_metric(metric("busbw", 40, "GB/s", Better::kHigher, {{"size", "1048576"}}, 39, 41, 20), "allreduce");
  const auto a = one_metric(metric("busbw", 30, "GB/s", Better::kHigher, {{"size", "1048576"}}, 29, 31, 20), "allreduce");
  const auto c = compare_reports(b, a, {});
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kWorse);
  EXPECT_TRUE(c.any_worse());
  EXPECT_NE(only(c).judgement.reason.find("intervals separate"), std::string::npos);
}

TEST(Compare, FewSamplesThatSeparateAsOftenByChanceAreAmbiguous) {
  // 5 against 5 samples: two runs of one node have all of one above all of
  // the other 2 / C(10, 5) = 1 in 126 times; with ~30 metrics an A/A pair
  // would show a worse every tenth pair. 7 against 7 (1 in 1716) is judged.
  const auto b5 = one_metric(metric("busbw", 40, "GB/s", Better::kHigher, {}, 39, 41, 5), "allreduce");
  const auto a5 = one_metric(metric("busbw", 30, "GB/s", Better::kHigher, {}, 29, 31, 5), "allreduce");
  const auto c5 = compare_reports(b5, a5, {});
  EXPECT_EQ(only(c5).judgement.verdict, Verdict::kAmbiguous);
  EXPECT_FALSE(c5.any_worse());
  EXPECT_NE(only(c5).judgement.reason.find("by chance 1 in 126"), std::string::npos) << only(c5).judgement.reason;
  const auto b6 = one_metric(metric("busbw", 40, "GB/s", Better::kHigher, {}, 39, 41, 6), "allreduce");
  const auto a7 = one_metric(metric("busbw", 30, "GB/s", Better::kHigher, {}, 29, 31, 7), "allreduce");
  EXPECT_EQ(only(compare_reports(b6, a7, {})).judgement.verdict, Verdict::kAmbiguous);  // 1 in 858
  const auto b7 = one_metric(metric("busbw", 40, "GB/s", Better::kHigher, {}, 39, 41, 7), "allreduce");
  EXPECT_EQ(only(compare_reports(b7, a7, {})).judgement.verdict, Verdict::kWorse);
  EXPECT_EQ(only(compare_reports(a7, b7, {})).judgement.verdict, Verdict::kBetter);
  // Few samples against many: 5 against 20 is 1 in 26565, judged.
  const auto a20 = one_metric(metric("busbw", 30, "GB/s", Better::kHigher, {}, 29, 31, 20), "allreduce");
  EXPECT_EQ(only(compare_reports(b5, a20, {})).judgement.verdict, Verdict::kWorse);
}

// Measured on an idle VM (two accept runs in a row, nothing changed):
// limits/dev_shm_fill 4.73 (3.36..4.9) -> 2.96 (2.7..3.14) GB/s. Its 7 samples
// repeat within one run and share that run's memory state, so the intervals
// separate between unchanged runs. Within the descriptor's run-to-run factor
// the change is ambiguous; beyond it, still judged.
TEST(Compare, AChangeWithinTheMeasuredRunToRunFactorIsAmbiguous) {
  auto report = [](double v, double lo, double hi, double factor) {
    Report r = one_metric(metric("dev_shm_fill", v, "GB/s", Better::kHigher, {}, lo, hi, 7), "limits");
    MetricDescriptor d = measured("dev_shm_fill", "GB/s", Better::kHigher, "test").run_to_run(factor);
    r.probes[0].descriptors.push_back(d);
    return r;
  };
  const auto c = compare_reports(report(4.73, 3.36, 4.9, 3), report(2.96, 2.7, 3.14, 3), {});
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kAmbiguous);
  EXPECT_NE(only(c).judgement.reason.find("differ by up to 3.0x"), std::string::npos) << only(c).judgement.reason;
  EXPECT_FALSE(c.any_worse());
  // A fall beyond the factor (4.73 -> 1.2, 3.9x) is worse.
  EXPECT_EQ(only(compare_reports(report(4.73, 3.36, 4.9, 3), report(1.2, 1.1, 1.3, 3), {})).judgement.verdict,
            Verdict::kWorse);
  // Without a factor the same pair is worse, as before.
  EXPECT_EQ(only(compare_reports(report(4.73, 3.36, 4.9, 1), report(2.96, 2.7, 3.14, 1), {})).judgement.verdict,
            Verdict::kWorse);
  // An older report without the factor on one side: the other side's holds.
  EXPECT_EQ(only(compare_reports(report(4.73, 3.36, 4.9, 1), report(2.96, 2.7, 3.14, 3), {})).judgement.verdict,
            Verdict::kAmbiguous);
}

// A factor that holds for one kind of run only (io's warm page-cache reads:
// a fresh dataset each run, 1.35x between runs) leaves the others judged.
TEST(Compare, ARunToRunFactorForOneLabelValueAppliesToThoseMetricsOnly) {
  auto report = [](double warm, double cold) {
    Report r = one_metric(metric("throughput", warm, "MB/s", Better::kHigher, {{"cache", "warm"}}, warm * 0.97,
                                 warm * 1.03, 20),
                          "io");
    r.probes[0].metrics.push_back(
        metric("throughput", cold, "MB/s", Better::kHigher, {{"cache", "cold"}}, cold * 0.99, cold * 1.01, 20));
    r.probes[0].descriptors.push_back(measured("throughput", "MB/s", Better::kHigher, "test")
                                          .axes({"cache"})
                                          .run_to_run_where("cache", "warm", 1.5));
    return r;
  };
  const auto c = compare_reports(report(5000, 140), report(3800, 110), {});
  ASSERT_EQ(c.metrics.size(), 2u);
  for (const auto& d : c.metrics) {
    if (d.labels.at("cache") == "warm") {
      EXPECT_EQ(d.judgement.verdict, Verdict::kAmbiguous) << d.judgement.reason;
      EXPECT_NE(d.judgement.reason.find("differ by up to 1.5x"), std::string::npos) << d.judgement.reason;
    } else {
      EXPECT_EQ(d.judgement.verdict, Verdict::kWorse) << d.judgement.reason;  // -21 %, no factor
    }
  }
  // Beyond it, warm is judged too (5000 -> 3000: 1.67x).
  const auto far = compare_reports(report(5000, 140), report(3000, 140), {});
  for (const auto& d : far.metrics) {
    if (d.labels.at("cache") == "warm") {
      EXPECT_EQ(d.judgement.verdict, Verdict::kWorse) << d.judgement.reason;
    }
  }
}

// The host's other work during each side's run is named next to what moved:
// a probe slowed by a neighbour is not a node that got worse.
TEST(Compare, ABusyHostIsNamedNextToWhatMoved) {
  auto report = [](double v, double other) {
    Report r = one_metric(metric("busbw", v, "GB/s", Better::kHigher, {}, v * 0.98, v * 1.02, 8), "allreduce");
    r.probes[0].host_activity = HostActivity{3.0, 2, other, 0};
    return r;
  };
  const auto c = compare_reports(report(2.1, 0.1), report(0.07, 1.6), {});
  ASSERT_EQ(c.causes().size(), 1u);
  const auto lines = compare_to_json(c)["causes"][0]["text"];
  std::string all;
  for (const auto& l : lines) all += l.get<std::string>() + "\n";
  EXPECT_NE(all.find("host: other processes used 1.6 of 2 CPUs during the after run (0.1 before)"),
            std::string::npos) << all;
  // A quiet host on both sides says nothing.
  EXPECT_EQ(activity_text(HostActivity{3, 2, 0.1, 0}, HostActivity{3, 2, 0.2, 0}), "");
  // The busier side is named, whichever it is; a side not measured says so.
  EXPECT_NE(activity_text(HostActivity{3, 2, 1.2, 0}, std::nullopt).find("1.2 of 2 CPUs during the before run (not measured after)"),
            std::string::npos) << activity_text(HostActivity{3, 2, 1.2, 0}, std::nullopt);
  EXPECT_NE(activity_text(HostActivity{3, 8, 0, 0}, HostActivity{3, 8, 0, 1.0}).find("hypervisor took 0.0 (before) and 1.0 (after) of 8 CPUs"),
            std::string::npos);
}

TEST(Compare, OverlappingSpreadsBeyondThresholdAreAmbiguous) {
  // +10 % at the centre, but each side varied over +-15 %.
  const auto b = one_metric(metric("mb_per_s", 100, "MB/s", Better::kHigher, {}, 85, 115, 20));
  const auto a = one_metric(metric("mb_per_s", 110, "MB/s", Better::kHigher, {}, 94, 126, 20));
  const auto c = compare_reports(b, a, {});
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kAmbiguous);
  EXPECT_FALSE(c.any_worse());
}

TEST(Compare, SmallChangeWithTightSpreadsIsSame) {
  const auto b = one_metric(metric("mb_per_s", 100, "MB/s", Better::kHigher, {}, 99, 101, 20));
  const auto a = one_metric(metric("mb_per_s", 98, "MB/s", Better::kHigher, {}, 97, 99, 20));
  EXPECT_EQ(only(compare_reports(b, a, {})).judgement.verdict, Verdict::kSame);
}

TEST(Compare, ChangeInsideTheThresholdIsSameWhateverTheSpread) {
  const auto b = one_metric(metric("mb_per_s", 100, "MB/s", Better::kHigher, {}, 50, 150, 20));
  const auto a = one_metric(metric("mb_per_s", 101, "MB/s", Better::kHigher, {}, 52, 149, 20));
  EXPECT_EQ(only(compare_reports(b, a, {})).judgement.verdict, Verdict::kSame);
}

TEST(Compare, LowerIsBetterDirectionIsHonoured) {
  // Latency fell from 20 us to 10 us: better, not worse.
  const auto b = one_metric(metric("latency", 20, "us", Better::kLower, {}, 19, 21, 50));
  const auto a = one_metric(metric("latency", 10, "us", Better::kLower, {}, 9.5, 10.5, 50));
  EXPECT_EQ(only(compare_reports(b, a, {})).judgement.verdict, Verdict::kBetter);
  EXPECT_EQ(only(compare_reports(a, b, {})).judgement.verdict, Verdict::kWorse);
}

TEST(Compare, MeasuredValuesWithoutSpreadAreNeverWorse) {
  // One sample a side: a 12.5 % drop cannot be told from noise.
  const auto b = declared(metric("au", 0.80, "fraction", Better::kHigher), MetricKind::kMeasured);
  const auto a = declared(metric("au", 0.70, "fraction", Better::kHigher), MetricKind::kMeasured);
  const auto c = compare_reports(b, a, {});
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kAmbiguous);
  EXPECT_NE(only(c).judgement.reason.find("spread"), std::string::npos);
  EXPECT_FALSE(c.any_worse());
  CompareOptions loose;
  loose.threshold_pct = 20;
  EXPECT_EQ(only(compare_reports(b, a, loose)).judgement.verdict, Verdict::kSame);
}

TEST(Compare, CountsAreJudgedByTheThresholdAlone) {
  const auto b = declared(metric("mesh_unreachable", 0, "count", Better::kLower), MetricKind::kCount);
  const auto a = declared(metric("mesh_unreachable", 2, "count", Better::kLower), MetricKind::kCount);
  const auto c = compare_reports(b, a, {});
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kWorse);
  EXPECT_TRUE(std::isinf(only(c).judgement.delta_pct));
  EXPECT_EQ(format_delta(only(c).judgement.delta_pct), "+inf %");
}

TEST(Compare, ModelPredictionsAreNotJudged) {
  const auto b = declared(metric("predicted_step_time", 1, "s", Better::kLower), MetricKind::kModel);
  const auto a = declared(metric("predicted_step_time", 2, "s", Better::kLower), MetricKind::kModel);
  const auto c = compare_reports(b, a, {});
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kInvalid);
  EXPECT_FALSE(c.any_worse());
}

TEST(Compare, SpreadOnOneSideOnlyIsAmbiguous) {
  const auto single = one_metric(metric("mb_per_s", 100, "MB/s", Better::kHigher));
  const auto tight = one_metric(metric("mb_per_s", 120, "MB/s", Better::kHigher, {}, 118, 122, 20));
  EXPECT_EQ(only(compare_reports(single, tight, {})).judgement.verdict, Verdict::kAmbiguous);
  EXPECT_EQ(only(compare_reports(tight, single, {})).judgement.verdict, Verdict::kAmbiguous);
}

TEST(Compare, ThresholdIsAPercentageOfBefore) {
  const auto b = declared(metric("x", 100, "count", Better::kHigher), MetricKind::kCount);
  const auto a4 = declared(metric("x", 104.9, "count", Better::kHigher), MetricKind::kCount);
  const auto a5 = declared(metric("x", 105.1, "count", Better::kHigher), MetricKind::kCount);
  EXPECT_EQ(only(compare_reports(b, a4, {})).judgement.verdict, Verdict::kSame);
  EXPECT_EQ(only(compare_reports(b, a5, {})).judgement.verdict, Verdict::kBetter);
}

TEST(Compare, ThresholdMustBeAFiniteNonNegativeNumber) {
  CompareOptions o;
  EXPECT_EQ(check_options(o), "");
  o.threshold_pct = 0;
  EXPECT_EQ(check_options(o), "");
  for (double bad : {std::nan(""), -1.0, HUGE_VAL}) {
    o.threshold_pct = bad;
    const std::string why = check_options(o);
    EXPECT_NE(why.find("--threshold"), std::string::npos) << bad;
    EXPECT_EQ(why.find('\n'), std::string::npos);
  }
}

TEST(Compare, SettingsInConfigDoNotSplitPairsAndAreShownAsTheCause) {
  // nodeprobe-io read -w 2 -p 2 vs -w 1 -p 1: the settings are config, not labels.
  Report b = declared(metric("throughput", 1500, "MB/s", Better::kHigher, {}, 1450, 1550, 20), MetricKind::kMeasured);
  Report a = declared(metric("throughput", 780, "MB/s", Better::kHigher, {}, 750, 810, 20), MetricKind::kMeasured);
  b.probes[0].config = Json{{"workers", 2}, {"prefetch", 2}};
  a.probes[0].config = Json{{"workers", 1}, {"prefetch", 1}};
  const auto c = compare_reports(b, a, {});
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kWorse);
  const auto causes = c.causes();
  ASSERT_EQ(causes.size(), 1u);
  const auto lines = cause_lines(causes[0]);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "io: prefetch 2 -> 1, workers 2 -> 1");
  EXPECT_NE(lines[1].find("throughput -48.0 % worse (1500 MB/s -> 780 MB/s)"), std::string::npos) << lines[1];
}

TEST(Compare, LabelsThatAreNotAxesLeaveTheIdentity) {
  // A /1 report kept its settings as labels; the /2 side's descriptor says
  // which labels are axes, so the pair still matches.
  Report b = one_metric(metric("au", 0.9, "fraction", Better::kHigher, {{"workers", "2"}, {"layout", "files"}}, 0.88,
                               0.92, 10));
  b.schema = "nodeprobe.report/1";
  Report a = declared(metric("au", 0.5, "fraction", Better::kHigher, {{"layout", "files"}}, 0.45, 0.55, 10),
                      MetricKind::kMeasured, {"layout"});
  const auto c = compare_reports(b, a, {});
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(only(c).labels, (Labels{{"layout", "files"}}));
  EXPECT_EQ(only(c).judgement.verdict, Verdict::kWorse);
}

TEST(Compare, MissingMetricsAreListedPerSide) {
  Report b = base_report(), a = base_report();
  b.probes[add_probe(b, "io", Status::kPass)].metrics = {
      metric("mb_per_s", 1, "MB/s", Better::kHigher, {{"workers", "1"}}),
      metric("mb_per_s", 2, "MB/s", Better::kHigher, {{"workers", "2"}})};
  a.probes[add_probe(a, "io", Status::kPass)].metrics = {
      metric("mb_per_s", 2, "MB/s", Better::kHigher, {{"workers", "2"}}),
      metric("mb_per_s", 4, "MB/s", Better::kHigher, {{"workers", "4"}})};
  const auto c = compare_reports(b, a, {});
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].labels.at("workers"), "2");
  ASSERT_EQ(c.only_before.size(), 1u);
  EXPECT_EQ(c.only_before[0].labels.at("workers"), "1");
  ASSERT_EQ(c.only_after.size(), 1u);
  EXPECT_EQ(c.only_after[0].labels.at("workers"), "4");
}

TEST(Compare, MatchesByProbeNameAndLabelsNotPosition) {
  Report b = base_report(), a = base_report();
  b.probes[add_probe(b, "allreduce.fabric.tcp", Status::kPass)].metrics = {
      metric("busbw", 9, "GB/s", Better::kHigher, {{"size", "1024"}}),
      metric("busbw", 5, "GB/s", Better::kHigher, {{"size", "64"}})};
  b.probes[add_probe(b, "allreduce.fabric.shm", Status::kPass)].metrics = {
      metric("busbw", 20, "GB/s", Better::kHigher, {{"size", "1024"}})};
  a.probes[add_probe(a, "allreduce.fabric.shm", Status::kPass)].metrics = {
      metric("busbw", 20, "GB/s", Better::kHigher, {{"size", "1024"}})};
  a.probes[add_probe(a, "allreduce.fabric.tcp", Status::kPass)].metrics = {
      metric("busbw", 5, "GB/s", Better::kHigher, {{"size", "64"}}),
      metric("busbw", 9, "GB/s", Better::kHigher, {{"size", "1024"}})};
  const auto c = compare_reports(b, a, {});
  EXPECT_EQ(c.metrics.size(), 3u);
  EXPECT_EQ(c.count(Verdict::kSame), 3u);
  EXPECT_TRUE(c.only_before.empty());
  EXPECT_TRUE(c.only_after.empty());
}

TEST(Compare, RepeatedKeysPairInOrder) {
  Report b = base_report(), a = base_report();
  b.probes[add_probe(b, "gemm", Status::kPass)].metrics = {metric("t", 10, "", Better::kHigher, {}, 9.9, 10.1, 10),
                                                            metric("t", 20, "", Better::kHigher, {}, 19.9, 20.1, 10)};
  a.probes[add_probe(a, "gemm", Status::kPass)].metrics = {metric("t", 10, "", Better::kHigher, {}, 9.9, 10.1, 10),
                                                            metric("t", 10, "", Better::kHigher, {}, 9.9, 10.1, 10)};
  const auto c = compare_reports(b, a, {});
  ASSERT_EQ(c.metrics.size(), 2u);
  EXPECT_EQ(c.metrics[0].judgement.verdict, Verdict::kSame);
  EXPECT_EQ(c.metrics[1].occurrence, 1);
  EXPECT_EQ(c.metrics[1].judgement.verdict, Verdict::kWorse);
}

TEST(Compare, UnitChangeAndNonFiniteValuesAreNotJudged) {
  const auto b = one_metric(metric("x", 100, "MB/s", Better::kHigher));
  const auto a = one_metric(metric("x", 100, "GB/s", Better::kHigher));
  EXPECT_EQ(only(compare_reports(b, a, {})).judgement.verdict, Verdict::kInvalid);
  const auto n = one_metric(metric("x", std::nan(""), "MB/s", Better::kHigher));
  EXPECT_EQ(only(compare_reports(b, n, {})).judgement.verdict, Verdict::kInvalid);
}

TEST(Compare, SideUsesP5P95ThenMinMax) {
  Metric m = metric("x", 10, "", Better::kHigher, {}, 9, 11, 20);
  EXPECT_EQ(side_of(m).spread, "p5..p95");
  m.stats->n = 19;  // too few samples for percentiles to mean much: every sample counts
  EXPECT_EQ(side_of(m).spread, "min..max");
  m.stats->n = 20;
  m.stats->p5 = m.stats->p95 = 10;
  EXPECT_EQ(side_of(m).spread, "min..max");
  m.stats->min = m.stats->max = 10;
  EXPECT_TRUE(side_of(m).has_spread);  // identical samples: a known zero spread
  EXPECT_EQ(side_of(m).lo, 10);
  m.stats->n = 1;
  EXPECT_FALSE(side_of(m).has_spread);
}

TEST(Compare, StatusChangesAreListedWithRegressions) {
  Report b = base_report(), a = base_report();
  auto& pb = b.probes[add_probe(b, "limits", Status::kPass)];
  Check ch;
  ch.id = "limits.somaxconn";
  ch.status = Status::kPass;
  pb.checks.push_back(ch);
  auto& pa = a.probes[add_probe(a, "limits", Status::kWarn)];
  ch.status = Status::kWarn;
  pa.checks.push_back(ch);
  const auto c = compare_reports(b, a, {});
  ASSERT_EQ(c.statuses.size(), 2u);
  EXPECT_TRUE(c.statuses[0].regression);
  EXPECT_EQ(c.statuses[1].check, "limits.somaxconn");
}

}  // namespace
}  // namespace nodeprobe
