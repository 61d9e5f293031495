#pragma once
/// The DataLoader emulation: W worker threads, each with P staging slots of
/// B samples (prefetch_factor), batch k served by worker k mod W, shuffled
/// per epoch with a seed, consumed in order by a training loop that spends a
/// step time per batch. Memory is the staging pool, W x P x B samples,
/// whatever the dataset size.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cache.h"
#include "consumer.h"
#include "dataset.h"
#include "engine.h"
#include "staging.h"

namespace nodeprobe::io {

/// How batches reach workers: PyTorch's round-robin (batch k to worker
/// k mod W), or first-free (the next batch to whichever worker is idle).
enum class Dispatch { kRoundRobin, kFirstFree };
const char* to_string(Dispatch d);

struct LoaderConfig {
  std::size_t workers = 1;
  std::size_t batch = 32;
  std::size_t prefetch = 2;
  std::uint32_t epochs = 1;
  std::uint64_t seed = 0;
  bool shuffle = true;
  bool drop_last = false;
  Method method = Method::kPread;
  CacheMode cache = CacheMode::kWarm;
  bool drop_caches = false;   ///< with kCold: also drop the whole page cache (root)
  double step_s = 0;          ///< consumer time per batch (the GPU step)
  double max_seconds = 0;     ///< stop reading after this much measured time (0: no limit)
  /// Pause before each epoch after the first, outside the measured time:
  /// epochs of a few milliseconds back to back all fall in one state of the
  /// host (one scheduling slice, one CPU placement), so their spread says
  /// nothing about the next run's.
  double epoch_gap_s = 0;
  PinMode pin = PinMode::kAuto;
  Dispatch dispatch = Dispatch::kRoundRobin;
  // The PyTorch DataLoader's CPU (loader_model.h), emulated; all 0: the native reader.
  double sample_cpu_s = 0;    ///< a worker's CPU per sample, read included (it burns what the read left)
  double batch_cpu_s = 0;     ///< the main process's CPU per batch, burnt in acquire: it counts as data wait
  double step_cpu_s = 0;      ///< the part of step_s the consumer spends on the CPU (the rest sleeps)
  bool receive_thread = false;  ///< batch_cpu_s is spent by a thread of its own (pin_memory's), not in acquire
};

struct WorkerStats {
  std::uint64_t samples = 0, bytes = 0, batches = 0;
  double busy_s = 0;  ///< time spent reading and verifying
  double cpu_s = 0;   ///< thread CPU time
};

/// One batch as the consumer received it. Times are measured time: seconds
/// since the first epoch began, cache preparation between epochs excluded.
struct BatchRecord {
  double end_s = 0;            ///< when its step ended
  double wait_s = 0, compute_s = 0;
  std::uint64_t samples = 0, bytes = 0;
  double cpu_s = 0;            ///< process CPU used by the epochs so far, at delivery
  double h2d_s = 0;            ///< its copy to the device
  std::uint64_t h2d_bytes = 0;
  double latency_s = -1;       ///< a worker's time to read and verify it (-1: not known)
  std::uint32_t worker = 0;    ///< the worker that read it
};

struct LoaderResult {
  std::vector<BatchRecord> batches;  ///< every consumed batch, in order (per-window spread)
  std::string cache_label;       ///< warm | warm-partial | cold | cold-unevictable | as-is
  double resident_fraction = -1; ///< page-cache share at the start of the first epoch
  PinInfo pin;
  std::size_t staging_bytes = 0;
  std::size_t slot_sample_bytes = 0;  ///< staging bytes per sample
  std::uint64_t samples = 0, bytes = 0;  ///< delivered to the consumer
  double elapsed_s = 0;          ///< epochs only; cache preparation excluded
  double prep_s = 0;             ///< evicting / warming
  double cpu_s = 0;              ///< process CPU (user + sys) during the epochs
  ConsumerTimes consumer;
  std::vector<double> batch_latency_s;  ///< per batch: a worker's time to read and verify it
  std::vector<double> epoch_first_wait_s;  ///< per epoch: the wait for its first batch (workers start)
  std::vector<WorkerStats> workers;
  std::uint32_t epochs_full = 0;
  double epochs_done = 0;        ///< full epochs + the delivered share of a partial one
  std::string stop_reason;       ///< "" | "max-seconds" | "deadline" | "interrupted" | "error"
  std::string error;             ///< first IO error (one line)
  std::uint64_t bad_samples = 0; ///< records that failed verification
  std::string first_bad;
  long peak_rss_kb = 0;
  double h2d_s = 0;
  std::uint64_t h2d_bytes = 0;
};

/// Runs the loader on an opened dataset. `budget_s` bounds the whole call
/// (cache preparation included; 0: none) so callers can keep their deadline.
/// IO errors end the run early and are returned in `error`, not thrown;
/// throws only for setup failures (method unavailable, staging allocation).
LoaderResult run_loader(Dataset& ds, const LoaderConfig& cfg, Clock& clock, double budget_s = 0);

}  // namespace nodeprobe::io
