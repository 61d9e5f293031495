#include "io_metrics.h"

#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe::io {
namespace {

// Tail latency, CPU per sample and the data-wait share move between two runs
// of an unchanged node beyond one run's windows (its CPU placement, page
// cache state): bench/compare/run_to_run.sh --runs 8 -- nodeprobe-io accept
// --profile quick, three rounds on the 2-vCPU VM, pairs of runs separating
// at up to 1.71x (batch_latency_p99, cold files: 10 of 28 pairs in one
// round, 0 in another), 1.52x (cpu_per_sample, cold files: 11 of 28) and
// 1.47x (data_wait_fraction: 2 of 28). Throughput, samples/s and AU, which
// a tuning change moves, kept within one run's spread (0-1 of 28 once warm
// epochs were spread out, accept_probe.cpp) and carry no factor.
constexpr double kSecondaryRunToRun = 2;
// batch_latency_p99 is about the slowest batch of each window, so one stall
// of the host in a run moves all of it: in bench/compare/aa_compare.sh
// --pairs 8 (idle machine) warm files went 0.657 -> 2.3 ms (3.5x), intervals
// apart, nothing changed. A real tail regression (a throttled volume, a
// remote filesystem) moves it by more: compare calls it worse beyond 4x.
constexpr double kTailRunToRun = 4;
// Warm reads copy from the page cache pages of a dataset each run writes
// afresh: run_to_run.sh --runs 12 (idle) gave warm shards throughput 1.35x
// between runs against 1.23x within one (9 of 66 pairs separating, the same
// with the epochs 40 or 150 ms apart, so the variation is the run's, not a
// moment's); aa_compare.sh --pairs 8 called one unchanged pair worse, -23.6 %.
// Cold reads (the storage) kept within one run's spread: no factor there.
constexpr double kWarmRunToRun = 1.5;

}  // namespace

std::vector<MetricDescriptor> run_metrics(const std::vector<std::string>& axes) {
  const bool sweep = axes == kSweepAxes;
  std::vector<std::string> with_worker = axes;
  with_worker.push_back("worker");
  DescriptorBuilder samples = measured("samples_per_s", "samples/s", Better::kHigher,
                                       "samples delivered to the training loop per second (spread: per window of batches)")
                                  .axes(axes)
                                  .run_to_run_where("cache", "warm", kWarmRunToRun)
                                  .key(3, "samples/s best");
  DescriptorBuilder au = measured("au", "fraction", Better::kHigher,
                                  "accelerator utilisation: share of the step loop not waiting for data (MLPerf Storage AU)")
                             .titled("AU")
                             .axes(axes)
                             .percent(1)
                             .key(1, "AU best");
  if (sweep) {
    samples.line_chart("io-workers-samples", "IO samples/s vs workers", "workers", "workers (num_workers)");
    au.line_chart("io-workers-au", "Accelerator utilisation (AU) vs workers", "workers", "workers (num_workers)");
  }
  return {
      samples,
      measured("throughput", "MB/s", Better::kHigher, "record bytes delivered per second (spread: per window of batches)")
          .axes(axes)
          .run_to_run_where("cache", "warm", kWarmRunToRun)
          .key(2, "best"),
      au,
      measured("data_wait_fraction", "fraction", Better::kLower,
               "share of the step loop spent waiting for the next batch")
          .titled("data wait")
          .axes(axes)
          .percent(1)
          .run_to_run(kSecondaryRunToRun),
      measured("batch_latency_p50", "ms", Better::kLower, "a worker's time to read and verify one batch (median)")
          .axes(axes),
      measured("batch_latency_p99", "ms", Better::kLower,
               "99th percentile of the batch latencies (spread: per window; a window of fewer than 100 batches "
               "gives about its slowest)")
          .axes(axes)
          .run_to_run(kTailRunToRun),
      measured("cpu_per_sample", "us", Better::kLower, "process CPU time per delivered sample (spread: per window)")
          .axes(axes)
          .run_to_run(kSecondaryRunToRun),
      measured("first_batch_wait", "ms", Better::kLower,
               "wait for an epoch's first batch while its workers start (median; spread: one sample per epoch)")
          .axes(axes),
      counted("peak_rss", "MB", Better::kLower, "peak resident memory of the process (a reading, not sampled)")
          .axes(axes),
      measured("h2d_throughput", "GB/s", Better::kHigher, "host to device copy bandwidth of the batches (spread: per window)")
          .axes(axes),
      measured("worker_samples_per_s", "samples/s", Better::kHigher,
               "samples one worker read per second of the run (spread: per window)")
          .axes(with_worker),
  };
}

std::vector<MetricDescriptor> sweep_model_metrics() {
  const std::vector<std::string> layout{"layout"};
  return {
      measured("storage_ceiling", "samples/s", Better::kHigher,
               "what the storage feeds the native reader, most workers and prefetch, no step (spread: per window)")
          .axes(layout),
      measured("loader_ceiling", "samples/s", Better::kHigher,
               "what the modelled PyTorch DataLoader's CPU allows without IO, no step (spread: per window)")
          .axes(layout),
      derived("consumer_demand", "samples/s", Better::kHigher, "what the training step takes: batch / step time")
          .axes(layout),
      derived("peer_au", "fraction", Better::kHigher,
              "AU a real torch.utils.data.DataLoader reached at this setting (--peer torch; one number from its run)")
          .titled("peer AU")
          .axes(kSweepAxes)
          .percent(1),
      derived("peer_samples_per_s", "samples/s", Better::kHigher,
              "samples/s of the real DataLoader at this setting (--peer torch; one number from its run)")
          .axes(kSweepAxes),
  };
}

// The write windows of one prepare share its writeback state (dirty pages
// the previous run left, the device's cache), so two unchanged runs differ
// beyond one run's spread: an A/A accept pair in CI gave 822 (720..964) ->
// 411 (289..574) MB/s. bench/compare/run_to_run.sh --runs 6 -- nodeprobe-io
// accept --profile quick (load 2): shards 3.75x and files 2.40x between runs,
// 3 of 15 pairs of runs separating; on an idle machine (2026-12-02, 8 runs)
// files 4.92x (422 -> 86.5 MB/s, 14 of 28 pairs separating) and 2.68x. compare
// calls neither worse within 6x.
constexpr double kWriteRunToRun = 6;

std::vector<MetricDescriptor> prepare_metrics(const std::vector<std::string>& axes) {
  return {measured("write_throughput", "MB/s", Better::kHigher,
                   "dataset bytes written and synced per second (spread: per window of samples, each synced)")
              .axes(axes)
              .run_to_run(kWriteRunToRun)};
}

}  // namespace nodeprobe::io
