// Bounded, typed input (nodeprobe/input.h, json_input.h): issue 14's
// /dev/zero, /dev/urandom, FIFO, unbounded stdin and symlink-loop cases at
// the level of the one reader every command uses.
#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "nodeprobe/input.h"
#include "nodeprobe/json_input.h"
#include "nodeprobe/size.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::TempDir;
using testing::write_file;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(Input, RegularFileReadsWhole) {
  TempDir d;
  write_file(d.file("a.json"), "{\"a\": 1}");
  EXPECT_EQ(read_input(d.file("a.json"), input_limits(InputKind::kReport)), "{\"a\": 1}");
}

TEST(Input, DevicesAreRefusedWithoutReading) {
  for (const char* dev : {"/dev/zero", "/dev/urandom"}) {
    const std::string why = error_of([&] { read_input(dev, input_limits(InputKind::kLog)); });
    EXPECT_NE(why.find(std::string(dev) + ": is a character device, not a regular file"), std::string::npos)
        << dev << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
  }
}

TEST(Input, FifoWithoutWriterIsRefusedAtOnce) {
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("f").c_str(), 0600), 0);
  std::string why;
  const double s = seconds_of([&] { why = error_of([&] { read_input(d.file("f"), input_limits(InputKind::kConfig)); }); });
  EXPECT_LT(s, 2.0);
  EXPECT_NE(why.find("is a FIFO"), std::string::npos) << why;
  EXPECT_NE(why.find("'-'"), std::string::npos) << why;  // says how to read a pipe
}

TEST(Input, DirectoryIsRefused) {
  TempDir d;
  EXPECT_NE(error_of([&] { read_input(d.path(), input_limits(InputKind::kReport)); }).find("is a directory"),
            std::string::npos);
}

TEST(Input, CapRefusesABigFileBeforeReadingIt) {
  TempDir d;
  write_file(d.file("big"), std::string(2000, 'x'));
  InputLimits l = input_limits(InputKind::kReport, {1000, 0});
  const std::string why = error_of([&] { read_input(d.file("big"), l); });
  EXPECT_NE(why.find("larger than the 1000 B cap for reports"), std::string::npos) << why;
  EXPECT_NE(why.find("--max-input-size"), std::string::npos) << why;
  write_file(d.file("exact"), std::string(1000, 'x'));
  EXPECT_EQ(read_input(d.file("exact"), l).size(), 1000u);
}

TEST(Input, DefaultCapsPerKind) {
  EXPECT_EQ(input_limits(InputKind::kReport).max_bytes, 64ULL << 20);
  EXPECT_EQ(input_limits(InputKind::kConfig).max_bytes, 16ULL << 20);
  EXPECT_EQ(input_limits(InputKind::kLog).max_bytes, 8ULL << 30);
  EXPECT_EQ(input_limits(InputKind::kLog, {5, 0}).max_bytes, 5u);
  EXPECT_EQ(input_limits(InputKind::kLog, {0, 2.5}).read_timeout_s, 2.5);
  EXPECT_EQ(format_size(std::uint64_t{64} << 20), "64 MiB");
  EXPECT_EQ(format_size(std::uint64_t{8} << 30), "8 GiB");
  EXPECT_EQ(format_size(std::uint64_t{1000}), "1000 B");
}

// A pipe on stdin: bounded by the cap, and by the read deadline when silent.
class StdinPipe : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::pipe(fds_), 0);
    saved_ = ::dup(STDIN_FILENO);
    ASSERT_GE(::dup2(fds_[0], STDIN_FILENO), 0);
    ::close(fds_[0]);
  }
  void TearDown() override {
    if (fds_[1] >= 0) ::close(fds_[1]);
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
  }
  int fds_[2] = {-1, -1};
  int saved_ = -1;
};

TEST_F(StdinPipe, EndlessPipeStopsAtTheCap) {
  std::thread writer([fd = fds_[1]] {
    const std::string chunk(65536, '\0');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
  });
  const std::string why = error_of([] { read_input("-", input_limits(InputKind::kReport, {1 << 20, 0})); });
  ::signal(SIGPIPE, SIG_IGN);
  ::dup2(saved_, STDIN_FILENO);  // closes the read end: the writer gets EPIPE and ends
  writer.join();
  EXPECT_NE(why.find("stdin: larger than the 1 MiB cap for reports"), std::string::npos) << why;
}

TEST_F(StdinPipe, SilentPipeEndsAtTheReadDeadline) {
  std::string why;
  const double s = seconds_of([&] { why = error_of([] { read_input("-", input_limits(InputKind::kLog, {0, 0.3})); }); });
  EXPECT_NE(why.find("stdin: no data for 0.3 s"), std::string::npos) << why;
  EXPECT_GE(s, 0.25);
  EXPECT_LT(s, 5.0);
}

TEST_F(StdinPipe, PipeThatEndsIsReadWhole) {
  ASSERT_EQ(::write(fds_[1], "abc", 3), 3);
  ::close(fds_[1]);
  fds_[1] = -1;
  EXPECT_EQ(read_input("-", input_limits(InputKind::kReport)), "abc");
}

// diag --bundle DIR: nothing outside the bundle is read through a link.
TEST(Input, OpenBeneathNeverFollowsALink) {
  TempDir outside, d;
  write_file(outside.file("secret"), "root-only");
  ASSERT_EQ(::mkdir(d.file("logs").c_str(), 0700), 0);
  write_file(d.file("logs/ok.log"), "fine\n");
  write_file(d.file("two.log"), "x\n");
  ASSERT_EQ(::symlink(outside.file("secret").c_str(), d.file("logs/link.log").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path().c_str(), d.file("out").c_str()), 0);
  ASSERT_EQ(::link(d.file("two.log").c_str(), d.file("hard.log").c_str()), 0);
  DirHandle dir(d.path());
  const InputLimits l = input_limits(InputKind::kLog);
  EXPECT_EQ(InputFile::open_beneath(dir.fd(), "logs/ok.log", l, "b/logs/ok.log").read_all(), "fine\n");
  const std::string link = error_of([&] { InputFile::open_beneath(dir.fd(), "logs/link.log", l, "b/logs/link.log"); });
  EXPECT_NE(link.find("b/logs/link.log: is a symbolic link (not followed inside a bundle)"), std::string::npos) << link;
  const std::string via = error_of([&] { InputFile::open_beneath(dir.fd(), "out/secret", l, "b/out/secret"); });
  EXPECT_NE(via.find("out is a symbolic link"), std::string::npos) << via;
  EXPECT_NE(error_of([&] { InputFile::open_beneath(dir.fd(), "../x", l, "b/../x"); }).find("not a safe relative path"),
            std::string::npos);
  EXPECT_NE(error_of([&] { InputFile::open_beneath(dir.fd(), "/etc/passwd", l, "p"); }).find("not a safe relative path"),
            std::string::npos);
  EXPECT_NE(error_of([&] { InputFile::open_beneath(dir.fd(), "hard.log", l, "b/hard.log"); }).find("has 2 hard links"),
            std::string::npos);
  EXPECT_THROW(DirHandle(dir, "out"), InputError);
}

// A symbolic link loop inside a --log directory: that entry is skipped with
// its reason, every other entry is still listed (the scan goes on).
TEST(Input, WalkDirReportsBadEntriesAndGoesOn) {
  TempDir outside, d;
  write_file(outside.file("target.log"), "t\n");
  write_file(d.file("a.log"), "a\n");
  ASSERT_EQ(::mkdir(d.file("sub").c_str(), 0700), 0);
  write_file(d.file("sub/z.log"), "z\n");
  ASSERT_EQ(::symlink("loop", d.file("loop").c_str()), 0);
  ASSERT_EQ(::symlink("nowhere", d.file("dangling").c_str()), 0);
  ASSERT_EQ(::symlink(outside.file("target.log").c_str(), d.file("link.log").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path().c_str(), d.file("linkdir").c_str()), 0);
  ASSERT_EQ(::mkfifo(d.file("fifo").c_str(), 0600), 0);
  DirHandle dir(d.path());
  auto reason = [](const std::vector<DirEntryInfo>& v, const std::string& rel) -> std::string {
    for (const auto& e : v)
      if (e.rel == rel) return e.regular ? "regular" : e.reason;
    return "absent";
  };
  const auto follow = walk_dir(dir, true);
  EXPECT_EQ(reason(follow, "a.log"), "regular");
  EXPECT_EQ(reason(follow, "sub/z.log"), "regular");
  EXPECT_EQ(reason(follow, "loop"), "symbolic link loop");
  EXPECT_EQ(reason(follow, "dangling"), "dangling symbolic link");
  EXPECT_EQ(reason(follow, "link.log"), "regular");
  EXPECT_EQ(reason(follow, "linkdir"), "symbolic link to a directory (not followed)");
  EXPECT_EQ(reason(follow, "fifo"), "is a FIFO (named pipe), not a regular file");
  const auto contained = walk_dir(dir, false);
  EXPECT_EQ(reason(contained, "a.log"), "regular");
  EXPECT_EQ(reason(contained, "link.log"), "symbolic link (not followed)");
  EXPECT_EQ(reason(contained, "loop"), "symbolic link (not followed)");
  EXPECT_EQ(reason(walk_dir(dir, true, 0), "sub"), "deeper than 0 levels (not read)");
  EXPECT_EQ(walk_dir(dir, true, 8, 2).back().reason, "more than 2 entries: the rest not read");
}

TEST(JsonInput, DepthAndNumbersAreBounded) {
  EXPECT_EQ(parse_json_text("{\"a\": [1, {\"b\": 2}]}", "doc")["a"][1]["b"], 2);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string why = error_of([&] { parse_json_text(deep, "deep.json"); });
  EXPECT_EQ(why, "deep.json: JSON nested deeper than 64 levels");
  why = error_of([&] { parse_json_text("{\"v\": 1e999}", "big.json"); });
  EXPECT_EQ(why.rfind("big.json: not valid JSON", 0), 0u) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
  EXPECT_EQ(error_of([&] { parse_json_text("", "e.json"); }), "e.json: empty file");
  EXPECT_EQ(error_of([&] { parse_json_text("{", "t.json"); }).rfind("t.json: not valid JSON (byte", 0), 0u);
}

}  // namespace
}  // namespace nodeprobe
