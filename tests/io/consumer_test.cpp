#include <gtest/gtest.h>

#include <vector>

#include "consumer.h"
#include "windows.h"

namespace nodeprobe::io {
namespace {

// Batches become ready after scripted delays on a fake clock.
class ScriptedSource final : public BatchSource {
 public:
  ScriptedSource(FakeClock& clock, std::vector<double> waits, std::size_t fail_at = SIZE_MAX)
      : clock_(clock), waits_(std::move(waits)), fail_at_(fail_at) {}
  bool acquire(std::size_t k) override {
    clock_.advance(waits_.at(k));
    acquired.push_back(k);
    return k != fail_at_;
  }
  void release(std::size_t k) override { released.push_back(k); }
  std::vector<std::size_t> acquired, released;

 private:
  FakeClock& clock_;
  std::vector<double> waits_;
  std::size_t fail_at_;
};

TEST(IoConsumer, WaitAndComputeArithmetic) {
  FakeClock clock;
  ScriptedSource src(clock, {0.5, 0.0, 0.01, 0.03});
  ConsumerTimes t;
  consume(src, clock, 4, 0.02, true, nullptr, nullptr, t);
  EXPECT_EQ(t.batches, 4u);
  EXPECT_DOUBLE_EQ(t.first_wait_s, 0.5);
  EXPECT_NEAR(t.wait_s, 0.54, 1e-12);
  EXPECT_NEAR(t.compute_s, 0.08, 1e-12);
  // First batch excluded (MLPerf): wait 0.04 of 0.04 + 0.08.
  const WaitSummary s = summarize(t);
  EXPECT_NEAR(s.wait_fraction, 0.04 / 0.12, 1e-12);
  EXPECT_NEAR(s.au, 0.08 / 0.12, 1e-12);
  EXPECT_EQ(src.released, (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(IoConsumer, LaterEpochsDoNotResetTheFirstWait) {
  FakeClock clock;
  ScriptedSource e1(clock, {1.0, 0.0}), e2(clock, {0.25, 0.0});
  ConsumerTimes t;
  consume(e1, clock, 2, 0.1, true, nullptr, nullptr, t);
  consume(e2, clock, 2, 0.1, false, nullptr, nullptr, t);
  EXPECT_DOUBLE_EQ(t.first_wait_s, 1.0);
  // The second epoch's start-up wait counts: 0.25 / (0.25 + 0.4).
  EXPECT_NEAR(summarize(t).wait_fraction, 0.25 / 0.65, 1e-12);
}

TEST(IoConsumer, OnBatchTimeCountsAsCompute) {
  FakeClock clock;
  ScriptedSource src(clock, {0, 0, 0});
  ConsumerTimes t;
  std::vector<std::size_t> seen;
  consume(src, clock, 3, 0.0, true, [&](std::size_t k) { seen.push_back(k); clock.advance(0.002); }, nullptr, t);
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_NEAR(t.compute_s, 0.006, 1e-12);
  EXPECT_DOUBLE_EQ(t.wait_s, 0.0);
  EXPECT_DOUBLE_EQ(summarize(t).au, 1.0);
}

TEST(IoConsumer, StopsOnFailureAndOnRequest) {
  FakeClock clock;
  ScriptedSource failing(clock, {0, 0, 0.3, 0}, 2);
  ConsumerTimes t;
  consume(failing, clock, 4, 0.01, true, nullptr, nullptr, t);
  EXPECT_EQ(t.batches, 2u);
  EXPECT_EQ(failing.released, (std::vector<std::size_t>{0, 1}));  // the failed batch is not released
  EXPECT_NEAR(t.wait_s, 0.3, 1e-12);

  ScriptedSource src(clock, {0, 0, 0, 0});
  ConsumerTimes t2;
  int calls = 0;
  consume(src, clock, 4, 0.01, true, nullptr, [&] { return ++calls > 2; }, t2);
  EXPECT_EQ(t2.batches, 2u);
}

TEST(IoConsumer, NoTimeMeansNoFraction) {
  const WaitSummary s = summarize(ConsumerTimes{});
  EXPECT_EQ(s.wait_fraction, 0.0);
  EXPECT_EQ(s.au, 0.0);
}

}  // namespace
TEST(Windows, ThroughputAndAuPerWindowAddUpToTheRun) {
  // 12 batches of 10 samples x 1000 bytes, one every 10 ms; the consumer waited
  // 5 ms before each of the last 6 (a slower second half).
  LoaderResult res;
  double t = 0;
  for (int k = 0; k < 12; ++k) {
    BatchRecord b;
    b.wait_s = k >= 6 ? 0.005 : 0.0;
    b.compute_s = 0.010 - b.wait_s;
    t += 0.010;
    b.end_s = t;
    b.samples = 10;
    b.bytes = 10000;
    b.cpu_s = 0.001 * (k + 1);
    res.batches.push_back(b);
  }
  const WindowSamples w = window_samples(res, true, 4, 3);
  ASSERT_EQ(w.windows, 4u);
  ASSERT_EQ(w.samples_per_s.size(), 4u);
  for (double v : w.samples_per_s) EXPECT_NEAR(v, 1000, 1e-6);  // 30 samples in 30 ms
  for (double v : w.mb_per_s) EXPECT_NEAR(v, 1.0, 1e-9);
  ASSERT_EQ(w.au.size(), 4u);
  EXPECT_NEAR(w.au[0], 1.0, 1e-12);
  EXPECT_NEAR(w.au[3], 0.5, 1e-12);
  EXPECT_NEAR(w.wait_fraction[3], 0.5, 1e-12);
  for (double v : w.cpu_us_per_sample) EXPECT_NEAR(v, 100, 1e-6);  // 1 ms CPU per 10 samples
  EXPECT_TRUE(w.h2d_gb_s.empty());
  // Without a step time there is no AU; with too few batches, one window.
  EXPECT_TRUE(window_samples(res, false).au.empty());
  res.batches.resize(2);
  EXPECT_EQ(window_samples(res, true).windows, 1u);
}

}  // namespace nodeprobe::io
