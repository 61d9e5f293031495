#pragma once
/// The sampler side of the DataLoader emulation: which samples an epoch
/// reads in which order, how they form batches, and which worker and
/// staging slot serve a batch. Pure functions (unit-tested).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nodeprobe::io {

/// Order of the samples [0, n) in `epoch`: a Fisher-Yates shuffle driven by a
/// generator defined here (not std::shuffle, whose algorithm differs between
/// standard libraries), so a seed names the same order on every host.
/// Identity order when `shuffle` is false.
std::vector<std::uint32_t> epoch_order(std::uint32_t n, std::uint64_t seed, std::uint32_t epoch,
                                       bool shuffle);

struct BatchPlan {
  std::size_t batches = 0;     ///< batches in an epoch
  std::size_t last_size = 0;   ///< samples in the last batch (== batch unless the tail is kept)
  std::size_t samples = 0;     ///< samples an epoch delivers
};

/// PyTorch's BatchSampler: consecutive chunks of the order; drop_last drops a short tail.
BatchPlan plan_batches(std::size_t n, std::size_t batch, bool drop_last);

/// PyTorch assigns batch k to worker k mod W; each worker has P staging slots
/// (prefetch_factor), used round-robin, so it runs at most P batches ahead.
inline std::size_t worker_of(std::size_t batch, std::size_t workers) { return batch % workers; }
inline std::size_t slot_of(std::size_t batch, std::size_t workers, std::size_t prefetch) {
  return (batch % workers) * prefetch + (batch / workers) % prefetch;
}

}  // namespace nodeprobe::io
