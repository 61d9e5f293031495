// nodeprobe accept on this (CPU-only) machine, for real: the real runner and
// the probes this build has; probes not built here show as not available.
// Stand-ins for io/allreduce/gemm (fake_probe.cpp) test the plan mechanics.
// Every run sets NODEPROBE_NO_IMDS=1 (and --no-imds): tests never contact
// the instance metadata service.
#include <gtest/gtest.h>

#include <pty.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "format_checkers.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::read_file;
using testing::TempDir;

// testing::bin() relies on a definition nodeprobe_testsupport does not get;
// the test's own NODEPROBE_BIN_DIR is right.
std::string bin(const std::string& name) { return std::string(NODEPROBE_BIN_DIR) + "/" + name; }

const std::vector<std::string> kNoImds = {"NODEPROBE_NO_IMDS=1"};
// A system with no history: tests that are not about this machine read it
// (--sysroot) instead of this machine's kernel log, limits and GPUs.
const std::string kCleanRoot = std::string(NODEPROBE_FIXTURES) + "/sysroot/empty";

struct AcceptRunResult {
  SpawnResult r;
  Report report;
  double wall_s = 0;
};

AcceptRunResult accept(std::vector<std::string> args, const TempDir& tmp, std::vector<std::string> env = kNoImds) {
  AcceptRunResult out;
  std::vector<std::string> argv = {bin("nodeprobe"), "accept", "--no-imds", "--json", tmp.file("r.json")};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto t0 = std::chrono::steady_clock::now();
  out.r = testing::run(argv, 120, env);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (std::filesystem::exists(tmp.file("r.json"))) out.report = load_report(tmp.file("r.json"));
  return out;
}

const ProbeResult* probe(const Report& r, const std::string& name) {
  for (const auto& p : r.probes)
    if (p.name == name) return &p;
  return nullptr;
}

TEST(AcceptRun, QuickProfileOnThisCpuOnlyMachine) {
  TempDir tmp;
  const AcceptRunResult run = accept({"--data-dir", tmp.path(), "--prometheus", tmp.file("n.prom"), "--cloudwatch-emf",
                          tmp.file("n.emf"), "--junit", tmp.file("n.xml"), "--label", "ci"},
                         tmp);
  // On a loaded machine a probe can run out of its share of the budget: a
  // timeout (exit 2) is the budget at work; anything else must be 0 or 1.
  bool errored = false;
  for (const auto& p : run.report.probes) errored |= p.status == Status::kError;
  ASSERT_TRUE(run.r.exited_ok() || run.r.exit_code == 1 || (run.r.exit_code == 2 && !errored))
      << run.r.describe() << run.r.err << run.r.out;
  // The quick profile's CPU-only budget is 20 s; allow start-up slack (longer
  // in a sanitizer build), this is a deadline, not a speed claim.
  EXPECT_LT(run.wall_s, 20.0 + 10.0 * testing::time_factor());
  bool available = false;
  const std::string errors = testing::schema_errors(nlohmann::json::parse(read_file(tmp.file("r.json"))), &available);
  EXPECT_EQ(errors, "");
  EXPECT_EQ(run.report.run.label, "ci");
  // The GPU section says why it did not run.
  const ProbeResult* gemm = probe(run.report, "gemm");
  ASSERT_TRUE(gemm);
  // skip; or timeout when a loaded machine spent the budget before gemm's turn.
  EXPECT_TRUE(gemm->status == Status::kSkip || gemm->status == Status::kTimeout) << to_string(gemm->status);
  EXPECT_FALSE(gemm->reason.empty());
  const ProbeResult* nccl = probe(run.report, "allreduce.nccl");
  ASSERT_TRUE(nccl);
  EXPECT_EQ(nccl->status, Status::kSkip);
  EXPECT_TRUE(nccl->reason.find("no NVIDIA GPU") != std::string::npos ||
              nccl->reason.find("not part of this build") != std::string::npos)
      << nccl->reason;
  const ProbeResult* limits = probe(run.report, "limits");
  ASSERT_TRUE(limits);
  EXPECT_NE(limits->status, Status::kSkip);
  EXPECT_FALSE(limits->checks.empty());
  ASSERT_TRUE(probe(run.report, "expect"));
  EXPECT_EQ(probe(run.report, "expect")->status, Status::kSkip);
  // Where the IO dataset went, and why, in the report and the text.
  EXPECT_EQ(probe(run.report, "expect")->data.value("data_dir", ""), tmp.path());
  EXPECT_EQ(probe(run.report, "expect")->data.value("data_dir_reason", ""), "given with --data-dir");
  EXPECT_NE(run.r.out.find("IO dataset in " + tmp.path() + ": given with --data-dir"), std::string::npos) << run.r.out;
  // The verdict table, without progress control characters on a pipe.
  EXPECT_NE(run.r.out.find("verdict: "), std::string::npos);
  EXPECT_NE(run.r.out.find("probe "), std::string::npos);
  EXPECT_EQ(run.r.out.find('\r'), std::string::npos);
  EXPECT_EQ(run.r.out.find("\033["), std::string::npos);
  // Exports are valid in their formats.
  EXPECT_EQ(testing::check_prometheus(read_file(tmp.file("n.prom"))), "");
  EXPECT_EQ(testing::check_emf(read_file(tmp.file("n.emf"))), "");
  EXPECT_EQ(testing::check_junit(read_file(tmp.file("n.xml"))), "");
  // Nothing left behind in the data directory.
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path() + "/") || !std::filesystem::exists(tmp.file("nodeprobe-accept-io")));
}

TEST(AcceptRun, ExpectingAGpuInstanceOnASystemWithoutGpusFailsWithTheFinding) {
  TempDir tmp;
  const AcceptRunResult run = accept({"--only", "limits", "--expect", "p4d.24xlarge", "--sysroot", kCleanRoot}, tmp);
  EXPECT_EQ(run.r.exit_code, 1) << run.r.err;
  EXPECT_EQ(run.report.host.instance_type, "p4d.24xlarge");
  const ProbeResult* e = probe(run.report, "expect");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, Status::kFail);
  bool found = false;
  for (const auto& f : run.report.findings)
    if (f.id == "gpu.not_found") {
      found = true;
      EXPECT_FALSE(f.remedy.empty());
    }
  EXPECT_TRUE(found);
  EXPECT_NE(run.r.out.find("gpu.not_found"), std::string::npos);
  EXPECT_NE(run.r.out.find("(exit 1)"), std::string::npos);
}

TEST(AcceptRun, BadInputGivesOneLineAndTheRightExitCode) {
  TempDir tmp;
  AcceptRunResult run = accept({"--expect", "z9.enormous"}, tmp);
  EXPECT_EQ(run.r.exit_code, 64);
  EXPECT_NE(run.r.err.find("unknown instance type 'z9.enormous'"), std::string::npos);
  EXPECT_EQ(std::count(run.r.err.begin(), run.r.err.end(), '\n'), 1);
  testing::write_file(tmp.file("bad.json"), "{\"schema\": \"nodeprobe.instance_types/1\", \"oops\": 1}");
  run = accept({"--expectations", tmp.file("bad.json")}, tmp);
  EXPECT_EQ(run.r.exit_code, 2);
  EXPECT_NE(run.r.err.find("unknown key \"oops\""), std::string::npos);
  run = accept({"--only", "nothing"}, tmp);
  EXPECT_EQ(run.r.exit_code, 64);
  auto r = testing::run({bin("nodeprobe"), "accept", "--json", "/nonexistent/dir/r.json"}, 30, kNoImds);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(AcceptRun, FixtureDmiNamesTheInstanceTypeWithoutImds) {
  TempDir tmp, root;
  testing::write_file(root.file("sys/devices/virtual/dmi/id/sys_vendor"), "Amazon EC2\n");
  testing::write_file(root.file("sys/devices/virtual/dmi/id/product_name"), "g5.xlarge\n");
  const AcceptRunResult run = accept({"--only", "limits", "--sysroot", root.path()}, tmp);
  EXPECT_EQ(run.report.host.instance_type, "g5.xlarge");
  const ProbeResult* e = probe(run.report, "expect");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->config.value("instance_type_source", ""), "dmi");
  EXPECT_EQ(e->status, Status::kFail);  // g5.xlarge has a GPU; the fixture has none
}

TEST(AcceptRun, ProgressOnATerminalOnly) {
  // Run under a pseudo-terminal: the progress line appears there.
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("NODEPROBE_NO_IMDS", "1", 1);
    const std::string exe = bin("nodeprobe");
    ::execl(exe.c_str(), exe.c_str(), "accept", "--no-imds", "--only", "limits", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child has exited
    out.append(buf, static_cast<std::size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  EXPECT_TRUE(WIFEXITED(status)) << out;
  EXPECT_NE(out.find("\r\033[K[1/1] limits"), std::string::npos) << out;
  EXPECT_NE(out.find("verdict:"), std::string::npos);
}

class FakeProbes : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"nodeprobe-io", "nodeprobe-allreduce", "nodeprobe-gemm"})
      std::filesystem::create_symlink(NODEPROBE_FAKE_PROBE, dir.file(name));
    std::filesystem::create_symlink(bin("nodeprobe-limits"), dir.file("nodeprobe-limits"));
  }
  std::vector<std::string> env(bool hang = false) const {
    std::vector<std::string> e = kNoImds;
    e.push_back("NODEPROBE_PROBE_DIR=" + dir.path());
    if (hang) e.push_back("NP_FAKE_HANG=1");
    return e;
  }
  TempDir dir, data, tmp;
};

TEST_F(FakeProbes, StepsDatasetMpirunAndNamesFollowThePlan) {
  // The verdict is the fakes' (warn): nothing of this machine's own history
  // (an old OOM kill in its kernel log) may change it.
  const AcceptRunResult run = accept({"--data-dir", data.path(), "--sysroot", kCleanRoot}, tmp, env());
  ASSERT_TRUE(run.r.exited_ok()) << run.r.describe() << run.r.err << run.r.out;
  const ProbeResult* io = probe(run.report, "io");
  ASSERT_TRUE(io) << run.r.out;
  EXPECT_EQ(io->status, Status::kPass);  // it got a fresh, empty dataset directory
  // The dataset was under --data-dir and is gone afterwards.
  const std::string dataset = io->config["argv"][4];
  EXPECT_EQ(dataset.rfind(data.path() + "/nodeprobe-accept-io-", 0), 0u) << dataset;
  EXPECT_FALSE(std::filesystem::exists(dataset));
  const ProbeResult* ar = probe(run.report, "allreduce");
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->status, Status::kPass) << ar->reason;
  EXPECT_EQ(ar->config.value("ranks", ""), "2");  // --np {ranks}: 2 in the quick profile
  ASSERT_EQ(ar->metrics.size(), 3u);                // mpi, fabric:shm, fabric:tcp
  EXPECT_EQ(ar->metrics[2].labels.at("provider"), "tcp");
  EXPECT_NE(probe(run.report, "allreduce.nccl")->reason.find("no NVIDIA GPU"), std::string::npos);
  EXPECT_EQ(probe(run.report, "gemm")->reason, "fake: no GPU");
  // A finding the probe raised itself is kept, attributed to the plan entry.
  bool fallback = false;
  for (const auto& f : run.report.findings)
    fallback |= f.id == "efa.fallback_tcp" && f.probe == "allreduce";
  EXPECT_TRUE(fallback);
  EXPECT_EQ(run.report.verdict, Status::kWarn);
}

TEST_F(FakeProbes, AHungProbeTimesOutInsideTheBudgetAndLaterOnesAreSkipped) {
  const AcceptRunResult run = accept({"--data-dir", data.path(), "--budget", "8"}, tmp, env(true));
  EXPECT_EQ(run.r.exit_code, 2) << run.r.err;  // a timeout makes the run an error
  EXPECT_LT(run.wall_s, 8.0 + 3.0 * testing::time_factor());  // the budget and start-up slack
  const ProbeResult* gemm = probe(run.report, "gemm");
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->status, Status::kTimeout);
  bool budget_skip = false;
  for (const auto& p : run.report.probes)
    budget_skip |= p.reason.find("budget of 8 s was used up") != std::string::npos;
  EXPECT_TRUE(budget_skip);
  bool finding = false;
  for (const auto& f : run.report.findings) finding |= f.id == "probe.timeout";
  EXPECT_TRUE(finding);
}

TEST_F(FakeProbes, CtrlCLeavesAValidReportOfWhatFinished) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("NODEPROBE_NO_IMDS", "1", 1);
    ::setenv("NODEPROBE_PROBE_DIR", dir.path().c_str(), 1);
    ::setenv("NP_FAKE_HANG", "1", 1);
    ::setenv("NP_FAKE_HANG_MARK", tmp.file("gemm-hangs").c_str(), 1);
    const std::string exe = bin("nodeprobe"), json = tmp.file("r.json");
    ::execl(exe.c_str(), exe.c_str(), "accept", "--no-imds", "-q", "--json", json.c_str(), "--data-dir",
            data.path().c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // limits is done, the fake gemm hangs (not a fixed sleep: under ASan
  // accept took longer than 1.5 s to get there)
  EXPECT_TRUE(testing::wait_for([&] { return std::filesystem::exists(tmp.file("gemm-hangs")); },
                                20 * testing::time_factor()));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const Report r = load_report(tmp.file("r.json"));
  EXPECT_NE(probe(r, "limits")->status, Status::kSkip);
  EXPECT_EQ(probe(r, "gemm")->status, Status::kError);
  EXPECT_EQ(probe(r, "gemm")->reason.rfind("interrupted by SIGINT during gemm", 0), 0u) << probe(r, "gemm")->reason;
  EXPECT_EQ(probe(r, "io")->reason, "not run: interrupted by SIGINT");
  EXPECT_EQ(testing::schema_errors(nlohmann::json::parse(read_file(tmp.file("r.json")))), "");
}

}  // namespace
}  // namespace nodeprobe
