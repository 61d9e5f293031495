// run_process against real processes: deadlines, crashes, process groups.
#include "nodeprobe/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::process_alive;
using testing::TempDir;

std::string helper(const std::string& name) {
  return testing::bin("../tests/helpers/" + name);
}

TEST(Subprocess, CapturesOutputAndExitCode) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  o.capture_stdout = o.capture_stderr = true;
  const SpawnResult r = run_process(o);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.describe(), "exit 3");
}

TEST(Subprocess, ArgumentsAreNeverInterpretedByAShell) {
  SpawnOptions o;
  o.argv = {"/bin/echo", "a; echo injected $(id)"};
  o.capture_stdout = true;
  const SpawnResult r = run_process(o);
  EXPECT_EQ(r.out, "a; echo injected $(id)\n");
}

TEST(Subprocess, MissingExecutableDoesNotStart) {
  SpawnOptions o;
  o.argv = {"/nonexistent/probe"};
  const SpawnResult r = run_process(o);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("No such file"), std::string::npos);
  EXPECT_NE(r.describe().find("did not start"), std::string::npos);
}

TEST(Subprocess, EnvironmentSetAndUnset) {
  ::setenv("NP_TEST_DROP", "1", 1);
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo ${NP_TEST_SET:-none} ${NP_TEST_DROP:-gone}"};
  o.env_set = {"NP_TEST_SET=yes"};
  o.env_unset = {"NP_TEST_DROP"};
  o.capture_stdout = true;
  EXPECT_EQ(run_process(o).out, "yes gone\n");
}

TEST(Subprocess, DeadlineKillsTheWholeGroupEvenIfTermIsIgnored) {
  TempDir d;
  SpawnOptions o;
  o.argv = {helper("np-test-hang")};
  o.env_set = {"NP_TEST_PIDFILE=" + d.file("pids")};
  o.timeout_s = 0.5;
  o.kill_grace_s = 0.3;
  o.capture_stderr = true;
  const SpawnResult r = run_process(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);  // SIGTERM was ignored
  EXPECT_GE(r.duration_s, 0.5);
  EXPECT_LT(r.duration_s, 5.0);
  EXPECT_NE(r.describe().find("timed out"), std::string::npos);
  std::ifstream in(d.file("pids"));
  int leader = 0, grandchild = 0;
  in >> leader >> grandchild;
  ASSERT_GT(grandchild, 0);
  // SIGKILL to the group is delivered at once, but reaping by init takes a moment.
  for (int i = 0; i < 100 && process_alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(process_alive(leader));
  EXPECT_FALSE(process_alive(grandchild));
}

TEST(Subprocess, CrashIsReportedWithItsSignal) {
  SpawnOptions o;
  o.argv = {helper("np-test-crash")};
  o.capture_stderr = true;
  const SpawnResult r = run_process(o);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_EQ(r.describe(), "killed by SIGSEGV (signal 11)");
}

TEST(Subprocess, LeftoversOfTheGroupAreKilledAfterNormalExit) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"};
  o.capture_stdout = true;
  const SpawnResult r = run_process(o);
  EXPECT_EQ(r.exit_code, 0);
  const int bg = std::stoi(r.out);
  for (int i = 0; i < 100 && process_alive(bg); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(process_alive(bg));
}

TEST(Subprocess, CancelFlagStopsTheChild) {
  volatile std::sig_atomic_t cancel = 0;
  SpawnOptions o;
  o.argv = {"/bin/sleep", "30"};
  o.cancel = &cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = 1;
  });
  const SpawnResult r = run_process(o);
  t.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.duration_s, 5.0);
}

TEST(Subprocess, CaptureIsBounded) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "head -c 300000 /dev/zero"};
  o.capture_stdout = true;
  o.capture_limit = 1000;
  const SpawnResult r = run_process(o);
  EXPECT_EQ(r.exit_code, 0);  // the child was drained, not blocked
  EXPECT_EQ(r.out.size(), 1000u);
}

TEST(Subprocess, SignalNames) {
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(200), "SIG200");
}

}  // namespace
}  // namespace nodeprobe
