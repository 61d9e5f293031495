#include "windows.h"

#include <algorithm>
#include <cmath>

#include "nodeprobe/stats.h"

namespace nodeprobe::io {

WindowSamples window_samples(const LoaderResult& res, bool with_step, std::size_t max_windows,
                             std::size_t min_batches) {
  WindowSamples out;
  const std::size_t n = res.batches.size();
  if (n == 0) return out;
  const double total = std::max(0.0, res.batches.back().end_s);
  const auto by_time = static_cast<std::size_t>(std::floor(total / kWindowSeconds));
  std::size_t k = std::clamp(by_time, kMinWindows, std::max(kMinWindows, max_windows));
  k = std::clamp<std::size_t>(std::min(k, n / std::max<std::size_t>(1, min_batches)), 1, std::max<std::size_t>(1, max_windows));
  out.window_s = total / static_cast<double>(k);
  // Every worker of the run, also one the dispatch left without a batch.
  auto workers = static_cast<std::uint32_t>(res.workers.size());
  for (const BatchRecord& b : res.batches) workers = std::max(workers, b.worker + 1);
  out.worker_samples_per_s.resize(workers);

  // Window j ends with the first batch that ends at or after j x total / k
  // and gives it min_batches batches. After a stall longer than a window the
  // cut points it passed over end the next windows min_batches batches
  // apart: the run keeps its k windows (compare needs their number).
  double prev_end = 0, prev_cpu = 0;
  std::size_t lo = 0, cut = 1;
  const double slack = 1e-9 * total;
  for (std::size_t i = 0; i < n; ++i) {
    const bool last = i + 1 == n;
    const double end = res.batches[i].end_s;
    const std::size_t left = n - (i + 1);
    // Due by time, or now or never: the batches left are just enough for the windows left.
    const bool due = cut < k && i + 1 - lo >= min_batches && left >= min_batches &&
                     (end + slack >= static_cast<double>(cut) * out.window_s || left <= (k - cut) * min_batches);
    if (!due && !last) continue;
    const std::size_t hi = i + 1;
    std::uint64_t samples = 0, bytes = 0, h2d_bytes = 0;
    double wait = 0, compute = 0, h2d_s = 0;
    std::vector<double> latency_ms;
    std::vector<std::uint64_t> worker_samples(workers, 0);
    for (std::size_t b = lo; b < hi; ++b) {
      const BatchRecord& r = res.batches[b];
      samples += r.samples;
      bytes += r.bytes;
      if (b > 0) wait += r.wait_s;  // the run's first batch is start-up
      compute += r.compute_s;
      h2d_s += r.h2d_s;
      h2d_bytes += r.h2d_bytes;
      if (r.latency_s >= 0) latency_ms.push_back(r.latency_s * 1e3);
      worker_samples[r.worker] += r.samples;
    }
    const double cpu = res.batches[i].cpu_s;
    const double dt = end - prev_end;
    if (dt > 0) {
      out.samples_per_s.push_back(static_cast<double>(samples) / dt);
      out.mb_per_s.push_back(static_cast<double>(bytes) / dt / 1e6);
      for (std::uint32_t w = 0; w < workers; ++w)
        out.worker_samples_per_s[w].push_back(static_cast<double>(worker_samples[w]) / dt);
    }
    if (samples > 0) out.cpu_us_per_sample.push_back((cpu - prev_cpu) / static_cast<double>(samples) * 1e6);
    if (with_step && wait + compute > 0) {
      out.wait_fraction.push_back(wait / (wait + compute));
      out.au.push_back(compute / (wait + compute));
    }
    if (h2d_s > 0) out.h2d_gb_s.push_back(static_cast<double>(h2d_bytes) / h2d_s / 1e9);
    if (!latency_ms.empty()) {
      std::sort(latency_ms.begin(), latency_ms.end());
      out.latency_p99_ms.push_back(percentile_sorted(latency_ms, 0.99));
    }
    ++out.windows;
    prev_end = end;
    prev_cpu = cpu;
    lo = hi;
    if (due) ++cut;
  }
  return out;
}

}  // namespace nodeprobe::io
