#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "plan.h"

namespace nodeprobe::io {
namespace {

bool is_permutation_of_range(std::vector<std::uint32_t> v) {
  std::sort(v.begin(), v.end());
  for (std::uint32_t i = 0; i < v.size(); ++i)
    if (v[i] != i) return false;
  return true;
}

TEST(IoEpochOrder, SameSeedSameOrder) {
  EXPECT_EQ(epoch_order(1000, 42, 0, true), epoch_order(1000, 42, 0, true));
  EXPECT_EQ(epoch_order(1000, 42, 3, true), epoch_order(1000, 42, 3, true));
}

TEST(IoEpochOrder, SeedAndEpochChangeTheOrder) {
  const auto a = epoch_order(1000, 42, 0, true);
  EXPECT_NE(a, epoch_order(1000, 43, 0, true));
  EXPECT_NE(a, epoch_order(1000, 42, 1, true));
  EXPECT_TRUE(is_permutation_of_range(a));
  EXPECT_TRUE(is_permutation_of_range(epoch_order(1000, 42, 1, true)));
}

TEST(IoEpochOrder, IsStableAcrossBuilds) {
  // Pinned: the same seed must name the same order on every host, compiler and
  // standard library, or before/after comparisons read different sequences.
  // Values from an independent Python model of the same definition.
  const std::vector<std::uint32_t> expected{8, 5, 2, 3, 6, 9, 0, 4, 7, 10, 1, 11};
  EXPECT_EQ(epoch_order(12, 1, 0, true), expected);
}

TEST(IoEpochOrder, NoShuffleIsIdentityAndShuffleMovesMost) {
  const auto id = epoch_order(100, 9, 0, false);
  for (std::uint32_t i = 0; i < 100; ++i) EXPECT_EQ(id[i], i);
  const auto s = epoch_order(1000, 9, 0, true);
  int fixed = 0;
  for (std::uint32_t i = 0; i < 1000; ++i) fixed += s[i] == i;
  EXPECT_LT(fixed, 10);  // a random permutation keeps ~1 in place
  EXPECT_TRUE(epoch_order(0, 1, 0, true).empty());
  EXPECT_EQ(epoch_order(1, 1, 0, true), std::vector<std::uint32_t>{0});
}

TEST(IoBatchPlanTest, DropLastAndTail) {
  auto p = plan_batches(100, 32, false);
  EXPECT_EQ(p.batches, 4u);
  EXPECT_EQ(p.last_size, 4u);
  EXPECT_EQ(p.samples, 100u);
  p = plan_batches(100, 32, true);
  EXPECT_EQ(p.batches, 3u);
  EXPECT_EQ(p.last_size, 32u);
  EXPECT_EQ(p.samples, 96u);
  p = plan_batches(96, 32, false);
  EXPECT_EQ(p.batches, 3u);
  EXPECT_EQ(p.last_size, 32u);
  p = plan_batches(10, 32, true);
  EXPECT_EQ(p.batches, 0u);
  EXPECT_EQ(p.samples, 0u);
  p = plan_batches(10, 32, false);
  EXPECT_EQ(p.batches, 1u);
  EXPECT_EQ(p.last_size, 10u);
}

TEST(IoSlotMapping, RoundRobinWorkersAndPrefetchDepth) {
  const std::size_t W = 3, P = 2;
  for (std::size_t k = 0; k < 60; ++k) {
    const std::size_t s = slot_of(k, W, P);
    EXPECT_EQ(worker_of(k, W), k % W);
    // A worker's batches stay in its own slots.
    EXPECT_EQ(s / P, worker_of(k, W));
    EXPECT_LT(s, W * P);
  }
  // P consecutive batches of one worker use P different slots; the next one reuses the first.
  for (std::size_t w = 0; w < W; ++w) {
    std::set<std::size_t> used;
    for (std::size_t j = 0; j < P; ++j) used.insert(slot_of(w + j * W, W, P));
    EXPECT_EQ(used.size(), P);
    EXPECT_EQ(slot_of(w + P * W, W, P), slot_of(w, W, P));
  }
}

}  // namespace
}  // namespace nodeprobe::io
