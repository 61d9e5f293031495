// Other work on the host during a stretch of a run: /proc/stat parsing, the
// arithmetic, and a real reading with a busy neighbour.
#include "nodeprobe/host_activity.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace nodeprobe {
namespace {

TEST(HostActivity, ParsesTheCpuLineOfProcStat) {
  const auto j = parse_proc_stat("cpu  100 5 50 1000 20 3 2 10 0 0\ncpu0 1 2 3 4\n");
  ASSERT_TRUE(j);
  EXPECT_DOUBLE_EQ(j->busy, 100 + 5 + 50 + 3 + 2 + 10);
  EXPECT_DOUBLE_EQ(j->steal, 10);
  EXPECT_DOUBLE_EQ(j->total, j->busy + 1000 + 20);
  // Old kernels print fewer fields; no steal then.
  ASSERT_TRUE(parse_proc_stat("cpu 1 2 3 4"));
  EXPECT_DOUBLE_EQ(parse_proc_stat("cpu 1 2 3 4")->steal, 0);
  EXPECT_FALSE(parse_proc_stat("cpu0 1 2 3 4"));
  EXPECT_FALSE(parse_proc_stat("intr 5"));
  EXPECT_FALSE(parse_proc_stat(""));
}

TEST(HostActivity, OtherWorkIsTheMachinesBusyTimeLessOurOwn) {
  CpuJiffies a{1000, 0, 5000}, b{1300, 20, 5400};  // 3 s busy, 0.2 s stolen over 2 s at 100 Hz
  const auto h = host_activity_between(a, b, 2.0, 1.0, 100, 2);
  ASSERT_TRUE(h);
  EXPECT_DOUBLE_EQ(h->other_cpus, (3.0 - 1.0) / 2.0);
  EXPECT_DOUBLE_EQ(h->steal_cpus, 0.1);
  EXPECT_EQ(h->cpus, 2);
  EXPECT_DOUBLE_EQ(h->seconds, 2.0);
  // Our own time beyond the machine's (coarse jiffies on a short run) is no negative neighbour.
  EXPECT_DOUBLE_EQ(host_activity_between(a, b, 2.0, 5.0, 100, 2)->other_cpus, 0);
  // Nonsense in, nothing out.
  EXPECT_FALSE(host_activity_between(b, a, 2.0, 1.0, 100, 2));
  EXPECT_FALSE(host_activity_between(a, b, 0, 1.0, 100, 2));
  EXPECT_FALSE(host_activity_between(a, b, 2.0, 1.0, 0, 2));
  EXPECT_FALSE(host_activity_between(a, b, 2.0, 1.0, 100, 0));
}

// A process whose time is not ours (a forked child not yet waited for counts
// as a neighbour until then) spinning while we measure is other work.
TEST(HostActivity, ASpinningNeighbourIsOtherWork) {
  if (::access("/proc/stat", R_OK) != 0) GTEST_SKIP() << "no /proc/stat";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    volatile unsigned long x = 0;
    while (std::chrono::steady_clock::now() < end) x = x + 1;
    ::_exit(0);
  }
  const ActivityMeter m;
  ::usleep(1000 * 1000);
  const auto h = m.stop();
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->cpus, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(h->other_cpus, 0.5) << "a neighbour spun one CPU for the whole second";
  EXPECT_LE(h->other_cpus, h->cpus);
}

}  // namespace
}  // namespace nodeprobe
