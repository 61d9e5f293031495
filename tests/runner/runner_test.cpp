// The runner against real, misbehaving probe executables.
#include "runner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "test_support.h"

namespace nodeprobe::diag {
namespace {

using nodeprobe::testing::process_alive;
using nodeprobe::testing::TempDir;

const std::string kHelpers = std::string(NODEPROBE_TEST_HELPERS) + "/";

TEST(Runner, HungProbeIsKilledWithItsGroupAndRecordedAsTimeout) {
  TempDir work;
  ProbeSpec spec{"gemm", "np-test-hang", {}, 0.5, {"NP_TEST_PIDFILE=" + work.file("pids")}, {}, 2};
  const ProbeOutcome o = run_probe_executable(spec, kHelpers, work.path());
  ASSERT_EQ(o.probes.size(), 1u);
  EXPECT_EQ(o.probes[0].name, "gemm");
  EXPECT_EQ(o.probes[0].status, Status::kTimeout);
  EXPECT_NE(o.probes[0].reason.find("np-test-hang exceeded its 0.5 s deadline"), std::string::npos)
      << o.probes[0].reason;
  EXPECT_NE(o.probes[0].reason.find("hanging on purpose"), std::string::npos);  // stderr tail
  int leader = 0, grandchild = 0;
  std::ifstream(work.file("pids")) >> leader >> grandchild;
  ASSERT_GT(grandchild, 0);
  for (int i = 0; i < 100 && process_alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(process_alive(leader));
  EXPECT_FALSE(process_alive(grandchild));
}

TEST(Runner, SegfaultIsRecordedAsCrash) {
  TempDir work;
  const ProbeOutcome o =
      run_probe_executable({"io", "np-test-crash", {}, 10, {}, {}, 2}, kHelpers, work.path());
  ASSERT_EQ(o.probes.size(), 1u);
  EXPECT_EQ(o.probes[0].status, Status::kError);
  EXPECT_EQ(o.probes[0].reason.rfind("crashed: np-test-crash killed by SIGSEGV (signal 11)", 0), 0u)
      << o.probes[0].reason;
}

TEST(Runner, MalformedReportIsAnErrorWithOneLineReason) {
  TempDir work;
  const ProbeOutcome o =
      run_probe_executable({"io", "np-test-garbage", {}, 10, {}, {}, 2}, kHelpers, work.path());
  ASSERT_EQ(o.probes.size(), 1u);
  EXPECT_EQ(o.probes[0].status, Status::kError);
  EXPECT_NE(o.probes[0].reason.find("unreadable report"), std::string::npos);
  EXPECT_NE(o.probes[0].reason.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(o.probes[0].reason.find('\n'), std::string::npos);
}

TEST(Runner, MissingExecutableCannotStart) {
  TempDir work;
  const ProbeOutcome o =
      run_probe_executable({"x", "no-such-probe", {}, 10, {}, {}, 2}, kHelpers, work.path());
  ASSERT_EQ(o.probes.size(), 1u);
  EXPECT_EQ(o.probes[0].status, Status::kError);
  EXPECT_NE(o.probes[0].reason.find("could not start"), std::string::npos);
}

TEST(Runner, RealProbeReportIsMerged) {
  TempDir work;
  const ProbeOutcome o = run_probe_executable({"limits", "nodeprobe-limits", {}, 30, {}, {}, 2},
                                              nodeprobe::testing::bin(""), work.path());
  ASSERT_EQ(o.probes.size(), 1u);
  EXPECT_EQ(o.probes[0].name, "limits");
  EXPECT_NE(o.probes[0].status, Status::kError) << o.probes[0].reason;
  EXPECT_FALSE(o.probes[0].checks.empty());
  EXPECT_TRUE(o.have_host);
  HostInfo h;
  h.driver = "";
  HostInfo child;
  child.nccl = "2.18.5";
  child.driver = "535";
  h.driver = "550";
  merge_host(h, child);
  EXPECT_EQ(h.driver, "550");  // the runner's own value wins
  EXPECT_EQ(h.nccl, "2.18.5");
}

TEST(Runner, TailLines) {
  EXPECT_EQ(tail_lines("a\n\nb\r\nc\nd\n", 2), "c | d");
  EXPECT_EQ(tail_lines("", 3), "");
}

}  // namespace
}  // namespace nodeprobe::diag
