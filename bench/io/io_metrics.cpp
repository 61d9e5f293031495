#include "io_metrics.h"

#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe::io {

std::vector<MetricDescriptor> run_metrics(const std::vector<std::string>& axes) {
  const bool sweep = axes == kSweepAxes;
  std::vector<std::string> with_worker = axes;
  with_worker.push_back("worker");
  DescriptorBuilder samples = measured("samples_per_s", "samples/s", Better::kHigher,
                                       "samples delivered to the training loop per second (spread: per window of batches)")
                                  .axes(axes)
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
          .key(2, "best"),
      au,
      measured("data_wait_fraction", "fraction", Better::kLower,
               "share of the step loop spent waiting for the next batch")
          .titled("data wait")
          .axes(axes)
          .percent(1),
      measured("batch_latency_p50", "ms", Better::kLower, "a worker's time to read and verify one batch (median)")
          .axes(axes),
      derived("batch_latency_p99", "ms", Better::kLower,
              "99th percentile of the batch latencies (one number from all batches)")
          .axes(axes),
      measured("cpu_per_sample", "us", Better::kLower, "process CPU time per delivered sample (spread: per window)")
          .axes(axes),
      measured("first_batch_wait", "ms", Better::kLower, "wait for the very first batch (start-up; one sample per run)")
          .axes(axes),
      counted("peak_rss", "MB", Better::kLower, "peak resident memory of the process (a reading, not sampled)")
          .axes(axes),
      measured("h2d_throughput", "GB/s", Better::kHigher, "host to device copy bandwidth of the batches (spread: per window)")
          .axes(axes),
      derived("worker_samples_per_s", "samples/s", Better::kHigher, "samples one worker read per second of the run")
          .axes(with_worker),
  };
}

std::vector<MetricDescriptor> prepare_metrics(const std::vector<std::string>& axes) {
  return {measured("write_throughput", "MB/s", Better::kHigher,
                   "dataset bytes written and synced per second (one sample: the whole write and its sync)")
              .axes(axes)};
}

}  // namespace nodeprobe::io
