// Windows of a loader run (windows.h) and what compare makes of them: a CPU
// quota with long periods, per-window latency p99 and per-worker rates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "io_report.h"
#include "nodeprobe/compare.h"
#include "windows.h"

namespace nodeprobe::io {
namespace {

constexpr std::uint64_t kBatch = 32;

// A run of `batches` batches of kBatch samples. Each batch needs `cpu_s` of
// CPU and `wall_s` of wall time in all at full speed (jittered by a few
// percent, differently per `seed`). With a quota, the process gets `quota_s`
// of CPU per `period_s` and is stopped for the rest of the period once that
// is spent (CFS bandwidth control: cpu.max "quota period").
LoaderResult run_of(std::size_t batches, double wall_s, double cpu_s, double quota_s, double period_s, int seed,
                    std::uint32_t workers = 2) {
  LoaderResult res;
  double t = 0, used = 0, period_end = period_s;
  for (std::size_t k = 0; k < batches; ++k) {
    const double jitter = 1 + 0.04 * std::sin(static_cast<double>(k * 7 + static_cast<std::size_t>(seed) * 13));
    if (quota_s > 0 && used + cpu_s > quota_s) {  // throttled until the next period
      t = std::max(t, period_end);
      period_end = t + period_s;
      used = 0;
    }
    t += wall_s * jitter;
    used += cpu_s;
    while (quota_s > 0 && t >= period_end) {  // a period boundary passed while running
      period_end += period_s;
      used = 0;
    }
    BatchRecord b;
    b.end_s = t;
    b.samples = kBatch;
    b.bytes = kBatch * 1000;
    b.compute_s = wall_s * jitter;
    b.cpu_s = cpu_s * static_cast<double>(k + 1);
    b.latency_s = 0.001 * jitter;
    b.worker = static_cast<std::uint32_t>(k % workers);
    res.batches.push_back(b);
  }
  res.samples = batches * kBatch;
  res.bytes = batches * kBatch * 1000;
  res.elapsed_s = t;
  res.cpu_s = cpu_s * static_cast<double>(batches);
  for (const BatchRecord& b : res.batches) res.batch_latency_s.push_back(b.latency_s);
  res.workers.resize(workers);
  for (const BatchRecord& b : res.batches) res.workers[b.worker].samples += b.samples;
  return res;
}

Report report_of(const LoaderResult& res) {
  ProbeResult p;
  p.name = "io";
  p.status = Status::kPass;
  declare_metrics(p, run_metrics({}));
  LoaderConfig cfg;
  cfg.workers = res.workers.size();
  add_run_metrics(p, cfg, res, {}, true);
  Report r;
  r.probes.push_back(p);
  return r;
}

const MetricDiff& diff(const Comparison& c, const std::string& name) {
  for (const auto& d : c.metrics)
    if (d.name == name && d.labels.empty()) return d;
  throw std::runtime_error("no metric " + name);
}

TEST(Windows, AShortRunGivesSevenWindowsALongOneWindowsOfAPeriod) {
  // 0.3 s: 7 windows (the fewest compare can judge), ~43 ms each.
  WindowSamples w = window_samples(run_of(141, 0.002, 0.0005, 0, 0, 1), false);
  EXPECT_EQ(w.windows, kMinWindows);
  EXPECT_EQ(w.samples_per_s.size(), kMinWindows);
  // 1.4 s: windows of 100 ms (one CFS period), not more than the batches allow.
  w = window_samples(run_of(700, 0.002, 0.0005, 0, 0, 1), false);
  EXPECT_EQ(w.windows, 14u);
  EXPECT_NEAR(w.window_s, 0.1, 0.01);
  // 10 s: at most 20.
  EXPECT_EQ(window_samples(run_of(5000, 0.002, 0.0005, 0, 0, 1), false).windows, 20u);
  // 12 batches: 4 windows of 3.
  EXPECT_EQ(window_samples(run_of(12, 0.002, 0.0005, 0, 0, 1), false).windows, 4u);
}

TEST(Windows, ACpuQuotaInLongPeriodsReadsAsTheRateItSustains) {
  // 5 % of a CPU in 100 ms periods: 10 batches at full speed (20 ms), then
  // stopped for 80 ms. Windows of a whole period or more each see that;
  // none reads as fast as the unthrottled run.
  const LoaderResult idle = run_of(141, 0.002, 0.0005, 0, 0, 1);
  const LoaderResult again = run_of(141, 0.002, 0.0005, 0, 0, 2);
  const LoaderResult quota = run_of(141, 0.002, 0.0005, 0.005, 0.1, 1);
  const WindowSamples wi = window_samples(idle, false), wq = window_samples(quota, false);
  ASSERT_GE(wq.windows, kMinWindows);
  EXPECT_LT(*std::max_element(wq.samples_per_s.begin(), wq.samples_per_s.end()),
            0.5 * *std::min_element(wi.samples_per_s.begin(), wi.samples_per_s.end()));

  const CompareOptions opt;
  const Comparison throttled = compare_reports(report_of(idle), report_of(quota), opt);
  for (const char* m : {"samples_per_s", "throughput"})
    EXPECT_EQ(diff(throttled, m).judgement.verdict, Verdict::kWorse) << m << ": " << diff(throttled, m).judgement.reason;
  for (const auto& d : throttled.metrics)
    if (d.name == "worker_samples_per_s") {
      EXPECT_EQ(d.judgement.verdict, Verdict::kWorse) << d.judgement.reason;
    }
  // The same run twice, jittered differently: nothing worse.
  const Comparison aa = compare_reports(report_of(idle), report_of(again), opt);
  EXPECT_FALSE(aa.any_worse());
}

TEST(Windows, LatencyP99AndWorkerRatesPerWindow) {
  LoaderResult res = run_of(42, 0.01, 0.001, 0, 0, 1, 3);
  res.batches[40].latency_s = 0.5;  // one slow batch, in the last window
  const WindowSamples w = window_samples(res, false);
  ASSERT_EQ(w.windows, kMinWindows);
  ASSERT_EQ(w.latency_p99_ms.size(), kMinWindows);
  for (std::size_t j = 0; j + 1 < kMinWindows; ++j) EXPECT_LT(w.latency_p99_ms[j], 1.1);
  EXPECT_GT(w.latency_p99_ms.back(), 100);
  ASSERT_EQ(w.worker_samples_per_s.size(), 3u);
  for (std::size_t j = 0; j < kMinWindows; ++j) {
    double sum = 0;
    for (const auto& per_worker : w.worker_samples_per_s) sum += per_worker.at(j);
    EXPECT_NEAR(sum, w.samples_per_s[j], 1e-6 * w.samples_per_s[j]);
  }
  // The report carries them as spreads: every measured metric has 2 samples or more.
  ProbeResult p;
  declare_metrics(p, run_metrics({}));
  res.epoch_first_wait_s = {0.004, 0.002, 0.003};
  LoaderConfig cfg;
  cfg.workers = 3;
  add_run_metrics(p, cfg, res, {}, true);
  for (const Metric& m : p.metrics)
    if (find_descriptor(p, m.name)->kind == MetricKind::kMeasured) {
      ASSERT_TRUE(m.stats) << m.name;
      EXPECT_GE(m.stats->n, 2u) << m.name;
    }
  for (const Metric& m : p.metrics)
    if (m.name == "first_batch_wait") {
      EXPECT_EQ(m.stats->n, 3u);
      EXPECT_DOUBLE_EQ(m.value, 3);  // the median epoch, ms
    }
}

}  // namespace
}  // namespace nodeprobe::io
