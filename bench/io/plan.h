#pragma once
/// The sampler side of the DataLoader emulation: which samples an epoch
/// reads in which order, how they form batches, and which worker and
/// staging slot serve a batch. Pure logic, unit-tested.

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
/// (prefetch_factor), so it runs at most P batches ahead.
inline std::size_t worker_of(std::size_t batch, std::size_t workers) { return batch % workers; }

/// The staging slots of the batches in flight (not thread-safe: the loader
/// guards it with its lock). A batch takes the slot freed most recently
/// (LIFO): in a fast pipeline the same few slots cycle, so reads land in
/// memory still warm in cache and TLB (and, on a virtual disk, in the host's)
/// instead of sweeping the whole W x P x B pool in turn.
///  - per-worker (PyTorch's round-robin): worker w owns slots [wP, wP + P), so
///    it runs at most P batches ahead of the consumer.
///  - shared (first-free): one pool of W x P slots; batch k may take one only
///    once batch k - W P is released, so the batch the consumer waits for can
///    always get a slot (no priority inversion, no deadlock).
/// Batches are released in order (the consumer takes them in order).
class SlotPool {
 public:
  SlotPool(std::size_t workers, std::size_t prefetch, bool per_worker);
  /// All slots free, nothing released (start of an epoch).
  void reset();
  std::size_t slots() const { return loc_.size(); }
  /// Whether batch k can take a slot now.
  bool available(std::size_t k) const;
  /// Takes a slot for batch k; available(k) must hold.
  std::size_t take(std::size_t k);
  /// The slot batch k took (valid while k is in flight).
  std::size_t slot(std::size_t k) const { return loc_[k % loc_.size()]; }
  /// Batch k, the oldest in flight, is consumed: its slot goes back on top.
  void release(std::size_t k);
  /// Batches released since reset (they are released in order: [0, released())).
  std::size_t released() const { return released_; }

 private:
  std::size_t pool_of(std::size_t k) const { return per_worker_ ? k % workers_ : 0; }
  std::size_t workers_, prefetch_;
  bool per_worker_;
  std::vector<std::vector<std::size_t>> free_;  // a LIFO stack per pool
  std::vector<std::size_t> loc_;                // batch k mod (W P) -> its slot
  std::size_t released_ = 0;                    // batches [0, released_) are released
};

}  // namespace nodeprobe::io
