#pragma once
/// The training-loop side of the DataLoader emulation: take batches in order,
/// wait for each one that is not ready (data wait), then spend the step time
/// on it (GPU step). Clock-injected: tests run it on a FakeClock.

#include <cstddef>
#include <functional>
#include <vector>

#include "nodeprobe/clock.h"

namespace nodeprobe::io {

/// Where batches come from (the loader's slots, or a fake in tests).
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// Blocks until batch k is ready. False when the run stops instead (error, stop request).
  virtual bool acquire(std::size_t k) = 0;
  /// The consumer is done with batch k; its slot may be refilled.
  virtual void release(std::size_t k) = 0;
};

/// One consumed batch: what it waited for, what its step took, and the clock
/// time when the step ended (per-window spread of AU and throughput).
struct BatchMark {
  double wait_s = 0, compute_s = 0, end_s = 0;
};

struct ConsumerTimes {
  std::vector<BatchMark> marks;  ///< one per consumed batch, in order
  double wait_s = 0;        ///< time blocked in acquire, all batches
  double compute_s = 0;     ///< time in the step (copy to device + step emulation)
  double first_wait_s = 0;  ///< wait for the very first batch (start-up)
  std::size_t batches = 0;  ///< batches consumed
};

/// Consumes batches [0, count) in order, adding to `t`. For each batch:
/// acquire (timed as wait), on_batch(k) (e.g. the H2D copy), sleep
/// `step_s` on `clock`, release. Stops early when `stop()` turns true or
/// acquire fails. `first` marks this as the run's first epoch.
void consume(BatchSource& src, Clock& clock, std::size_t count, double step_s, bool first,
             const std::function<void(std::size_t)>& on_batch, const std::function<bool()>& stop,
             ConsumerTimes& t);

struct WaitSummary {
  double wait_fraction = 0;  ///< data wait / (data wait + compute), first batch excluded
  double au = 0;             ///< accelerator utilisation: 1 - wait_fraction (MLPerf Storage's AU)
};
/// MLPerf Storage counts the first step's IO in samples/s but not in AU; so do we.
WaitSummary summarize(const ConsumerTimes& t);

}  // namespace nodeprobe::io
