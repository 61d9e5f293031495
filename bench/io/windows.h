#pragma once
/// The spread of a loader run: its batches cut into consecutive windows of
/// time, each giving one sample of throughput, AU, data wait, CPU per sample,
/// H2D bandwidth, batch latency p99 and each worker's samples/s. Windows (not
/// epochs) because the quick profiles read one epoch; a window boundary falls
/// between batches, so the windows' durations add up to the run's measured time.
///
/// How long a window is: as long as the run allows while still giving
/// kMinWindows of them (the fewest that `nodeprobe compare` can tell from
/// noise: two runs of 7 samples a side separate by chance 1 in 1716), and
/// at least kWindowSeconds where the run is long enough. A CPU quota
/// (cgroup cpu.max; Kubernetes and Docker CPU limits) runs a throttled node
/// at full speed for the first part of every 100 ms period and stops it for
/// the rest: a window shorter than the period measures where in the period
/// it fell (some read as fast as an idle node), a window of a whole period or
/// more measures the rate the node sustains. Each window also holds at least
/// `min_batches` batches.

#include <cstddef>
#include <vector>

#include "loader.h"

namespace nodeprobe::io {

/// The fewest windows a run long enough for them is cut into.
inline constexpr std::size_t kMinWindows = 7;
/// The shortest window once the run lasts kMinWindows of them: the default
/// CFS quota period (cpu.cfs_period_us, cpu.max), the time scale of CPU limits.
inline constexpr double kWindowSeconds = 0.1;

struct WindowSamples {
  std::vector<double> samples_per_s;
  std::vector<double> mb_per_s;         ///< 1e6 B/s
  std::vector<double> au;               ///< only with a step time
  std::vector<double> wait_fraction;    ///< only with a step time
  std::vector<double> cpu_us_per_sample;
  std::vector<double> h2d_gb_s;         ///< only with device copies
  std::vector<double> latency_p99_ms;   ///< p99 of the window's batch latencies (where known)
  /// Per worker (index = worker): the samples of the batches it read that
  /// the consumer received in the window, per second of the window.
  std::vector<std::vector<double>> worker_samples_per_s;
  std::size_t windows = 0;
  double window_s = 0;                  ///< the intended length of a window
};

/// Between kMinWindows and `max_windows` windows of at least `min_batches`
/// batches each (fewer when the run has fewer batches), as described above.
/// The run's very first batch is left out of AU and data wait (start-up,
/// as summarize() does).
WindowSamples window_samples(const LoaderResult& res, bool with_step, std::size_t max_windows = 20,
                             std::size_t min_batches = 3);

}  // namespace nodeprobe::io
