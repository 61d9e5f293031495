// Issue 14's hostile inputs against the real executables: each case as the
// issue reported it (hang, unbounded growth, crash, NaN accepted, a link
// followed out of a bundle, a bad gzip accepted, a secret in a report), each
// expected to end promptly with the right exit code and a one-line reason.
#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "nodeprobe/report_json.h"
#include "nodeprobe/subprocess.h"
#include "secret_shapes.h"
#include "tar_gz.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::bin;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

// Runs our executable with stdin from `stdin_path`; a hang ends at the deadline (and fails the test).
SpawnResult run_in(std::vector<std::string> argv, const std::string& stdin_path = "/dev/null", double timeout_s = 20,
                   std::vector<std::string> env = {}) {
  SpawnOptions o;
  o.argv = std::move(argv);
  o.stdin_path = stdin_path;
  o.env_set = std::move(env);
  o.capture_stdout = o.capture_stderr = true;
  o.capture_limit = 16u << 20;
  o.timeout_s = timeout_s;
  return run_process(o);
}

// The usage contract: the exit code, not killed, a reason on one line.
void expect_one_line(const SpawnResult& r, int code, const std::string& reason) {
  EXPECT_FALSE(r.timed_out) << "hung: " << r.describe();
  EXPECT_EQ(r.term_signal, 0) << r.describe();
  EXPECT_EQ(r.exit_code, code) << r.describe() << "\n" << r.err;
  EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
  const std::string first = r.err.substr(0, r.err.find('\n'));
  EXPECT_NE(first.find(reason), std::string::npos) << "reason not on the first line: " << r.err;
}

const char* kXid = "Nov 29 16:39:36 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n";

TEST(HostileInput, DiagRefusesDevicesAndFifosAtOnce) {
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("fifo").c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), std::string("/dev/urandom"), d.file("fifo")}) {
    const SpawnResult r = run_in({bin("nodeprobe"), "diag", "--log", path, "--json", d.file("r.json"), "-q"});
    expect_one_line(r, 2, path + ": is a ");
    EXPECT_LT(r.duration_s, 10);
    // A valid partial report that names the source and why.
    const Report rep = load_report(d.file("r.json"));
    EXPECT_EQ(rep.verdict, Status::kError);
  }
}

TEST(HostileInput, StdinIsBoundedTypedAndHasAReadDeadline) {
  // report - </dev/zero read without limit.
  expect_one_line(run_in({bin("nodeprobe"), "report", "-"}, "/dev/zero"), 2, "stdin is a character device");
  expect_one_line(run_in({bin("nodeprobe"), "diag", "--log", "-", "-q"}, "/dev/urandom"), 2,
                  "stdin is a character device");
  // A pipe that never ends stops at the cap; one that never speaks at the read deadline.
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("p").c_str(), 0600), 0);
  ::signal(SIGPIPE, SIG_IGN);  // the writer outlives its reader
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const int fd = ::open(d.file("p").c_str(), O_WRONLY);
    const std::string chunk(65536, '{');
    while (fd >= 0 && !stop && ::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    if (fd >= 0) ::close(fd);
  });
  const SpawnResult big = run_in({bin("nodeprobe"), "report", "-", "--max-input-size", "2M"}, d.file("p"));
  stop = true;
  writer.join();
  expect_one_line(big, 2, "stdin: larger than the 2 MiB cap for reports (raise it with --max-input-size)");
  // The writer holds the pipe open, silent, long enough for a slow (sanitizer) start too.
  const double hold_s = 3 * testing::time_factor();
  std::thread silent([&] {
    const int fd = ::open(d.file("p").c_str(), O_WRONLY);
    std::this_thread::sleep_for(std::chrono::duration<double>(hold_s));
    if (fd >= 0) ::close(fd);
  });
  const SpawnResult quiet = run_in({bin("nodeprobe"), "diag", "--log", "-", "--read-timeout", "0.5", "-q"}, d.file("p"));
  silent.join();
  expect_one_line(quiet, 2, "stdin: no data for 0.5 s (raise it with --read-timeout)");
  EXPECT_LT(quiet.duration_s, hold_s - 0.1);  // the read deadline ended it, not the writer's close
}

TEST(HostileInput, AcceptExpectationsMustBeABoundedRegularFile) {
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("fifo").c_str(), 0600), 0);
  // /dev/zero grew accept to 24 GB until the OOM killer ended it.
  expect_one_line(run_in({bin("nodeprobe"), "accept", "--expectations", "/dev/zero", "-q"}), 2,
                  "/dev/zero: is a character device, not a regular file");
  expect_one_line(run_in({bin("nodeprobe"), "accept", "--expectations", d.file("fifo"), "-q"}), 2, "is a FIFO");
  write_file(d.file("big.json"), std::string(3 << 20, ' '));
  expect_one_line(run_in({bin("nodeprobe"), "accept", "--expectations", d.file("big.json"), "--max-input-size", "1M", "-q"}),
                  2, "larger than the 1 MiB cap for data files");
  write_file(d.file("deep.json"), std::string(50000, '[') + std::string(50000, ']'));
  expect_one_line(run_in({bin("nodeprobe"), "accept", "--expectations", d.file("deep.json"), "-q"}), 2,
                  "nested deeper than 64 levels");
}

TEST(HostileInput, SymlinkLoopInALogDirectorySkipsOnlyThatEntry) {
  TempDir d;
  write_file(d.file("a.log"), kXid);
  ASSERT_EQ(::symlink("loop", d.file("loop").c_str()), 0);
  ASSERT_EQ(::symlink("missing", d.file("dangling").c_str()), 0);
  ASSERT_EQ(::mkdir(d.file("z").c_str(), 0700), 0);
  write_file(d.file("z/b.log"), "plain text\n");
  const SpawnResult r = run_in({bin("nodeprobe"), "diag", "--log", d.path(), "--json", d.file("r.json"), "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the Xid is an error finding; the loop is not bad input
  const Report rep = load_report(d.file("r.json"));
  bool xid = false;
  for (const auto& f : rep.findings) xid = xid || f.id == "gpu.xid";
  EXPECT_TRUE(xid);
  std::map<std::string, std::string> status;
  for (const auto& p : rep.probes)
    if (p.name == "diag")
      for (const auto& s : p.data.at("sources")) status[s.value("name", "")] = s.value("status", "") + ": " + s.value("reason", "");
  EXPECT_EQ(status["loop"], "skipped: symbolic link loop");
  EXPECT_EQ(status["dangling"], "skipped: dangling symbolic link");
  EXPECT_EQ(status["z/b.log"].rfind("analysed", 0), 0u) << status["z/b.log"];
}

TEST(HostileInput, BundleDirectoryNeverFollowsALinkOut) {
  TempDir outside, b;
  write_file(outside.file("messages"), kXid);  // would raise gpu.xid if it were read
  ASSERT_EQ(::mkdir(b.file("logs").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(outside.file("messages").c_str(), b.file("logs/messages").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path().c_str(), b.file("cmd").c_str()), 0);
  write_file(b.file("logs/k.log"), "quiet\n");
  write_file(b.file("manifest.json"),
             R"({"schema":"nodeprobe.bundle/1","created_epoch":1764432000,"files":[)"
             R"({"path":"logs/messages","status":"ok"},{"path":"cmd/messages","status":"ok"},{"path":"logs/k.log","status":"ok"}]})");
  const SpawnResult r = run_in({bin("nodeprobe"), "diag", "--bundle", b.path(), "--json", b.file("r.json"), "-q"});
  expect_one_line(r, 2, "is a symbolic link (not followed inside a bundle)");
  const std::string doc = read_file(b.file("r.json"));
  EXPECT_EQ(doc.find("gpu.xid"), std::string::npos);
  EXPECT_EQ(doc.find("fallen off the bus"), std::string::npos);
  // Without a manifest too: links are listed, never read.
  std::filesystem::remove(b.file("manifest.json"));
  const SpawnResult r2 = run_in({bin("nodeprobe"), "diag", "--bundle", b.path(), "--json", b.file("r2.json"), "-q"});
  EXPECT_EQ(r2.exit_code, 2) << r2.err;
  EXPECT_EQ(read_file(b.file("r2.json")).find("gpu.xid"), std::string::npos);
}

// A bundle written by our own writer, then damaged in its gzip trailer.
TEST(HostileInput, BundleWithABadGzipTrailerIsRejected) {
  TempDir d;
  {
    diag::TarGzWriter w(d.file("good.tar.gz"));
    w.add_directory("b");
    w.add_bytes("b/manifest.json", R"({"schema":"nodeprobe.bundle/1","files":[{"path":"logs/k.log"}]})");
    w.add_bytes("b/logs/k.log", "quiet\n");
    w.finish();
  }
  const std::string good = read_file(d.file("good.tar.gz"));
  ASSERT_GT(good.size(), 8u);
  std::string bad_crc = good, bad_len = good;
  bad_crc[bad_crc.size() - 8] = static_cast<char>(bad_crc[bad_crc.size() - 8] ^ 0xff);
  bad_len[bad_len.size() - 1] = static_cast<char>(bad_len[bad_len.size() - 1] ^ 0x01);
  write_file(d.file("crc.tar.gz"), bad_crc);
  write_file(d.file("len.tar.gz"), bad_len);
  write_file(d.file("trunc.tar.gz"), good.substr(0, good.size() - 4));
  EXPECT_EQ(run_in({bin("nodeprobe"), "diag", "--bundle", d.file("good.tar.gz"), "-q"}).exit_code, 0);
  expect_one_line(run_in({bin("nodeprobe"), "diag", "--bundle", d.file("crc.tar.gz"), "-q"}), 2, "incorrect data check");
  expect_one_line(run_in({bin("nodeprobe"), "diag", "--bundle", d.file("len.tar.gz"), "-q"}), 2, "incorrect length check");
  expect_one_line(run_in({bin("nodeprobe"), "diag", "--bundle", d.file("trunc.tar.gz"), "-q"}), 2,
                  "truncated gzip stream");
}

// A real report from a probe, its values replaced by extremes.
TEST(HostileInput, RenderingExtremeReportsNeverCrashes) {
  TempDir d;
  const SpawnResult ar = run_in({bin("nodeprobe-allreduce"), "--backend", "mpi", "--np", "2", "-b", "8", "-e", "64K",
                                 "-f", "8", "-n", "3", "-w", "1", "--json", d.file("ar.json"), "-q"},
                                "/dev/null", 120);
  if (ar.exit_code != 0) GTEST_SKIP() << "no allreduce report here (mpirun?): " << ar.describe() << " " << ar.err;
  const Json base = Json::parse(read_file(d.file("ar.json")));
  auto with = [&](const std::string& name, const std::function<Json(std::size_t)>& value) {
    Json j = base;
    std::size_t i = 0;
    for (auto& p : j["probes"])
      for (auto& m : p["metrics"]) {
        m["value"] = value(i++);
        if (m.contains("stats") && m["stats"].is_object())
          for (const char* k : {"median", "mean", "min", "max", "p5", "p95"}) m["stats"][k] = m["value"];
      }
    write_file(d.file(name), j.dump());
    return d.file(name);
  };
  const std::string tiny = with("tiny.json", [](std::size_t) { return Json(5e-324); });
  const std::string huge = with("huge.json", [](std::size_t i) { return Json(i % 2 ? 1.7e308 : -1.7e308); });
  const std::string none = with("nan.json", [](std::size_t) { return Json(nullptr); });  // NaN in a report
  for (const std::string& r : {tiny, huge, none}) {
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {bin("nodeprobe"), "report", r, "--html", d.file("r.html")},
             {bin("nodeprobe"), "compare", d.file("ar.json"), r, "--format", "html", "--out", d.file("c.html")},
             {bin("nodeprobe"), "compare", r, r, "--format", "html", "--out", d.file("c2.html")},
             {bin("nodeprobe"), "report", r, "--compare", d.file("ar.json"), "--html", d.file("rc.html")},
             {bin("nodeprobe"), "report", r, "--format", "md"}}) {
      const SpawnResult x = run_in(argv);
      EXPECT_EQ(x.term_signal, 0) << argv[1] << " " << r << ": " << x.describe();
      EXPECT_TRUE(x.exit_code == 0 || x.exit_code == 1) << argv[1] << " " << r << ": " << x.describe() << x.err;
    }
    static const std::regex bad_number(R"re(="[^"]*(nan|inf)[^"]*")re", std::regex::icase);
    for (const char* page : {"r.html", "c.html", "rc.html"})
      EXPECT_FALSE(std::regex_search(read_file(d.file(page)), bad_number)) << page << " of " << r;
  }
}

// Every numeric flag of every executable: NaN, infinities, numbers past the
// double range and out-of-range values end with 64 and one line naming the flag.
struct Flag {
  std::vector<std::string> cmd;  // executable and subcommand
  std::string name;              // "--threshold"
  bool floating;
};

std::vector<Flag> numeric_flags() {
  const std::vector<std::vector<std::string>> cmds = {
      {"nodeprobe", "accept"}, {"nodeprobe", "diag"}, {"nodeprobe", "collect"}, {"nodeprobe", "compare"},
      {"nodeprobe", "report"}, {"nodeprobe-limits"}, {"nodeprobe-io", "prepare"}, {"nodeprobe-io", "read"},
      {"nodeprobe-io", "sweep"}, {"nodeprobe-io", "clean"}, {"nodeprobe-io", "accept"}, {"nodeprobe-allreduce"},
      {"nodeprobe-gemm"}};
  std::vector<Flag> out;
  static const std::regex opt(R"(^\s+(?:-\w,)?(--[\w-]+)(?:,-\w)? (FLOAT|INT|UINT)\b)");
  for (const auto& c : cmds) {
    if (::access(bin(c[0]).c_str(), X_OK) != 0) continue;
    std::vector<std::string> argv = {bin(c[0])};
    argv.insert(argv.end(), c.begin() + 1, c.end());
    argv.push_back("--help");
    std::istringstream help(run_in(argv).out);
    for (std::string line; std::getline(help, line);) {
      std::smatch m;
      if (std::regex_search(line, m, opt)) out.push_back({c, m[1], m[2] == "FLOAT"});
    }
  }
  return out;
}

TEST(HostileInput, EveryNumericFlagRefusesNanInfinityAndOutOfRange) {
  const auto flags = numeric_flags();
  ASSERT_GE(flags.size(), 40u);  // the help parser still finds them
  struct Job {
    std::vector<std::string> argv;
    std::string flag, label;
    SpawnResult r;
  };
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (const auto& f : flags) {
    seen.insert(f.name);
    // NaN, both infinities (one past the double range) and a finite value out of every range.
    for (const char* v : {"nan", "inf", "-1e999", "1e300"}) {
      Job j;
      j.argv = {bin(f.cmd[0])};
      j.argv.insert(j.argv.end(), f.cmd.begin() + 1, f.cmd.end());
      j.argv.push_back(f.name + "=" + v);
      j.flag = f.name;
      j.label = f.cmd[0] + " " + f.name + "=" + v;
      jobs.push_back(std::move(j));
    }
  }
  // Four at a time: the GPU and MPI executables take a while to load.
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next++) < jobs.size();) jobs[i].r = run_in(jobs[i].argv, "/dev/null", 20);
    });
  for (auto& t : pool) t.join();
  for (const auto& j : jobs) {
    EXPECT_EQ(j.r.exit_code, 64) << j.label << ": " << j.r.describe() << " " << j.r.err;
    EXPECT_NE(j.r.err.find(j.flag), std::string::npos) << j.label << ": " << j.r.err;
    EXPECT_EQ(std::count(j.r.err.begin(), j.r.err.end(), '\n'), 1) << j.label << ": " << j.r.err;
  }
  for (const char* named : {"--threshold", "--budget", "--command-timeout", "--timeout",
                            "--target-au", "--step-ms", "--max-seconds", "--seconds-per-point", "--size-spread",
                            "--min-cold-mb-s", "--mesh-timeout", "--compute-ms", "--bucket-mb", "--stall-timeout",
                            "--stepfactor", "--read-timeout"})
    EXPECT_EQ(seen.count(named), 1u) << named << " not found in any --help";
}

// The secrets the issue found in reports and bundles.
TEST(HostileInput, ReportsCarryNoSecretFromArgvEnvOrEvidence) {
  TempDir d;
  write_file(d.file("x.log"),
             "Nov 29 16:39:36 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus. "
             "cmd=https://user:urlTOKEN9@s3.example.com mysql -pMyPw42 password=hunter2\n");
  const SpawnResult r = run_in({bin("nodeprobe"), "diag", "--log", d.file("x.log"), "--label", "secret_key=lblSecret",
                                "--json", d.file("r.json")},
                               "/dev/null", 30,
                               {"UCX_AUTH=ucxSecret", "NCCL_DEBUG_FILE=/tmp/nccl.%h.log?token=envTok77"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string doc = read_file(d.file("r.json"));
  for (const char* s : {"urlTOKEN9", "MyPw42", "hunter2", "lblSecret", "ucxSecret", "envTok77"}) {
    EXPECT_EQ(doc.find(s), std::string::npos) << s;
    EXPECT_EQ(r.out.find(s), std::string::npos) << s;
  }
  EXPECT_NE(doc.find("fallen off the bus"), std::string::npos);  // the evidence itself stays
}

}  // namespace
}  // namespace nodeprobe
