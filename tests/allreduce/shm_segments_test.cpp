// Stale /dev/shm regions of SIGKILLed ranks: only the regions of dead pids
// the launcher noted, only this user's regular files, never a live process's.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "shm_segments.h"
#include "test_support.h"

namespace nodeprobe::allreduce {
namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

void touch(const std::string& p) { std::ofstream(p) << "x"; }

TEST(ShmSegments, NamesCarryThePid) {
  EXPECT_TRUE(is_pid_segment("123:0:0", 123));
  EXPECT_TRUE(is_pid_segment("nodeprobe-0000123-abcd", 123));
  EXPECT_FALSE(is_pid_segment("1234:0:0", 123));
  EXPECT_FALSE(is_pid_segment("nodeprobe-0001234-abcd", 123));
  EXPECT_FALSE(is_pid_segment("vader_segment.123", 123));
  EXPECT_TRUE(is_pid_segment(own_segment_name("ff"), ::getpid()));
  // Endpoint names must be as long in every rank, whatever the pid.
  EXPECT_EQ(own_segment_name("ff").size(), std::string("nodeprobe-0000000-ff").size());
}

TEST(ShmSegments, LauncherRemovesOnlyDeadRanksRegions) {
  if (!exists(kShmDir)) GTEST_SKIP() << "no /dev/shm";
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // gone: its pid is dead
  nodeprobe::testing::TempDir notes;
  const std::string shm = kShmDir;
  const std::string dead_a = shm + "/" + std::to_string(child) + ":0:0";
  char ours[64];
  std::snprintf(ours, sizeof ours, "/nodeprobe-%07d-test", static_cast<int>(child));
  const std::string dead_b = shm + ours;
  const std::string live = shm + "/" + std::to_string(::getpid()) + ":9:9";
  for (const auto& p : {dead_a, dead_b, live}) touch(p);
  touch(notes.path() + "/pid-" + std::to_string(child));
  touch(notes.path() + "/pid-" + std::to_string(::getpid()));  // alive: kept
  const auto removed = remove_dead_rank_segments(notes.path());
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_FALSE(exists(dead_a));
  EXPECT_FALSE(exists(dead_b));
  EXPECT_TRUE(exists(live));
  ::unlink(live.c_str());
}

TEST(ShmSegments, ARankRemovesRegionsNamedWithItsOwnPid) {
  if (!exists(kShmDir)) GTEST_SKIP() << "no /dev/shm";
  // A region with our pid can only be a dead process's: we created none yet.
  const std::string stale = std::string(kShmDir) + "/" + std::to_string(::getpid()) + ":0:0";
  touch(stale);
  const auto removed = prepare_rank_segments();
  EXPECT_FALSE(exists(stale));
  EXPECT_EQ(removed.size(), 1u);
}

}  // namespace
}  // namespace nodeprobe::allreduce
