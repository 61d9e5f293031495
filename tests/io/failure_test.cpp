// Bad input and failures mid-run: a one-line reason on stderr, the right exit
// code, a valid (partial) report, and never a half-written dataset presented
// as complete.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "io_test_util.h"
#include "test_support.h"

namespace nodeprobe::io::testing {
namespace {

namespace fs = std::filesystem;

// Expects exit `code`, exactly one stderr line containing `needle`, and a
// schema-valid report whose probe carries the same reason.
void expect_refusal(const IoRun& r, int code, const std::string& needle) {
  EXPECT_EQ(r.proc.exit_code, code) << r.proc.err;
  const auto lines = r.stderr_lines();
  ASSERT_EQ(lines.size(), 1u) << r.proc.err;
  EXPECT_NE(lines[0].find(needle), std::string::npos) << lines[0];
  ASSERT_FALSE(r.report.is_null());
  EXPECT_EQ(report_problems(r.report), "");
  EXPECT_NE(r.probe().at("reason").get<std::string>().find(needle), std::string::npos);
}

void truncate_to(const std::string& path, off_t size) { ASSERT_EQ(::truncate(path.c_str(), size), 0) << path; }

TEST(IoBadInput, MissingEmptyAndForeignDirectories) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  expect_refusal(run_io({"read", "--dir", s.sub("nope")}), 2, "no such directory");
  expect_refusal(run_io({"read", "--dir", s.path()}), 2, "empty directory");
  nodeprobe::testing::write_file(s.sub("foreign/keep.txt"), "precious");
  expect_refusal(run_io({"read", "--dir", s.sub("foreign")}), 2, "not a nodeprobe-io dataset");
  expect_refusal(run_io({"prepare", "--dir", s.sub("foreign"), "--files", "4"}), 2, "refusing to write");
  expect_refusal(run_io({"clean", "--dir", s.sub("foreign")}), 2, "nothing removed");
  expect_refusal(run_io({"sweep", "--dir", s.sub("foreign")}), 2, "not a nodeprobe-io dataset");
  EXPECT_EQ(nodeprobe::testing::read_file(s.sub("foreign/keep.txt")), "precious");
  expect_refusal(run_io({"prepare", "--dir", s.sub("no/parent"), "--files", "4"}), 2, "parent directory");
}

TEST(IoBadInput, TruncatedShardCorruptAndMissingIndex) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  const std::string dir = s.sub("ds");
  prepare(dir, {"--files", "40", "--size", "8k", "--shards", "2"});
  truncate_to(dir + "/shard-00001.rec", 1000);
  expect_refusal(run_io({"read", "--dir", dir}), 2, "shard-00001.rec: truncated");

  prepare(dir, {"--files", "40", "--size", "8k", "--shards", "2", "--overwrite"});
  {
    std::fstream f(dir + "/index.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x5a');
  }
  expect_refusal(run_io({"read", "--dir", dir}), 2, "corrupt index");
  fs::remove(dir + "/index.bin");
  expect_refusal(run_io({"read", "--dir", dir}), 2, "index.bin");
  // Clean still recognises the dataset and removes it.
  const IoRun c = run_io({"clean", "--dir", dir});
  EXPECT_EQ(c.proc.exit_code, 0) << c.proc.err;
  EXPECT_FALSE(fs::exists(dir));
}

TEST(IoBadInput, IncompleteDatasetIsRefusedAndCleanable) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  const std::string dir = s.sub("ds");
  prepare(dir, {"--files", "8", "--size", "4k"});
  std::string marker = nodeprobe::testing::read_file(dir + "/.nodeprobe-io");
  const auto at = marker.find("\"complete\"");
  ASSERT_NE(at, std::string::npos);
  marker.replace(at, 10, "\"writing\"");
  nodeprobe::testing::write_file(dir + "/.nodeprobe-io", marker);
  expect_refusal(run_io({"read", "--dir", dir}), 2, "dataset incomplete");
  EXPECT_EQ(run_io({"clean", "--dir", dir}).proc.exit_code, 0);
  EXPECT_FALSE(fs::exists(dir));
}

TEST(IoBadInput, OverwriteOnlyWhenAsked) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "4", "--size", "4k"});
  expect_refusal(run_io({"prepare", "--dir", s.sub("ds"), "--files", "4"}), 2, "already holds");
  EXPECT_EQ(run_io({"prepare", "--dir", s.sub("ds"), "--files", "6", "--size", "4k", "--overwrite"}).proc.exit_code, 0);
  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "-w", "1"});
  EXPECT_EQ(r.probe().at("data").at("samples"), 6);
}

TEST(IoBadInput, CleanRemovesOnlyWhatPrepareMade) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  fs::create_directories(s.sub("ds"));  // existing empty directory: used, not owned
  prepare(s.sub("ds"), {"--files", "1500", "--size", "1k"});
  nodeprobe::testing::write_file(s.sub("ds/notes.txt"), "mine");
  nodeprobe::testing::write_file(s.sub("ds/samples/0001/extra.bin"), "mine too");
  const IoRun r = run_io({"clean", "--dir", s.sub("ds")});
  EXPECT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(r.probe().at("status"), "warn");
  EXPECT_EQ(r.probe().at("data").at("files"), 1500 + 2);  // samples, index, marker
  EXPECT_EQ(r.probe().at("data").at("left").size(), 2u);
  EXPECT_TRUE(fs::exists(s.sub("ds/notes.txt")));
  EXPECT_TRUE(fs::exists(s.sub("ds/samples/0001/extra.bin")));
  EXPECT_FALSE(fs::exists(s.sub("ds/samples/0000")));
  EXPECT_FALSE(fs::exists(s.sub("ds/.nodeprobe-io")));
}

TEST(IoBadInput, UsageErrorsExit64) {
  EXPECT_EQ(run_io({"read"}).proc.exit_code, 64);
  EXPECT_EQ(run_io({"read", "--dir", "/tmp", "--method", "bogus"}).proc.exit_code, 64);
  EXPECT_EQ(run_io({"read", "--dir", "/tmp", "--workers", "0"}).proc.exit_code, 64);
  EXPECT_EQ(run_io({"read", "--dir", "/tmp", "--drop-caches"}).proc.exit_code, 64);
  EXPECT_EQ(run_io({"read", "--dir", "/tmp", "--cold", "--warm"}).proc.exit_code, 64);
  EXPECT_EQ(run_io({"prepare", "--dir", "/tmp/x", "--files", "3", "--size", "12x"}).proc.exit_code, 64);
  EXPECT_EQ(run_io({"bogus"}).proc.exit_code, 64);
}

// A sample disappears or shrinks while the loader runs.
IoRun read_while(const std::string& dir, const std::function<void()>& damage) {
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    damage();
  });
  // 8 batches x 40 ms per epoch, 8 epochs: the damage lands in epoch 2 or 3.
  IoRun r = run_io({"read", "--dir", dir, "--as-is", "-w", "1", "-b", "8", "--step-ms", "40", "-e", "8"});
  t.join();
  return r;
}

TEST(IoMidEpoch, FileBecomesUnreadable) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  const std::string dir = s.sub("ds");
  prepare(dir, {"--files", "64", "--size", "4k"});
  const IoRun r = read_while(dir, [&] { fs::remove(dir + "/samples/0000/00000033.bin"); });
  expect_refusal(r, 2, "read failed after");
  EXPECT_EQ(r.probe().at("status"), "error");
  EXPECT_NE(r.probe().at("reason").get<std::string>().find("ENOENT"), std::string::npos);
  // The partial result is kept: what was read before is reported.
  EXPECT_GT(r.probe().at("data").at("samples").get<int>(), 0);
  EXPECT_LT(r.probe().at("data").at("samples").get<int>(), 8 * 64);
  EXPECT_EQ(r.probe().at("data").at("stop_reason"), "error");
}

TEST(IoMidEpoch, TruncatedFileIsWrongData) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  const std::string dir = s.sub("ds");
  prepare(dir, {"--files", "64", "--size", "4k"});
  const IoRun r = read_while(dir, [&] { truncate_to(dir + "/samples/0000/00000033.bin", 1000); });
  EXPECT_EQ(r.proc.exit_code, 1) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
  EXPECT_EQ(r.probe().at("status"), "fail");
  EXPECT_EQ(r.check("io.data_integrity").at("status"), "fail");
  EXPECT_NE(r.check("io.data_integrity").at("detail").get<std::string>().find("short read"), std::string::npos);
  ASSERT_EQ(r.stderr_lines().size(), 1u) << r.proc.err;
  EXPECT_NE(r.stderr_lines()[0].find("wrong records"), std::string::npos);
}

// An 8 MiB tmpfs mounted for the test and unmounted afterwards.
class SmallTmpfs {
 public:
  SmallTmpfs() : dir_(NODEPROBE_IO_SCRATCH "/small-tmpfs-" + std::to_string(::getpid())) {
    fs::create_directories(dir_);
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=8m") != 0) {
      why_ = std::string("cannot mount a tmpfs here: ") + std::strerror(errno) + " (needs root or CAP_SYS_ADMIN)";
      fs::remove(dir_);
    }
  }
  ~SmallTmpfs() {
    if (!why_.empty()) return;
    if (::umount(dir_.c_str()) != 0) ::umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove(dir_, ec);
  }
  const std::string& dir() const { return dir_; }
  const std::string& why_not() const { return why_; }

 private:
  std::string dir_, why_;
};

TEST(IoEnospc, SpaceCheckRefusesBeforeWriting) {
  SmallTmpfs t;
  if (!t.why_not().empty()) GTEST_SKIP() << t.why_not();
  expect_refusal(run_io({"prepare", "--dir", t.dir() + "/ds", "--files", "200"}), 2, "not enough space");
  EXPECT_TRUE(fs::is_empty(t.dir()));
}

TEST(IoEnospc, MidWriteRemovesThePartialDataset) {
  SmallTmpfs t;
  if (!t.why_not().empty()) GTEST_SKIP() << t.why_not();
  for (const char* shards : {"0", "2"}) {
    const IoRun r = run_io({"prepare", "--dir", t.dir() + "/ds", "--files", "200", "--shards", shards, "--no-space-check"});
    expect_refusal(r, 2, "ENOSPC");
    EXPECT_NE(r.probe().at("reason").get<std::string>().find("partial dataset was removed"), std::string::npos);
    EXPECT_TRUE(fs::is_empty(t.dir())) << "a half-written dataset was left (shards " << shards << ")";
  }
  // The same directory pre-existing and empty: emptied again, kept.
  fs::create_directories(t.dir() + "/kept");
  const IoRun r = run_io({"prepare", "--dir", t.dir() + "/kept", "--files", "200", "--no-space-check"});
  EXPECT_EQ(r.proc.exit_code, 2);
  EXPECT_TRUE(fs::exists(t.dir() + "/kept"));
  EXPECT_TRUE(fs::is_empty(t.dir() + "/kept"));
  expect_refusal(run_io({"read", "--dir", t.dir() + "/kept"}), 2, "empty directory");
}

TEST(IoDeadline, StopsBeforeTheTimeoutWithAPartialReport) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "64", "--size", "4k"});
  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "-w", "1", "-b", "8", "--step-ms", "50", "-e", "100",
                          "--timeout", "2.5"});
  EXPECT_EQ(r.proc.exit_code, 124) << r.proc.err;  // the exit-code table: a timeout is 124
  EXPECT_EQ(report_problems(r.report), "");
  EXPECT_EQ(r.probe().at("status"), "timeout");
  EXPECT_EQ(r.check("io.complete").at("status"), "warn");
  EXPECT_EQ(r.probe().at("data").at("stop_reason"), "deadline");
  EXPECT_GT(r.probe().at("data").at("samples").get<int>(), 0);
}

}  // namespace
}  // namespace nodeprobe::io::testing
