#pragma once
/// The spread of a loader run: its batches cut into consecutive windows of
/// equal batch count, each giving one sample of throughput, AU, data wait,
/// CPU per sample and H2D bandwidth. Windows (not epochs) because the quick
/// profiles read one epoch; a window boundary falls between batches, so the
/// windows' durations add up to the run's measured time.

#include <cstddef>
#include <vector>

#include "loader.h"

namespace nodeprobe::io {

struct WindowSamples {
  std::vector<double> samples_per_s;
  std::vector<double> mb_per_s;         ///< 1e6 B/s
  std::vector<double> au;               ///< only with a step time
  std::vector<double> wait_fraction;    ///< only with a step time
  std::vector<double> cpu_us_per_sample;
  std::vector<double> h2d_gb_s;         ///< only with device copies
  std::size_t windows = 0;
  std::size_t batches_per_window = 0;
};

/// At most `max_windows` windows of at least `min_batches` batches each.
/// The run's very first batch is left out of AU and data wait (start-up,
/// as summarize() does).
WindowSamples window_samples(const LoaderResult& res, bool with_step, std::size_t max_windows = 20,
                             std::size_t min_batches = 3);

}  // namespace nodeprobe::io
