// The fleet's NCCL pairs (NcclGroup) on two threads of one process, through
// the CPU fakes of the CUDA runtime and NCCL (tests/gemm/fake_cuda_runtime,
// tests/allreduce/fake_nccl: ranks sharing one ncclUniqueId really sum their
// buffers): the unique id as member 0's address, the timing and the vote
// (both members run the same count), the data check, a corrupted member, a
// stalled member and one that never arrives, each within its deadline. No
// GPU and no real NCCL: what these cannot show is in docs/fleet.md.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>

#include "fake_nccl.h"
#include "fleet_phases.h"
#include "group_nccl.h"

namespace nodeprobe::fleet {
namespace {

using allreduce::testing::FakeNccl;
using nodeprobe::testing::FakeCudaRuntime;

struct Fakes {
  FakeCudaRuntime cuda;
  FakeNccl nccl{cuda};
  Fakes() { cuda.record_calls = false; }  // two threads poll the streams: no call log to grow
};

struct Member {
  std::optional<GroupResult> result;
  std::string stopped, error;
  double seconds = 0;
};

GroupRunOptions quick_options() {
  GroupRunOptions o;
  o.bytes = 64 * 1024;
  o.min_iters = 3;
  o.min_seconds = 0.02;
  o.stall_s = 20;
  return o;
}

// Opens `n` members (member 0 makes the id), runs each on its own thread with
// a stop that says yes after `deadline_s`; `run` says which members run at all.
std::vector<Member> run_group(Fakes& f, int n, const GroupRunOptions& opt, double deadline_s,
                              std::vector<bool> run = {}, std::vector<GroupRunOptions> own = {}) {
  if (own.empty()) own.assign(static_cast<std::size_t>(n), opt);
  if (run.empty()) run.assign(static_cast<std::size_t>(n), true);
  std::vector<std::unique_ptr<NcclGroup>> groups;
  std::vector<std::string> addresses;
  for (int i = 0; i < n; ++i) {
    groups.push_back(std::make_unique<NcclGroup>(f.nccl.api(), 0, "", i, n, opt.bytes));
    addresses.push_back(groups.back()->address());
  }
  std::vector<Member> out(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    if (!run[static_cast<std::size_t>(i)]) continue;
    threads.emplace_back([&, i] {
      Member& m = out[static_cast<std::size_t>(i)];
      const auto t0 = std::chrono::steady_clock::now();
      auto stop = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > deadline_s; };
      try {
        m.result = groups[static_cast<std::size_t>(i)]->run(addresses, i, own[static_cast<std::size_t>(i)], stop);
      } catch (const GroupStopped& e) {
        m.stopped = e.what();
      } catch (const std::exception& e) {
        m.error = e.what();
      }
      m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  }
  for (auto& t : threads) t.join();
  groups.clear();  // the communicators go (destroyed when clean, never after a failure)
  return out;
}

TEST(NcclGroup, TwoMembersTimeVoteAndCheckTheSum) {
  Fakes f;
  const auto m = run_group(f, 2, quick_options(), 20);
  for (const auto& x : m) {
    ASSERT_TRUE(x.result) << x.stopped << x.error;
    EXPECT_EQ(x.result->wrong, 0);  // the data check: each element is the sum of both members' inputs
    EXPECT_GE(x.result->iter_s.size(), 3u);
    EXPECT_EQ(x.result->transport.rfind("nccl 2.28.5", 0), 0u) << x.result->transport;
    for (double t : x.result->iter_s) EXPECT_GT(t, 0);
  }
  // The vote went through NCCL: both ran the same number of timed allreduces.
  EXPECT_EQ(m[0].result->iter_s.size(), m[1].result->iter_s.size());
  EXPECT_EQ(f.nccl.destroys, 2);
  EXPECT_EQ(f.nccl.aborts, 0);
}

// The vote decides, not each member's own count: one member wants 8 timed
// allreduces, the other 3, both run 8 (a member that stopped at its own 3
// would leave the other waiting until the deadline).
TEST(NcclGroup, TheVoteMakesBothRunTheLongerCount) {
  Fakes f;
  GroupRunOptions few = quick_options(), more = quick_options();
  few.min_seconds = more.min_seconds = 0;
  few.min_iters = 3;
  more.min_iters = 8;
  const auto m = run_group(f, 2, few, 20, {}, {few, more});
  ASSERT_TRUE(m[0].result && m[1].result) << m[0].stopped << m[1].stopped;
  EXPECT_EQ(m[0].result->iter_s.size(), 8u);
  EXPECT_EQ(m[1].result->iter_s.size(), 8u);
  EXPECT_EQ(m[0].result->wrong, 0);
  EXPECT_EQ(m[1].result->wrong, 0);
}

TEST(NcclGroup, OnlyTheFirstMemberHasAnAddress) {
  Fakes f;
  NcclGroup first(f.nccl.api(), 0, "", 0, 2, 4096), second(f.nccl.api(), 0, "", 1, 2, 4096);
  EXPECT_EQ(first.address().size(), 2 * sizeof(ncclUniqueId::internal));
  EXPECT_EQ(second.address(), "");
  // A member without the id fails with the reason, before any NCCL call waits.
  try {
    second.run({"", ""}, 1, quick_options(), [] { return false; });
    FAIL() << "ran without an id";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no NCCL unique id"), std::string::npos) << e.what();
  }
}

TEST(NcclGroup, ACorruptedMemberFailsTheDataCheck) {
  Fakes f;
  f.nccl.corrupt_rank = 1;
  const auto m = run_group(f, 2, quick_options(), 20);
  ASSERT_TRUE(m[0].result && m[1].result);
  EXPECT_EQ(m[0].result->wrong, 0);
  EXPECT_EQ(m[1].result->wrong, 1);
}

TEST(NcclGroup, AStalledMemberEndsBothAtTheDeadline) {
  Fakes f;
  f.nccl.hang_rank = 1;  // its collectives never complete (a hung GPU, a stopped node)
  const auto m = run_group(f, 2, quick_options(), 0.4);
  for (const auto& x : m) {
    EXPECT_FALSE(x.result);
    EXPECT_NE(x.stopped.find("stopped during the allreduce"), std::string::npos) << x.stopped << x.error;
    EXPECT_LT(x.seconds, 5.0);
  }
  EXPECT_EQ(f.nccl.aborts, 2);   // aborted ...
  EXPECT_EQ(f.nccl.destroys, 0);  // ... never destroyed
}

TEST(NcclGroup, AStalledMemberEndsAtTheStallLimitWithoutADeadline) {
  Fakes f;
  f.nccl.hang_rank = 0;
  GroupRunOptions o = quick_options();
  o.stall_s = 0.3;
  const auto m = run_group(f, 2, o, 1e9);
  for (const auto& x : m) {
    EXPECT_NE(x.stopped.find("NCCL timeout"), std::string::npos) << x.stopped << x.error;
    EXPECT_LT(x.seconds, 5.0);
  }
  EXPECT_EQ(f.nccl.destroys, 0);
}

TEST(NcclGroup, APeerThatNeverArrivesCostsTheDeadlineNotAHang) {
  Fakes f;
  const auto m = run_group(f, 2, quick_options(), 0.3, {true, false});
  EXPECT_NE(m[0].stopped.find("stopped during ncclCommInitRankConfig"), std::string::npos) << m[0].stopped << m[0].error;
  EXPECT_LT(m[0].seconds, 5.0);
  EXPECT_EQ(f.nccl.destroys, 0);
}

TEST(NcclPairSupport, SaysWhyNotOrWhichVersion) {
  Fakes f;
  const Json ok = nccl_pair_support(f.nccl.api(), 0);
  EXPECT_TRUE(ok.value("usable", false)) << ok.dump();
  EXPECT_EQ(ok.value("version", ""), "2.28.5");
  const Json gpu = nccl_pair_support(f.nccl.api(), 3);
  EXPECT_FALSE(gpu.value("usable", true));
  EXPECT_EQ(gpu.value("why", ""), "--pair-gpu 3 but 1 GPU(s) visible");
  f.cuda.device_count_error = cudaErrorNoDevice;
  const Json none = nccl_pair_support(f.nccl.api(), 0);
  EXPECT_FALSE(none.value("usable", true));
  EXPECT_NE(none.value("why", "").find("cudaErrorNoDevice"), std::string::npos) << none.dump();
}

}  // namespace
}  // namespace nodeprobe::fleet
