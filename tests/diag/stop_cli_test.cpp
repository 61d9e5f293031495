// `nodeprobe diag` and `nodeprobe collect` stopped by real signals and by
// their own --timeout (issue 14), and diag writing every exporter through
// the one emit path (issue 12): real processes, the reports they leave.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "collector.h"
#include "format_checkers.h"
#include "nodeprobe/report.h"
#include "tar_gz.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

namespace fs = std::filesystem;
using testing::Background;
using testing::read_file;
using testing::run;
using testing::TempDir;

std::string bin(const std::string& name) { return std::string(NODEPROBE_BIN_DIR) + "/" + name; }

const char kXid[] = "May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n";
const char kQuiet[] = "May 18 19:02:40 kernel: eth0: link up, 25000 Mbps, full duplex\n";

Json load(const std::string& path) { return Json::parse(read_file(path)); }

const Json& diag_entry(const Json& rep) {
  for (const auto& p : rep.at("probes"))
    if (p.at("name") == "diag") return p;
  throw std::runtime_error("no diag entry");
}

bool has_finding(const Json& rep, const std::string& id) {
  for (const auto& f : rep.at("findings"))
    if (f.at("id") == id) return true;
  return false;
}

// A FIFO diag reads as stdin; the test holds the write end (non-blocking).
class Feed {
 public:
  explicit Feed(const std::string& path) : path_(path) {
    if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo");
    // Read-write: opening does not wait for the reader, and EOF never comes.
    fd_ = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  }
  ~Feed() { ::close(fd_); }
  void write(const std::string& s) {
    for (std::size_t off = 0; off < s.size();) {
      const ssize_t n = ::write(fd_, s.data() + off, s.size() - off);
      if (n <= 0) return;  // full: the reader is busy or gone
      off += static_cast<std::size_t>(n);
    }
  }
  const std::string& path() const { return path_; }
  /// Waits until the reader has taken everything written (the FIFO is
  /// empty): it is running and reading, whatever the machine's load. A fixed
  /// sleep lost that race under load (the signal came before the read began).
  bool drained(double timeout_s) const {
    return testing::wait_for(
        [&] {
          int n = -1;
          return ::ioctl(fd_, FIONREAD, &n) == 0 && n == 0;
        },
        timeout_s);
  }

 private:
  std::string path_;
  int fd_ = -1;
};

std::string repeat(const char* line, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += line;
  return s;
}

TEST(DiagStop, SigintWhileReadingKeepsWhatWasRead) {
  TempDir d;
  Feed feed(d.file("in"));
  Background p({bin("nodeprobe"), "diag", "--log", "-", "--json", d.file("r.json"), "-q"}, {}, feed.path());
  feed.write(kXid);
  ASSERT_TRUE(feed.drained(30)) << p.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the line it took is judged before the stop
  p.signal(SIGINT);
  // Lines keep coming: the reader returns and sees the stop.
  for (int i = 0; i < 50 && testing::process_alive(p.pid()); ++i) {
    feed.write(repeat(kQuiet, 100));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(p.wait(30), 130) << p.err();
  const Json rep = load(d.file("r.json"));
  EXPECT_TRUE(has_finding(rep, "gpu.xid")) << rep.dump();  // what was read is judged
  const Json& e = diag_entry(rep);
  EXPECT_EQ(e.at("status"), "error");
  EXPECT_NE(e.at("reason").get<std::string>().find("interrupted by SIGINT"), std::string::npos) << e.dump();
  EXPECT_EQ(e.at("data").at("sources").at(0).at("status"), "partial");
}

TEST(DiagStop, ReadThatNeverReturnsStillLeavesAReportAfterTheGrace) {
  TempDir d;
  Feed feed(d.file("in"));
  Background p({bin("nodeprobe"), "diag", "--log", "-", "--json", d.file("r.json"), "-q"}, {}, feed.path());
  feed.write(kXid);
  ASSERT_TRUE(feed.drained(30)) << p.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  p.signal(SIGTERM);  // nothing more is written: the read blocks for good
  ASSERT_EQ(p.wait(30), 130) << p.err();
  EXPECT_NE(p.err().find("did not stop in time"), std::string::npos) << p.err();
  const Json rep = load(d.file("r.json"));
  const Json& e = diag_entry(rep);
  EXPECT_EQ(e.at("status"), "error");
  EXPECT_NE(e.at("reason").get<std::string>().find("interrupted by SIGTERM"), std::string::npos) << e.dump();
}

TEST(DiagStop, OwnTimeoutExits124WithWhatWasRead) {
  TempDir d;
  Feed feed(d.file("in"));
  // 3 s, time enough to start (loading and compiling some 2200 patterns: 0.36-0.37 s, the start-up
  // that diag/bench/bench_scan.sh measures, several times that under load) and read the first line (a
  // sanitizer build needs longer).
  std::ostringstream timeout;
  timeout << 3 * testing::time_factor();
  Background p({bin("nodeprobe"), "diag", "--log", "-", "--timeout", timeout.str(), "--json", d.file("r.json"), "-q"},
               {}, feed.path());
  feed.write(kXid);
  for (int i = 0; i < 600 && testing::process_alive(p.pid()); ++i) {
    feed.write(repeat(kQuiet, 10));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(p.wait(30), 124) << p.err();
  const Json rep = load(d.file("r.json"));
  EXPECT_TRUE(has_finding(rep, "gpu.xid"));
  const Json& e = diag_entry(rep);
  EXPECT_EQ(e.at("status"), "timeout");
  EXPECT_NE(e.at("reason").get<std::string>().find("deadline of --timeout " + timeout.str() + " s passed"),
            std::string::npos)
      << e.dump();
}

// Issue 14: a Ctrl-C during `diag --bundle` left a 1.1 GB extraction directory.
TEST(DiagStop, SigintDuringABundleRemovesItsExtractionDirectory) {
  TempDir d, tmp;
  {
    TarGzWriter w(d.file("b.tar.gz"));
    w.add_directory("logs");
    w.add_bytes("logs/kern.log", kXid + repeat(kQuiet, 1 << 20));  // 64 MB unpacked
    w.finish();
  }
  Background p({bin("nodeprobe"), "diag", "--bundle", d.file("b.tar.gz"), "--json", d.file("r.json"), "-q"},
               {"TMPDIR=" + tmp.path()});
  ASSERT_TRUE(testing::wait_for([&] { return !testing::entries_with_prefix(tmp.path(), "nodeprobe-diag").empty(); },
                                30))
      << p.err();
  p.signal(SIGINT);
  ASSERT_EQ(p.wait(30), 130) << p.err();
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "the extraction directory was left behind";
  const Json rep = load(d.file("r.json"));
  const Json& e = diag_entry(rep);
  EXPECT_EQ(e.at("status"), "error");
  EXPECT_NE(e.at("reason").get<std::string>().find("interrupted by SIGINT"), std::string::npos) << e.dump();
}

TEST(DiagEmit, WritesEveryExporterAndHonoursTheSharedFlags) {
  TempDir d;
  testing::write_file(d.file("kern.log"), kXid);
  const auto r = run({bin("nodeprobe"), "diag", "--log", d.file("kern.log"), "--json", "-", "--label", "L1",
                      "--timeout", "60", "--verbose", "--quiet", "--prometheus", d.file("p.prom"),
                      "--cloudwatch-emf", d.file("e.json"), "--junit", d.file("j.xml")});
  ASSERT_EQ(r.exit_code, 1) << r.err;  // an error finding
  const Json rep = Json::parse(r.out);  // only JSON on stdout
  EXPECT_EQ(rep.at("run").at("label"), "L1");
  EXPECT_EQ(testing::check_prometheus(read_file(d.file("p.prom"))), "");
  std::size_t records = 0;
  EXPECT_EQ(testing::check_emf(read_file(d.file("e.json")), &records), "");
  EXPECT_GT(records, 0u);
  testing::XmlNode junit;
  EXPECT_EQ(testing::check_junit(read_file(d.file("j.xml")), &junit), "");
  EXPECT_NE(read_file(d.file("j.xml")).find("gpu.xid"), std::string::npos);
  const auto v = run({bin("nodeprobe"), "diag", "--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("nodeprobe"), std::string::npos);
}

TEST(CollectStop, OwnTimeoutBundlesWhatWasCollected) {
  TempDir d, tmp;
  const auto r = run({bin("nodeprobe"), "collect", "--out", d.file("b.tar.gz"), "--timeout", "0.001", "-q"}, 60,
                     {"TMPDIR=" + tmp.path()});
  ASSERT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(r.err.find("deadline of --timeout 0.001 s passed"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(tmp.path()));
  // The bundle is valid and says what was not collected.
  const auto b = run({bin("nodeprobe"), "diag", "--bundle", d.file("b.tar.gz"), "--json", d.file("r.json"), "-q"});
  const Json rep = load(d.file("r.json"));
  const Json& e = diag_entry(rep);
  bool told = false;
  for (const auto& s : e.at("data").at("sources"))
    told = told || s.value("reason", "").find("not collected: deadline of --timeout") != std::string::npos;
  EXPECT_TRUE(told) << e.dump();
}

TEST(CollectStop, SigintLeavesAValidBundleAndNoTemporaryDirectory) {
  TempDir d, tmp;
  Background p({bin("nodeprobe"), "collect", "--out", d.file("b.tar.gz"), "-q"}, {"TMPDIR=" + tmp.path()});
  ASSERT_TRUE(testing::wait_for(
      [&] { return !testing::entries_with_prefix(tmp.path(), "nodeprobe-collect").empty(); }, 30));
  p.signal(SIGINT);
  ASSERT_EQ(p.wait(30), 130) << p.err();
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "the collection directory was left behind";
  const auto b = run({bin("nodeprobe"), "diag", "--bundle", d.file("b.tar.gz"), "--json", d.file("r.json"), "-q"});
  EXPECT_NE(b.exit_code, 2) << b.err;  // a readable bundle
}

}  // namespace
}  // namespace nodeprobe::diag
