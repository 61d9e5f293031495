// The recursive-doubling and Rabenseifner schedules, every rank run in memory
// (messages matched by sender, receiver and tag, as the fabric's tagged
// receives match them), for power-of-two and odd rank counts.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "coll_plan.h"
#include "data.h"

namespace nodeprobe::allreduce {
namespace {

using Plan = std::vector<XferStep> (*)(int, int, std::size_t);

// Runs the schedules of all ranks; false on a deadlock or a size mismatch.
bool simulate(Plan plan, int n, std::size_t count, RedOp op, int* wrong_ranks) {
  std::vector<std::vector<XferStep>> steps;
  std::vector<std::vector<float>> buf(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    steps.push_back(plan(n, r, count));
    buf[static_cast<std::size_t>(r)].resize(count);
    fill_input(buf[static_cast<std::size_t>(r)].data(), count, DType::kFloat32, op, r, 2);
  }
  std::map<std::tuple<int, int, int>, std::vector<float>> wire;  // (from, to, tag)
  std::vector<std::size_t> at(static_cast<std::size_t>(n), 0);
  std::vector<char> sent(static_cast<std::size_t>(n), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      auto& pos = at[static_cast<std::size_t>(r)];
      auto& mine = buf[static_cast<std::size_t>(r)];
      if (pos >= steps[static_cast<std::size_t>(r)].size()) continue;
      const XferStep& s = steps[static_cast<std::size_t>(r)][pos];
      if (s.send_peer >= 0 && !sent[static_cast<std::size_t>(r)]) {
        wire[{r, s.send_peer, s.tag}] = std::vector<float>(mine.begin() + static_cast<long>(s.send_offset),
                                                           mine.begin() + static_cast<long>(s.send_offset + s.send_count));
        sent[static_cast<std::size_t>(r)] = 1;
        progress = true;
      }
      if (s.recv_peer >= 0) {
        auto it = wire.find({s.recv_peer, r, s.tag});
        if (it == wire.end()) continue;
        if (it->second.size() != s.recv_count) return false;
        if (s.reduce) reduce_into(mine.data() + s.recv_offset, it->second.data(), s.recv_count, DType::kFloat32, op);
        else std::copy(it->second.begin(), it->second.end(), mine.begin() + static_cast<long>(s.recv_offset));
        wire.erase(it);
      }
      ++pos;
      sent[static_cast<std::size_t>(r)] = 0;
      progress = true;
    }
  }
  *wrong_ranks = 0;
  for (int r = 0; r < n; ++r) {
    if (at[static_cast<std::size_t>(r)] != steps[static_cast<std::size_t>(r)].size()) return false;
    if (count_wrong(buf[static_cast<std::size_t>(r)].data(), count, DType::kFloat32, op, n, 2) != 0) ++*wrong_ranks;
  }
  return wire.empty();
}

TEST(CollPlan, EveryAlgorithmReducesForAnyRankCount) {
  for (Plan plan : {&plan_recursive_doubling, &plan_rabenseifner})
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 12})
      for (std::size_t count : {0u, 1u, 3u, 7u, 64u, 1001u})
        for (RedOp op : {RedOp::kSum, RedOp::kMax}) {
          int wrong = -1;
          EXPECT_TRUE(simulate(plan, n, count, op, &wrong)) << "n " << n << " count " << count;
          EXPECT_EQ(wrong, 0) << (plan == &plan_rabenseifner ? "rabenseifner" : "rd") << " n " << n << " count "
                              << count;
        }
}

TEST(CollPlan, StepCountsAreLogarithmic) {
  // 8 ranks: 3 exchanges of the whole vector; Rabenseifner 3 halvings + 3 doublings.
  EXPECT_EQ(plan_recursive_doubling(8, 5, 100).size(), 3u);
  EXPECT_EQ(plan_rabenseifner(8, 5, 100).size(), 6u);
  // 5 ranks fold to 4: rank 0 gives its vector to rank 1 and gets the result back.
  const auto sits_out = plan_rabenseifner(5, 0, 100);
  ASSERT_EQ(sits_out.size(), 2u);
  EXPECT_EQ(sits_out[0].send_peer, 1);
  EXPECT_EQ(sits_out[1].recv_peer, 1);
  EXPECT_EQ(plan_recursive_doubling(5, 1, 100).size(), 4u);  // fold in, 2 steps, fold out
  // Rabenseifner's first halving sends half the vector.
  EXPECT_EQ(plan_rabenseifner(4, 0, 100)[0].send_count, 50u);
}

TEST(CollPlan, AutoPicksBySize) {
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 8192, 524288), Algo::kRecursiveDoubling);
  EXPECT_EQ(choose_algo(Algo::kAuto, 8192, 8192, 524288), Algo::kRecursiveDoubling);
  EXPECT_EQ(choose_algo(Algo::kAuto, 16384, 8192, 524288), Algo::kRabenseifner);
  EXPECT_EQ(choose_algo(Algo::kAuto, 524288, 8192, 524288), Algo::kRing);
  EXPECT_EQ(choose_algo(Algo::kRing, 8, 8192, 524288), Algo::kRing);
  Algo a{};
  EXPECT_TRUE(algo_from_string("rabenseifner", &a));
  EXPECT_EQ(to_string(a), "rabenseifner");
  EXPECT_FALSE(algo_from_string("tree", &a));
}

}  // namespace
}  // namespace nodeprobe::allreduce
