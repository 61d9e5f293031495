#include "plan.h"

#include <algorithm>

#include "io_format.h"

namespace nodeprobe::io {

std::vector<std::uint32_t> epoch_order(std::uint32_t n, std::uint64_t seed, std::uint32_t epoch,
                                       bool shuffle) {
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  if (!shuffle || n < 2) return order;
  // Counter-based splitmix64 keyed by (seed, epoch); modulo bias is below 2^-32 for n < 2^32.
  const std::uint64_t key = mix64(seed ^ mix64(0x65706F6368ULL + epoch));
  for (std::uint32_t i = n - 1; i > 0; --i) {
    const std::uint64_t r = mix64(key + i);
    const auto j = static_cast<std::uint32_t>(r % (std::uint64_t{i} + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

BatchPlan plan_batches(std::size_t n, std::size_t batch, bool drop_last) {
  BatchPlan p;
  if (batch == 0 || n == 0) return p;
  p.batches = n / batch;
  p.last_size = batch;
  if (!drop_last && n % batch != 0) {
    ++p.batches;
    p.last_size = n % batch;
  }
  p.samples = p.batches == 0 ? 0 : (p.batches - 1) * batch + p.last_size;
  return p;
}

SlotPool::SlotPool(std::size_t workers, std::size_t prefetch, bool per_worker)
    : workers_(workers), prefetch_(prefetch), per_worker_(per_worker), loc_(workers * prefetch, 0) {
  reset();
}

void SlotPool::reset() {
  free_.assign(per_worker_ ? workers_ : 1, {});
  // Slots pushed highest first, so each pool hands out its lowest slot first.
  for (std::size_t s = loc_.size(); s-- > 0;) free_[per_worker_ ? s / prefetch_ : 0].push_back(s);
  std::fill(loc_.begin(), loc_.end(), 0);
  released_ = 0;
}

bool SlotPool::available(std::size_t k) const {
  if (free_[pool_of(k)].empty()) return false;
  return per_worker_ || k < released_ + loc_.size();
}

std::size_t SlotPool::take(std::size_t k) {
  auto& stack = free_[pool_of(k)];
  const std::size_t s = stack.back();
  stack.pop_back();
  loc_[k % loc_.size()] = s;
  return s;
}

void SlotPool::release(std::size_t k) {
  free_[pool_of(k)].push_back(slot(k));
  released_ = k + 1;
}

}  // namespace nodeprobe::io
