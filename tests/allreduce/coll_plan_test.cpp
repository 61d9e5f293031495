// The recursive-doubling and Rabenseifner schedules, every rank run in memory
// (messages matched by sender, receiver and tag, as the fabric's tagged
// receives match them), for power-of-two and odd rank counts.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "coll_plan.h"
#include "data.h"

namespace nodeprobe::allreduce {
namespace {

using Plan = std::vector<XferStep> (*)(int, int, std::size_t);

// Runs every rank's steps on its working buffer (`work`, sends marked
// send_from_input read `input`); false on a deadlock, a size mismatch or a
// message nobody received. A group of steps (with_next) sends all at once
// and reduces what it received in the order FabricSteps does (reduce_ordered).
bool run_steps(const std::vector<std::vector<XferStep>>& steps, std::vector<std::vector<float>>& work,
               const std::vector<std::vector<float>>& input, RedOp op) {
  const int n = static_cast<int>(steps.size());
  std::map<std::tuple<int, int, int>, std::vector<float>> wire;  // (from, to, tag)
  std::vector<std::size_t> at(static_cast<std::size_t>(n), 0);
  std::vector<char> sent(static_cast<std::size_t>(n), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      const auto& mine_steps = steps[static_cast<std::size_t>(r)];
      auto& pos = at[static_cast<std::size_t>(r)];
      auto& mine = work[static_cast<std::size_t>(r)];
      if (pos >= mine_steps.size()) continue;
      std::size_t end = pos;
      while (end + 1 < mine_steps.size() && mine_steps[end].with_next) ++end;
      ++end;
      if (!sent[static_cast<std::size_t>(r)]) {
        for (std::size_t k = pos; k < end; ++k) {
          const XferStep& s = mine_steps[k];
          if (s.send_peer < 0) continue;
          const auto& from = s.send_from_input ? input[static_cast<std::size_t>(r)] : mine;
          if (s.send_offset + s.send_count > from.size()) return false;
          wire[{r, s.send_peer, s.tag}] = std::vector<float>(
              from.begin() + static_cast<long>(s.send_offset), from.begin() + static_cast<long>(s.send_offset + s.send_count));
        }
        sent[static_cast<std::size_t>(r)] = 1;
        progress = true;
      }
      bool all_here = true;
      for (std::size_t k = pos; k < end; ++k)
        if (mine_steps[k].recv_peer >= 0 && !wire.count({mine_steps[k].recv_peer, r, mine_steps[k].tag})) all_here = false;
      if (!all_here) continue;
      std::vector<std::vector<float>> got;
      std::vector<void*> parts;
      std::size_t own_at = 0, offset = 0;
      got.reserve(end - pos);
      for (std::size_t k = pos; k < end; ++k) {
        const XferStep& s = mine_steps[k];
        if (s.recv_peer < 0) continue;
        auto it = wire.find({s.recv_peer, r, s.tag});
        if (it->second.size() != s.recv_count || s.recv_offset + s.recv_count > mine.size()) return false;
        if (s.reduce) {
          got.push_back(it->second);
          parts.push_back(got.back().data());
          if (s.reduce_before_own) own_at = parts.size();
          offset = s.recv_offset;
        } else {
          std::copy(it->second.begin(), it->second.end(), mine.begin() + static_cast<long>(s.recv_offset));
        }
        wire.erase(it);
      }
      if (!parts.empty())
        reduce_ordered(mine.data() + offset, parts.data(), parts.size(), own_at, got.back().size(), DType::kFloat32, op);
      pos = end;
      sent[static_cast<std::size_t>(r)] = 0;
      progress = true;
    }
  }
  for (int r = 0; r < n; ++r)
    if (at[static_cast<std::size_t>(r)] != steps[static_cast<std::size_t>(r)].size()) return false;
  return wire.empty();
}

// Runs the schedules of all ranks; false on a deadlock or a size mismatch.
bool simulate(Plan plan, int n, std::size_t count, RedOp op, int* wrong_ranks) {
  std::vector<std::vector<XferStep>> steps;
  std::vector<std::vector<float>> buf(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    steps.push_back(plan(n, r, count));
    buf[static_cast<std::size_t>(r)].resize(count);
    fill_input(buf[static_cast<std::size_t>(r)].data(), count, DType::kFloat32, op, r, 2);
  }
  if (!run_steps(steps, buf, {}, op)) return false;
  *wrong_ranks = 0;
  for (int r = 0; r < n; ++r)
    if (count_wrong(buf[static_cast<std::size_t>(r)].data(), count, DType::kFloat32, op, n, 2) != 0) ++*wrong_ranks;
  return true;
}

// A collective's schedule on every rank, laid out as the fabric backend lays
// it out (out of place), then data.h's check of each rank's result.
bool simulate_coll(Coll c, int n, int root, std::size_t count, RedOp op, int* wrong_ranks, std::size_t pieces = 0,
                   Algo algo = Algo::kRing) {
  std::vector<std::vector<XferStep>> steps;
  std::vector<std::vector<float>> work(static_cast<std::size_t>(n)), input(static_cast<std::size_t>(n));
  std::vector<CollData> data;
  for (int r = 0; r < n; ++r) {
    CollData d;
    d.coll = c;
    d.counts = coll_counts_of(c, count, 4, n);
    d.op = op;
    d.rank = r;
    d.nranks = n;
    d.root = root;
    data.push_back(d);
    auto& in = input[static_cast<std::size_t>(r)];
    auto& w = work[static_cast<std::size_t>(r)];
    in.resize(d.counts.send);
    fill_coll_input(in.data(), d, 2);
    w.assign(std::max(d.counts.send, d.counts.recv), -12345.f);
    const std::size_t own = static_cast<std::size_t>(r) * count;
    if (c == Coll::kAllGather) std::copy(in.begin(), in.end(), w.begin() + static_cast<long>(own));
    else if (c == Coll::kAllToAll)
      std::copy(in.begin() + static_cast<long>(own), in.begin() + static_cast<long>(own + count),
                w.begin() + static_cast<long>(own));
    else if (c != Coll::kSendRecv) std::copy(in.begin(), in.end(), w.begin());
    steps.push_back(plan_collective(c, n, r, root, count, pieces, algo));
  }
  if (n == 1 && c == Coll::kSendRecv) work[0] = input[0];
  if (!run_steps(steps, work, input, op)) return false;
  *wrong_ranks = 0;
  for (int r = 0; r < n; ++r) {
    const std::size_t at = c == Coll::kReduceScatter ? static_cast<std::size_t>(r) * count : 0;
    if (count_coll_wrong(work[static_cast<std::size_t>(r)].data() + at, data[static_cast<std::size_t>(r)], 2) != 0)
      ++*wrong_ranks;
  }
  return true;
}

TEST(CollPlan, EveryCollectiveDeliversForAnyRankCountAndRoot) {
  for (Coll c : {Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast, Coll::kReduce, Coll::kAllToAll,
                 Coll::kSendRecv})
    for (int n : {1, 2, 3, 4, 5, 7, 8})
      for (int root : {0, n - 1, n / 2})
        for (std::size_t count : {1u, 4u, 37u})
          for (RedOp op : {RedOp::kSum, RedOp::kMin}) {
            int wrong = -1;
            const std::string what = std::string(to_string(c)) + " n " + std::to_string(n) + " root " +
                                     std::to_string(root) + " count " + std::to_string(count);
            EXPECT_TRUE(simulate_coll(c, n, root, count, op, &wrong)) << what;
            EXPECT_EQ(wrong, 0) << what;
          }
}

// Allgather's recursive doubling and reducescatter's recursive halving, on
// powers of two and on the folded counts between (odd and even remainders).
TEST(CollPlan, LogStepAllgatherAndReduceScatterDeliverForAnyRankCount) {
  for (Coll c : {Coll::kAllGather, Coll::kReduceScatter})
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16})
      for (std::size_t count : {1u, 4u, 37u})
        for (RedOp op : {RedOp::kSum, RedOp::kMax}) {
          int wrong = -1;
          const std::string what = std::string(to_string(c)) + " n " + std::to_string(n) + " count " +
                                   std::to_string(count);
          EXPECT_TRUE(simulate_coll(c, n, 0, count, op, &wrong, 0, Algo::kRecursiveDoubling)) << what;
          EXPECT_EQ(wrong, 0) << what;
        }
  // log2 P steps on a power of two; two more (fold in, fold out) for a folded rank.
  EXPECT_EQ(plan_collective(Coll::kAllGather, 8, 3, 0, 8, 0, Algo::kRecursiveDoubling).size(), 3u);
  EXPECT_EQ(plan_collective(Coll::kReduceScatter, 8, 3, 0, 8, 0, Algo::kRecursiveDoubling).size(), 3u);
  EXPECT_EQ(plan_collective(Coll::kAllGather, 6, 1, 0, 8, 0, Algo::kRecursiveDoubling).size(), 4u);
  EXPECT_EQ(plan_collective(Coll::kReduceScatter, 6, 0, 0, 8, 0, Algo::kRecursiveDoubling).size(), 2u);
  EXPECT_EQ(plan_collective(Coll::kReduceScatter, 6, 5, 0, 8, 0, Algo::kRecursiveDoubling).size(), 2u);
  // Halving sends half the vector first, then a quarter: (P-1)/P of it, as the ring.
  const auto rh = plan_collective(Coll::kReduceScatter, 4, 1, 0, 10, 0, Algo::kRecursiveDoubling);
  ASSERT_EQ(rh.size(), 2u);
  EXPECT_EQ(rh[0].send_count + rh[1].send_count, 30u);
  EXPECT_EQ(collective_algorithm(Coll::kAllGather, 0, Algo::kRecursiveDoubling), "rd");
  EXPECT_EQ(collective_algorithm(Coll::kReduceScatter, 0, Algo::kRecursiveDoubling), "rh");
  EXPECT_EQ(collective_algorithm(Coll::kReduceScatter), "ring");
  const AlgoSizes sizes{0, 8192, 1 << 20};
  EXPECT_EQ(choose_collective_algo(Coll::kAllGather, Algo::kAuto, 4096, sizes), Algo::kRecursiveDoubling);
  EXPECT_EQ(choose_collective_algo(Coll::kAllGather, Algo::kAuto, 1 << 20, sizes), Algo::kRing);
  EXPECT_EQ(choose_collective_algo(Coll::kReduceScatter, Algo::kRing, 8, sizes), Algo::kRing);
  EXPECT_EQ(choose_collective_algo(Coll::kReduceScatter, Algo::kRecursiveDoubling, 1 << 30, sizes),
            Algo::kRecursiveDoubling);
  EXPECT_EQ(choose_collective_algo(Coll::kBroadcast, Algo::kAuto, 8, sizes), Algo::kRing);
}

// The pipelined chain of broadcast and reduce: every piece count, including
// more pieces than elements and pieces of uneven length.
TEST(CollPlan, ChainDeliversForAnyRankCountRootAndPieces) {
  for (Coll c : {Coll::kBroadcast, Coll::kReduce})
    for (int n : {2, 3, 4, 5, 8})
      for (int root : {0, n - 1, n / 2})
        for (std::size_t count : {1u, 5u, 37u})
          for (std::size_t pieces : {1u, 2u, 3u, 16u}) {
            int wrong = -1;
            const std::string what = std::string(to_string(c)) + " n " + std::to_string(n) + " root " +
                                     std::to_string(root) + " count " + std::to_string(count) + " pieces " +
                                     std::to_string(pieces);
            EXPECT_TRUE(simulate_coll(c, n, root, count, RedOp::kSum, &wrong, pieces)) << what;
            EXPECT_EQ(wrong, 0) << what;
          }
  // n - 2 + pieces steps for a middle rank (one receive and one send per piece, overlapped).
  EXPECT_EQ(plan_collective(Coll::kBroadcast, 4, 1, 0, 64, 16).size(), 17u);
  EXPECT_EQ(plan_collective(Coll::kBroadcast, 4, 0, 0, 64, 16).size(), 16u);
  EXPECT_EQ(collective_algorithm(Coll::kReduce, 16), "chain");
  EXPECT_EQ(chain_pieces(Coll::kBroadcast, 4 << 20, 1 << 20, 4 << 20), 16u);
  EXPECT_EQ(chain_pieces(Coll::kBroadcast, 1 << 20, 1 << 18, 4 << 20), 0u);
  EXPECT_EQ(chain_pieces(Coll::kAllGather, 64 << 20, 1 << 24, 4 << 20), 0u);
  EXPECT_EQ(chain_pieces(Coll::kReduce, 1u << 30, 1u << 28, 4 << 20), 256u);
}

// The schedules' shapes: n-1 ring or pairwise steps, log2 rounds of a tree.
TEST(CollPlan, CollectiveStepCounts) {
  EXPECT_EQ(plan_collective(Coll::kAllGather, 5, 2, 0, 8).size(), 4u);
  EXPECT_EQ(plan_collective(Coll::kReduceScatter, 5, 2, 0, 8).size(), 4u);
  EXPECT_EQ(plan_collective(Coll::kAllToAll, 5, 2, 0, 8).size(), 4u);
  EXPECT_EQ(plan_collective(Coll::kSendRecv, 5, 2, 0, 8).size(), 1u);
  EXPECT_EQ(plan_collective(Coll::kBroadcast, 8, 0, 0, 8).size(), 3u);  // the root sends to 4, 2, 1 away
  EXPECT_EQ(plan_collective(Coll::kReduce, 8, 0, 0, 8).size(), 3u);     // and receives from them
  EXPECT_EQ(plan_collective(Coll::kBroadcast, 8, 7, 0, 8).size(), 1u);  // a leaf receives once
  EXPECT_TRUE(plan_collective(Coll::kAllGather, 1, 0, 0, 8).empty());
  EXPECT_EQ(collective_algorithm(Coll::kBroadcast), "binomial");
}

TEST(CollPlan, EveryAlgorithmReducesForAnyRankCount) {
  for (Plan plan : {&plan_oneshot, &plan_recursive_doubling, &plan_rabenseifner, &plan_linear, &plan_twoshot})
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 12})
      for (std::size_t count : {0u, 1u, 3u, 7u, 64u, 1001u})
        for (RedOp op : {RedOp::kSum, RedOp::kMax}) {
          int wrong = -1;
          EXPECT_TRUE(simulate(plan, n, count, op, &wrong)) << "n " << n << " count " << count;
          EXPECT_EQ(wrong, 0) << (plan == &plan_rabenseifner ? "rabenseifner"
                                  : plan == &plan_oneshot  ? "oneshot"
                                  : plan == &plan_twoshot  ? "twoshot"
                                  : plan == &plan_linear   ? "linear"
                                                           : "rd")
                              << " n " << n << " count " << count;
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

TEST(CollPlan, OneShotGivesEveryRankTheSameBits) {
  // Floats whose sum depends on the order: every rank must still get the
  // same bits (data-parallel replicas stay identical), as with recursive
  // doubling, whose pairs add commutatively.
  for (Plan plan : {&plan_oneshot, &plan_recursive_doubling, &plan_twoshot})
    for (int n : {2, 3, 4, 5, 8}) {
      const std::size_t count = 37;
      std::vector<std::vector<XferStep>> steps;
      std::vector<std::vector<float>> buf(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) {
        steps.push_back(plan(n, r, count));
        for (std::size_t i = 0; i < count; ++i)
          buf[static_cast<std::size_t>(r)].push_back(1.0f / static_cast<float>(3 + static_cast<std::size_t>(r) * 7 + i) * (r % 2 ? 1e4f : 1e-3f));
      }
      ASSERT_TRUE(run_steps(steps, buf, {}, RedOp::kSum)) << n;
      for (int r = 1; r < n; ++r)
        EXPECT_EQ(0, std::memcmp(buf[0].data(), buf[static_cast<std::size_t>(r)].data(), count * sizeof(float)))
            << (plan == &plan_oneshot ? "oneshot" : plan == &plan_twoshot ? "twoshot" : "rd") << " n " << n << " rank " << r;
    }
}

TEST(CollPlan, OneShotIsOneGroupWithAPairTagPerPeer) {
  const auto steps = plan_oneshot(5, 2, 10);
  ASSERT_EQ(steps.size(), 4u);
  std::set<int> tags;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].with_next, i + 1 < steps.size());
    EXPECT_EQ(steps[i].reduce_before_own, steps[i].recv_peer < 2);
    tags.insert(steps[i].tag);
  }
  EXPECT_EQ(tags.size(), 4u);  // tags match any sender: one per peer keeps them apart
  // The peer's step toward this rank carries the same tag.
  EXPECT_EQ(plan_oneshot(5, 4, 10)[2].tag, steps[3].tag);
  EXPECT_TRUE(plan_oneshot(1, 0, 10).empty());
}

TEST(CollPlan, TwoShotIsTwoGroupsOfDirectExchangesOnAnyRankCount) {
  // 5 ranks, 11 elements: blocks of 3, 2, 2, 2, 2. Rank 2 sends block p to
  // rank p and reduces the copies of its own block (elements 5-6), then sends
  // that block to everyone and receives theirs in place.
  const auto steps = plan_twoshot(5, 2, 11);
  ASSERT_EQ(steps.size(), 8u);
  std::set<int> tags;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const XferStep& s = steps[i];
    EXPECT_EQ(s.with_next, i != 3 && i != 7) << i;  // two groups of 4
    EXPECT_EQ(s.reduce, i < 4) << i;
    EXPECT_EQ(s.send_peer, s.recv_peer);
    tags.insert(s.tag);
  }
  EXPECT_EQ(tags.size(), 8u);
  EXPECT_EQ(steps[0].send_peer, 0);
  EXPECT_EQ(steps[0].send_offset, 0u);
  EXPECT_EQ(steps[0].send_count, 3u);
  EXPECT_EQ(steps[0].recv_offset, 5u);
  EXPECT_EQ(steps[0].recv_count, 2u);
  EXPECT_TRUE(steps[0].reduce_before_own);
  EXPECT_FALSE(steps[2].reduce_before_own);  // rank 3 comes after the own block
  EXPECT_EQ(steps[4].send_offset, 5u);
  EXPECT_EQ(steps[4].recv_offset, 0u);
  EXPECT_EQ(steps[4].recv_count, 3u);
  // The peer's step toward this rank carries the same tag, in each phase.
  EXPECT_EQ(plan_twoshot(5, 4, 11)[2].tag, steps[3].tag);
  EXPECT_EQ(plan_twoshot(5, 4, 11)[6].tag, steps[7].tag);
  EXPECT_TRUE(plan_twoshot(1, 0, 11).empty());
  // Forced on more ranks than its tags can name, Rabenseifner runs.
  EXPECT_EQ(choose_algo(Algo::kTwoShot, 64, kTwoShotTagRanks + 1, AlgoSizes{}), Algo::kRabenseifner);
  EXPECT_EQ(choose_algo(Algo::kTwoShot, 64, kTwoShotTagRanks, AlgoSizes{}), Algo::kTwoShot);
}

TEST(CollPlan, AutoPicksBySize) {
  const AlgoSizes sizes{1024, 8192, 524288};
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 4, sizes), Algo::kOneShot);
  EXPECT_EQ(choose_algo(Algo::kAuto, 1024, 8, sizes), Algo::kOneShot);
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 9, sizes), Algo::kRecursiveDoubling);  // too many peers for one-shot
  EXPECT_EQ(choose_algo(Algo::kAuto, 2048, 4, sizes), Algo::kRecursiveDoubling);
  EXPECT_EQ(choose_algo(Algo::kAuto, 8192, 4, sizes), Algo::kRecursiveDoubling);
  EXPECT_EQ(choose_algo(Algo::kAuto, 16384, 4, sizes), Algo::kRabenseifner);
  EXPECT_EQ(choose_algo(Algo::kAuto, 524288, 4, sizes), Algo::kRing);
  EXPECT_EQ(choose_algo(Algo::kRing, 8, 4, sizes), Algo::kRing);
  EXPECT_EQ(choose_algo(Algo::kOneShot, 1 << 20, 64, sizes), Algo::kOneShot);  // forced
  EXPECT_EQ(choose_algo(Algo::kOneShot, 8, 2048, sizes), Algo::kRecursiveDoubling);  // pair tags would alias
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 4, AlgoSizes{0, 8192, 524288}), Algo::kRecursiveDoubling);
  // Linear up to --linear-max on 3 and 4 ranks only (after one-shot).
  const AlgoSizes lin{0, 8192, 524288, 4096};
  EXPECT_EQ(choose_algo(Algo::kAuto, 4096, 3, lin), Algo::kLinear);
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 4, lin), Algo::kLinear);
  EXPECT_EQ(choose_algo(Algo::kAuto, 8192, 4, lin), Algo::kRecursiveDoubling);
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 2, lin), Algo::kRecursiveDoubling);  // one step beats two
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 5, lin), Algo::kRecursiveDoubling);  // rank 0 serialises too much
  EXPECT_EQ(choose_algo(Algo::kAuto, 8, 4, AlgoSizes{1024, 8192, 524288, 4096}), Algo::kOneShot);
  Algo a{};
  EXPECT_TRUE(algo_from_string("rabenseifner", &a));
  EXPECT_EQ(to_string(a), "rabenseifner");
  EXPECT_TRUE(algo_from_string("one_shot", &a));
  EXPECT_EQ(to_string(a), "oneshot");
  EXPECT_FALSE(algo_from_string("tree", &a));
}

}  // namespace
}  // namespace nodeprobe::allreduce
