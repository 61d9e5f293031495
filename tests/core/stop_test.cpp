// The one interruption path (stop.h), each case in a child process (death
// tests): real signals, the watcher's grace, the emergency writer, the exit
// codes and the cleanup of registered temporaries.
#include "nodeprobe/stop.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "nodeprobe/safe_remove.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

// A threadsafe death test re-runs the test in a fresh process: the child
// finds the parent's scratch directory in the environment.
constexpr const char* kDirVar = "NP_STOP_TEST_DIR";

class Stop : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef GTEST_FLAG_SET
    GTEST_FLAG_SET(death_test_style, "threadsafe");
#else
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
#endif
    // The re-run child ends with _Exit: a directory of its own would stay behind.
    if (!std::getenv(kDirVar)) {
      tmp_.emplace();
      ::setenv(kDirVar, tmp_->path().c_str(), 1);
    }
    dir_ = std::getenv(kDirVar);
  }
  void TearDown() override {
    if (tmp_) ::unsetenv(kDirVar);
  }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& path() const { return dir_; }

 private:
  std::optional<TempDir> tmp_;
  std::string dir_;
};

[[noreturn]] void sleep_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

TEST_F(Stop, WorkThatDoesNotStopGetsTheEmergencyReportAndExit130) {
  const std::string out = file("partial");
  EXPECT_EXIT(
      {
        install_stop_handlers({"np-test", 0, 0.3});
        set_emergency_writer([&] { write_file(out, stop_reason()); });
        ::raise(SIGINT);
        sleep_forever();
      },
      ::testing::ExitedWithCode(130), "interrupted by SIGINT: stopping");
  EXPECT_EQ(testing::read_file(out), "interrupted by SIGINT");
}

TEST_F(Stop, SigtermAndSighupAreTreatedLikeSigint) {
  for (int sig : {SIGTERM, SIGHUP}) {
    EXPECT_EXIT(
        {
          install_stop_handlers({"np-test", 0, 0.2});
          ::raise(sig);
          sleep_forever();
        },
        ::testing::ExitedWithCode(130), "interrupted by SIG");
  }
}

TEST_F(Stop, SecondSignalStopsAtOnce) {
  const std::string out = file("partial");
  EXPECT_EXIT(
      {
        install_stop_handlers({"np-test", 0, 600});
        set_emergency_writer([&] { write_file(out, "written"); });
        ::raise(SIGINT);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ::raise(SIGINT);
        std::this_thread::sleep_for(std::chrono::seconds(20));
        std::_Exit(3);  // the grace of 600 s was not waited for
      },
      ::testing::ExitedWithCode(130), "");
  EXPECT_EQ(testing::read_file(out), "written");
}

TEST_F(Stop, OwnDeadlineExits124AndRemovesRegisteredTemporaries) {
  const std::string out = file("partial");
  const std::string stray = file(".r.json.tmp-000000000000");
  std::string owned;
  EXPECT_EXIT(
      {
        // The slow part (files, fsync) before the clock starts: on a loaded
        // machine it once outlasted deadline and grace, and the deadline
        // fired before the writer was set (a CI failure, not a product one).
        owned = make_owned_temp_dir(path(), "np-owned");
        write_file(owned + "/data", "x");
        register_stop_cleanup(owned, CleanupKind::kOwnedDir);
        write_file(stray, "x");
        register_stop_cleanup(stray, CleanupKind::kFile);
        install_stop_handlers({"np-test", 0.5, 0.5});
        set_emergency_writer([&] { write_file(out, stop_reason()); });
        sleep_forever();
      },
      ::testing::ExitedWithCode(124), "deadline of --timeout 0.5 s passed");
  EXPECT_EQ(testing::read_file(out), "deadline of --timeout 0.5 s passed");
  EXPECT_FALSE(fs::exists(stray));
  for (const auto& e : fs::directory_iterator(path()))
    EXPECT_EQ(e.path().filename().string().rfind("np-owned", 0), std::string::npos) << e.path();
}

TEST_F(Stop, WorkThatStopsInTimeWritesTheFinalReportItself) {
  EXPECT_EXIT(
      {
        install_stop_handlers({"np-test", 0, 5});
        set_emergency_writer([] { std::_Exit(4); });
        ::raise(SIGHUP);
        while (!stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const StopCause c = begin_final_write();
        // The watcher must not replace the report now, whatever the grace.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::_Exit(c == StopCause::kSignal && stop_exit_code() == 130 && stop_signal() == SIGHUP ? 7 : 5);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST_F(Stop, NoStopWhileRunning) {
  EXPECT_EXIT(
      {
        install_stop_handlers({"np-test", 0, 1});
        std::_Exit(stop_requested() || stop_exit_code() != 0 || !stop_reason().empty() ? 5 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace nodeprobe
