// Issue 14's IO cases, reproduced with the real executable: a Ctrl-C during
// `read` keeps the epochs that finished, and `clean` never deletes through a
// samples/ directory that is a link to somewhere else.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "io_test_util.h"
#include "test_support.h"

namespace nodeprobe::io::testing {
namespace {

namespace fs = std::filesystem;
namespace nt = nodeprobe::testing;

nlohmann::json load(const std::string& path) { return nlohmann::json::parse(nt::read_file(path)); }

class IoInterrupt : public ::testing::TestWithParam<int> {};

TEST_P(IoInterrupt, ReadKeepsTheEpochsThatFinished) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "64", "--size", "4k"});
  // 8 batches of 20 ms per epoch: several epochs finish before the signal.
  nt::Background p({nt::bin("nodeprobe-io"), "read", "--dir", s.sub("ds"), "-w", "1", "-b", "8", "--step-ms", "20",
                    "-e", "100000", "--json", s.sub("r.json"), "-q"});
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  p.signal(GetParam());
  ASSERT_EQ(p.wait(30), 130) << p.err();
  const auto r = load(s.sub("r.json"));
  EXPECT_EQ(report_problems(r), "");
  const auto& probe = r.at("probes").at(0);
  EXPECT_EQ(probe.at("status"), "error");
  const std::string reason = probe.at("reason");
  EXPECT_NE(reason.find("interrupted by " + std::string(GetParam() == SIGINT ? "SIGINT" : "SIGHUP")),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("measurements that finished are kept"), std::string::npos) << reason;
  EXPECT_EQ(probe.at("data").at("stop_reason"), "interrupted");
  EXPECT_GE(probe.at("data").at("epochs_done").get<double>(), 1.0);
  EXPECT_GT(probe.at("data").at("samples").get<double>(), 64);
  EXPECT_FALSE(probe.at("metrics").empty());
  EXPECT_EQ(r.at("verdict"), "error");
}

INSTANTIATE_TEST_SUITE_P(Signals, IoInterrupt, ::testing::Values(SIGINT, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& i) { return i.param == SIGINT ? "Sigint" : "Sighup"; });

// A deadline too near to prepare the dataset (accept's share of a budget on a
// loaded machine): the budget at work, status timeout, not an error; the
// scratch dataset is gone.
TEST(IoDeadline, AcceptWithoutTimeToPrepareIsATimeoutNotAnError) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  fs::create_directories(s.sub("data"));
  const IoRun r = run_io({"accept", "--profile", "quick", "--data-dir", s.sub("data"), "--timeout", "2"});
  EXPECT_EQ(report_problems(r.report), "");
  EXPECT_EQ(r.probe().at("status"), "timeout") << r.proc.err;
  // Its own cut-off 3 s before the deadline, or (when start-up alone took
  // that long on a loaded machine) the deadline itself: a timeout either way.
  EXPECT_NE(r.probe().at("reason").get<std::string>().find("deadline"), std::string::npos) << r.probe().at("reason");
  EXPECT_TRUE(fs::is_empty(s.sub("data"))) << "scratch dataset left";
}

// The attack of issue 14: D/samples replaced by a link to a directory of
// NNNNNNNN.bin files; clean used to delete them and report pass.
TEST(IoClean, SamplesLinkedElsewhereAreNotDeleted) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "3", "--size", "4k"});
  fs::create_directories(s.sub("victim/0000"));
  nt::write_file(s.sub("victim/0000/00000000.bin"), "precious");
  nt::write_file(s.sub("victim/0000/00000001.bin"), "precious");
  fs::remove_all(s.sub("ds/samples"));
  fs::create_directory_symlink(s.sub("victim"), s.sub("ds/samples"));
  const IoRun r = run_io({"clean", "--dir", s.sub("ds")});
  EXPECT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(nt::read_file(s.sub("victim/0000/00000000.bin")), "precious");
  EXPECT_EQ(nt::read_file(s.sub("victim/0000/00000001.bin")), "precious");
  EXPECT_EQ(r.probe().at("status"), "warn");
  ASSERT_EQ(r.probe().at("data").at("left").size(), 1u);
  EXPECT_NE(r.probe().at("data").at("left").at(0).get<std::string>().find("symbolic link"), std::string::npos);
  EXPECT_TRUE(fs::is_symlink(s.sub("ds/samples")));
}

TEST(IoClean, DatasetDirectoryThatIsALinkIsRefused) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "3", "--size", "4k"});
  fs::create_directory_symlink(s.sub("ds"), s.sub("alias"));
  const IoRun r = run_io({"clean", "--dir", s.sub("alias")});
  EXPECT_EQ(r.proc.exit_code, 2) << r.proc.err;
  EXPECT_NE(r.probe().at("reason").get<std::string>().find("symbolic link"), std::string::npos);
  EXPECT_TRUE(fs::exists(s.sub("ds/samples/0000/00000002.bin")));
}

}  // namespace
}  // namespace nodeprobe::io::testing
