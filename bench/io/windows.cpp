#include "windows.h"

#include <algorithm>

namespace nodeprobe::io {

WindowSamples window_samples(const LoaderResult& res, bool with_step, std::size_t max_windows,
                             std::size_t min_batches) {
  WindowSamples out;
  const std::size_t n = res.batches.size();
  if (n == 0) return out;
  const std::size_t k = std::clamp<std::size_t>(n / std::max<std::size_t>(1, min_batches), 1, max_windows);
  out.windows = k;
  out.batches_per_window = n / k;
  double prev_end = 0, prev_cpu = 0;
  for (std::size_t w = 0; w < k; ++w) {
    const std::size_t lo = w * n / k, hi = (w + 1) * n / k;
    std::uint64_t samples = 0, bytes = 0, h2d_bytes = 0;
    double wait = 0, compute = 0, h2d_s = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      const BatchRecord& b = res.batches[i];
      samples += b.samples;
      bytes += b.bytes;
      if (i > 0) wait += b.wait_s;  // the run's first batch is start-up
      compute += b.compute_s;
      h2d_s += b.h2d_s;
      h2d_bytes += b.h2d_bytes;
    }
    const double end = res.batches[hi - 1].end_s;
    const double cpu = res.batches[hi - 1].cpu_s;
    const double dt = end - prev_end;
    if (dt > 0) {
      out.samples_per_s.push_back(static_cast<double>(samples) / dt);
      out.mb_per_s.push_back(static_cast<double>(bytes) / dt / 1e6);
    }
    if (samples > 0) out.cpu_us_per_sample.push_back((cpu - prev_cpu) / static_cast<double>(samples) * 1e6);
    if (with_step && wait + compute > 0) {
      out.wait_fraction.push_back(wait / (wait + compute));
      out.au.push_back(compute / (wait + compute));
    }
    if (h2d_s > 0) out.h2d_gb_s.push_back(static_cast<double>(h2d_bytes) / h2d_s / 1e9);
    prev_end = end;
    prev_cpu = cpu;
  }
  return out;
}

}  // namespace nodeprobe::io
