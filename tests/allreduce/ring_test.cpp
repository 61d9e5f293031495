#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>

#include "data.h"
#include "ring.h"

namespace nodeprobe::allreduce {
namespace {

TEST(Ring, SegmentsCoverTheBufferOnce) {
  for (std::size_t count : {0u, 1u, 3u, 7u, 100u, 1001u}) {
    for (int n : {1, 2, 3, 4, 7}) {
      std::size_t total = 0;
      for (int s = 0; s < n; ++s) {
        EXPECT_EQ(segment_offset(count, n, s), total);
        total += segment_count(count, n, s);
      }
      EXPECT_EQ(total, count) << "count " << count << " n " << n;
    }
  }
}

TEST(Ring, StepsAndChunks) {
  const RingPlan p = plan_ring(4, 1, 1000, 100);
  EXPECT_EQ(p.chunks, 3u);  // segments of 250 elements in chunks of 100
  EXPECT_EQ(p.send.size(), 2u * 3u * 3u);
  EXPECT_EQ(p.next(), 2);
  EXPECT_EQ(p.prev(), 0);
  // Step 0 sends the rank's own segment, receives the one before; reduce-scatter reduces.
  EXPECT_EQ(p.send[0].segment, 1);
  EXPECT_EQ(p.recv[0].segment, 0);
  EXPECT_TRUE(p.recv[0].reduce);
  EXPECT_FALSE(p.recv[3 * 3].reduce);  // step 3 is allgather
  EXPECT_EQ(p.depends_on(2), -1);
  EXPECT_EQ(p.depends_on(3), 0);
  // A send carries what the receive it depends on brought.
  for (std::size_t u = p.chunks; u < p.send.size(); ++u) {
    const auto& r = p.recv[static_cast<std::size_t>(p.depends_on(u))];
    EXPECT_EQ(p.send[u].offset, r.offset);
    EXPECT_EQ(p.send[u].count, r.count);
  }
}

TEST(Ring, OneRankHasNothingToDo) { EXPECT_TRUE(plan_ring(1, 0, 100, 10).send.empty()); }

// Runs every rank's schedule over in-memory channels, in a random interleaving
// that respects the dependencies, and checks the result is the allreduce.
void simulate(int n, std::size_t count, std::size_t chunk, unsigned seed) {
  std::vector<RingPlan> plans;
  std::vector<std::vector<float>> buf(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    plans.push_back(plan_ring(n, r, count, chunk));
    buf[static_cast<std::size_t>(r)].resize(count);
    fill_input(buf[static_cast<std::size_t>(r)].data(), count, DType::kFloat32, RedOp::kSum, r, 3);
  }
  if (n == 1) return;
  const std::size_t units = plans[0].send.size();
  // channel[r]: messages to rank r, by unit
  std::vector<std::map<std::size_t, std::vector<float>>> channel(static_cast<std::size_t>(n));
  std::vector<std::size_t> next_send(static_cast<std::size_t>(n), 0), next_recv(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<char>> done(static_cast<std::size_t>(n), std::vector<char>(units, 0));
  std::mt19937 rng(seed);
  std::size_t work_left = 2 * units * static_cast<std::size_t>(n);
  while (work_left > 0) {
    const auto r = static_cast<std::size_t>(rng() % static_cast<unsigned>(n));
    const RingPlan& p = plans[r];
    if (rng() % 2 == 0 && next_send[r] < units) {
      const std::size_t u = next_send[r];
      const long dep = p.depends_on(u);
      if (dep >= 0 && !done[r][static_cast<std::size_t>(dep)]) continue;
      const RingUnit& su = p.send[u];
      std::vector<float> msg(buf[r].begin() + static_cast<long>(su.offset),
                             buf[r].begin() + static_cast<long>(su.offset + su.count));
      channel[static_cast<std::size_t>(p.next())][u] = msg;
      ++next_send[r];
      --work_left;
    } else if (next_recv[r] < units) {
      const std::size_t u = next_recv[r];
      auto it = channel[r].find(u);
      if (it == channel[r].end()) continue;
      const RingUnit& ru = p.recv[u];
      ASSERT_EQ(it->second.size(), ru.count);
      if (ru.reduce)
        reduce_into(buf[r].data() + ru.offset, it->second.data(), ru.count, DType::kFloat32, RedOp::kSum);
      else
        std::copy(it->second.begin(), it->second.end(), buf[r].begin() + static_cast<long>(ru.offset));  // empty units too (memcpy from a null data() is UB)
      channel[r].erase(it);
      done[r][u] = 1;
      ++next_recv[r];
      --work_left;
    }
  }
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(count_wrong(buf[static_cast<std::size_t>(r)].data(), count, DType::kFloat32, RedOp::kSum, n, 3), 0)
        << "rank " << r << " of " << n << ", count " << count << ", chunk " << chunk;
}

TEST(Ring, SimulatedRingComputesTheAllreduce) {
  unsigned seed = 1;
  for (int n : {2, 3, 4, 5, 8})
    for (std::size_t count : {1u, 5u, 64u, 1000u, 4099u})
      for (std::size_t chunk : {1u, 7u, 64u, 100000u}) simulate(n, count, chunk, seed++);
}

}  // namespace
}  // namespace nodeprobe::allreduce
