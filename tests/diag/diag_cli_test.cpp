// The real `nodeprobe diag` and `nodeprobe collect` on this machine: exit
// codes, one-line errors, valid (partial) reports, stdin, gzip, bundles.
#include <gtest/gtest.h>

#include <zlib.h>

#include <filesystem>
#include <set>

#include "nodeprobe/report.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

using testing::read_file;
using testing::run;
using testing::TempDir;
using testing::write_file;

// testing::bin() is compiled without NODEPROBE_BIN_DIR (it lives in the
// support library); this test executable has the definition itself.
std::string bin(const std::string& name) { return std::string(NODEPROBE_BIN_DIR) + "/" + name; }

std::string sample(const std::string& rel) { return std::string(NODEPROBE_DIAG_CORPUS) + "/" + rel; }

Json report_at(const std::string& path) {
  const Json j = Json::parse(read_file(path));
  bool have = false;
  const std::string errors = testing::schema_errors(nlohmann::json::parse(j.dump()), &have);
  EXPECT_TRUE(errors.empty()) << errors;
  return j;
}

std::set<std::string> ids(const Json& rep) {
  std::set<std::string> s;
  for (const auto& f : rep.at("findings")) s.insert(f.at("id").get<std::string>() + "/" + f.at("severity").get<std::string>());
  return s;
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(DiagCli, ErrorFindingExitsOneWithAValidReport) {
  TempDir d;
  const auto r = run({bin("nodeprobe"), "diag", "--log", sample("failures/xid79_ogkm1151.log"), "--json", d.file("r.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json rep = report_at(d.file("r.json"));
  EXPECT_TRUE(ids(rep).count("gpu.xid/error"));
  EXPECT_EQ(rep.at("verdict"), "fail");
  EXPECT_NE(r.out.find("fix 1:"), std::string::npos) << r.out;
}

TEST(DiagCli, HealthyLogExitsZero) {
  const auto r = run({bin("nodeprobe"), "diag", "--log", sample("healthy/nccl_socket_init_nccl226.log")});
  EXPECT_EQ(r.exit_code, 0) << r.describe() << r.start_error << r.out << r.err;
}

// A log that ends in a crash or an error exit, with nothing at the node level
// in it, is not reported as clean: the failure is named (info, the node's
// verdict stays pass) and the remedy says where its cause is. Where another
// finding of the same run explains it, from the same log or another source,
// that finding stands alone.
TEST(DiagCli, AFailedJobWithNoNodeCauseIsNamedAndExplainedOnesAreNot) {
  TempDir d;
  // A real log (heldout-GO, xinference on sglang): a segfault whose cause was only in the thread.
  auto r = run({bin("nodeprobe"), "diag", "--log", sample("failures/go_xinference_sglang_multinode_segfault_shm.log"),
                "--json", d.file("a.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Json rep = report_at(d.file("a.json"));
  EXPECT_EQ(ids(rep), (std::set<std::string>{"job.unexplained_failure/info"}));
  EXPECT_EQ(rep.at("verdict"), "pass");
  EXPECT_NE(r.out.find("no node-level cause"), std::string::npos) << r.out;

  const std::string job =
      "[2024-05-02 10:11:12,345] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
      "local_rank: 0 (pid: 4242) of binary: /usr/bin/python3\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n";
  write_file(d.file("job.log"), job);
  r = run({bin("nodeprobe"), "diag", "--log", d.file("job.log"), "--json", d.file("b.json"), "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  rep = report_at(d.file("b.json"));
  ASSERT_EQ(rep.at("findings").size(), 1u) << rep.dump();
  EXPECT_EQ(rep.at("findings")[0].at("facts").at("cause"), "exit_status");

  // The same job log with the node's kernel log, which holds the cause: only the cause.
  write_file(d.file("kern.log"),
             "[4650180.470990] Out of memory: Killed process 4242 (python3) total-vm:87033376kB, "
             "anon-rss:60356340kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:169956kB oom_score_adj:0\n");
  r = run({bin("nodeprobe"), "diag", "--log", d.file("job.log"), "--log", d.file("kern.log"), "--json",
           d.file("c.json"), "-q"});
  rep = report_at(d.file("c.json"));
  EXPECT_TRUE(ids(rep).count("host.oom/error")) << rep.dump();
  for (const auto& f : rep.at("findings")) EXPECT_NE(f.at("id"), "job.unexplained_failure") << rep.dump();

  // A clean exit is no failure.
  write_file(d.file("ok.log"), "srun: error: gpu-node07: task 0: Exited with exit code 0\nexitcode  : 0 (pid: 4242)\n");
  r = run({bin("nodeprobe"), "diag", "--log", d.file("ok.log"), "--json", d.file("d.json"), "-q"});
  EXPECT_TRUE(report_at(d.file("d.json")).at("findings").empty());
}

TEST(DiagCli, MissingFileIsBadInputWithOneLineAndAPartialReport) {
  TempDir d;
  const auto r = run({bin("nodeprobe"), "diag", "--log", "/nonexistent/nccl.log", "--log",
                      sample("failures/nofile_ancdata_m6anet75.log"), "--json", d.file("r.json"), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cannot open /nonexistent/nccl.log"), std::string::npos) << r.err;
  const Json rep = report_at(d.file("r.json"));
  EXPECT_TRUE(ids(rep).count("limits.nofile/warn"));  // the readable log still counted
}

TEST(DiagCli, StdinAndGzip) {
  TempDir d;
  SpawnOptions o;
  o.argv = {bin("nodeprobe"), "diag", "--log", "-", "--json", "-", "-q"};
  o.stdin_path = sample("failures/host_oom_kill_tranx41.log");
  o.capture_stdout = o.capture_stderr = true;
  o.timeout_s = 60;
  const SpawnResult r = run_process(o);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(ids(Json::parse(r.out)).count("host.oom/error"));

  const std::string text = read_file(sample("failures/max_map_count_elk334.log"));
  gzFile gz = gzopen(d.file("x.log.gz").c_str(), "wb");
  gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
  const auto g = run({bin("nodeprobe"), "diag", "--log", d.file("x.log.gz"), "--json", d.file("g.json"), "-q"});
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_TRUE(ids(report_at(d.file("g.json"))).count("limits.max_map_count/warn"));
}

TEST(DiagCli, GarbageLongLinesAndBadFlags) {
  TempDir d;
  std::string junk;
  for (unsigned i = 0; i < 3000000; ++i) junk += static_cast<char>((i * 2654435761u) >> 24);
  write_file(d.file("junk.bin"), junk);
  write_file(d.file("long.log"), std::string(3u << 20, 'a') + " Too many open files\nshort line\n");
  auto r = run({bin("nodeprobe"), "diag", "--log", d.file("junk.bin"), "--log", d.file("long.log"), "--json", d.file("r.json"), "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json rep = report_at(d.file("r.json"));
  bool cut = false;
  for (const auto& p : rep.at("probes"))
    for (const auto& s : p.at("data").value("sources", Json::array())) cut |= s.value("long_lines_cut", 0) == 1;
  EXPECT_TRUE(cut);
  r = run({bin("nodeprobe"), "diag", "--log", d.file("junk.bin"), "--since", "3x"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  r = run({bin("nodeprobe"), "diag", "--bogus"});
  EXPECT_EQ(r.exit_code, 64);
}

TEST(DiagCli, CollectThenDiagBundleGivesTheLiveFindings) {
  TempDir d;
  const auto live = run({bin("nodeprobe"), "diag", "--json", d.file("live.json"), "-q"}, 120);
  ASSERT_TRUE(live.exit_code == 0 || live.exit_code == 1) << live.err;
  const auto c = run({bin("nodeprobe"), "collect", "--out", d.file("b.tar.gz")}, 120);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("wrote"), std::string::npos);
  const auto b = run({bin("nodeprobe"), "diag", "--bundle", d.file("b.tar.gz"), "--json", d.file("bundle.json"), "-q"}, 120);
  EXPECT_EQ(b.exit_code, live.exit_code) << b.err;
  EXPECT_EQ(ids(report_at(d.file("bundle.json"))), ids(report_at(d.file("live.json"))));

  // A truncated bundle: bad input, one line, still a report.
  const std::string full = read_file(d.file("b.tar.gz"));
  write_file(d.file("cut.tar.gz"), full.substr(0, full.size() / 2));
  const auto t = run({bin("nodeprobe"), "diag", "--bundle", d.file("cut.tar.gz"), "--json", d.file("cut.json"), "-q"});
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("truncated"), std::string::npos) << t.err;
  report_at(d.file("cut.json"));

  const auto bad = run({bin("nodeprobe"), "collect", "--out", "/nonexistent/dir/b.tar.gz"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// Item 6 of issue 13: one verdict live and offline. accept on this machine,
// then a bundle with its report, then diag on that bundle: the same findings
// with the same severities (the report's texts, e.g. a CUDA "driver version
// is insufficient" reason on a node without a driver, are never log lines).
TEST(DiagCli, AcceptDiagAndItsBundleGiveOneVerdict) {
  TempDir d;
  const auto a = run({bin("nodeprobe"), "accept", "--profile", "quick", "--only", "limits,gemm", "--no-imds", "--json",
                      d.file("accept.json"), "-q"}, 300);
  ASSERT_TRUE(a.exit_code == 0 || a.exit_code == 1) << a.describe() << a.err;
  const Json acc = report_at(d.file("accept.json"));
  const auto c = run({bin("nodeprobe"), "collect", "--report", d.file("accept.json"), "--out", d.file("b.tar.gz")}, 120);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto b = run({bin("nodeprobe"), "diag", "--bundle", d.file("b.tar.gz"), "--json", d.file("bundle.json"), "-q"}, 120);
  const Json bun = report_at(d.file("bundle.json"));
  EXPECT_EQ(ids(bun), ids(acc)) << "accept: " << acc.at("findings").dump() << "\nbundle: " << bun.at("findings").dump();
  EXPECT_EQ(bun.value("action", std::string()), acc.value("action", std::string()));
  for (const auto& f : bun.at("findings"))
    EXPECT_NE(f.at("id"), "gpu.cuda_driver_insufficient") << f.dump();
}

TEST(DiagCli, SiteRulesAddFindingsAndBadRulesAreBadInput) {
  TempDir d;
  write_file(d.file("site.json"), R"J({"schema": "nodeprobe.rules/1", "rules": [
    {"key": "site.preempt", "finding": "nccl.timeout", "patterns": [{"re": "SPOT PREEMPTION NOTICE", "src": "our scheduler"}]}]})J");
  write_file(d.file("job.log"), "12:00:01 SPOT PREEMPTION NOTICE for rank 7\n");
  auto r = run({bin("nodeprobe"), "diag", "--rules", d.file("site.json"), "--log", d.file("job.log"), "--json", d.file("r.json"), "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(ids(report_at(d.file("r.json"))).count("nccl.timeout/error"));
  write_file(d.file("bad.json"), R"J({"schema": "nodeprobe.rules/1", "rules": [{"key": "x.y", "finding": "gpu.xid", "patterns": [{"re": "a\\d", "src": "s"}]}]})J");
  r = run({bin("nodeprobe"), "diag", "--rules", d.file("bad.json"), "--log", d.file("job.log"), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("rule x.y"), std::string::npos) << r.err;
}

// NVLink state through NVML (the fake libnvidia-ml reports two links down on GPU 0).
TEST(DiagCli, LiveNvlinkStateThroughNvml) {
  TempDir d;
  const auto r = run({bin("nodeprobe"), "diag", "--json", d.file("r.json"), "-q", "--no-limits"}, 120,
                     {"NODEPROBE_NVML_LIBRARY=" + std::string(NODEPROBE_FAKE_NVML), "FAKE_NVML_NVLINK_DOWN=2",
                      "FAKE_NVML_REMAP_FAILURE=1"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const Json rep = report_at(d.file("r.json"));
  bool nvlink = false, remap = false;
  for (const auto& f : rep.at("findings")) {
    if (f.at("id") == "gpu.nvlink" && f.at("facts").value("cause", "") == "links_inactive") nvlink = true;
    if (f.at("id") == "gpu.ecc" && f.at("facts").value("cause", "") == "remap_failed") remap = f.value("action", "") == "replace";
  }
  EXPECT_TRUE(nvlink) << rep.at("findings").dump();
  EXPECT_TRUE(remap) << rep.at("findings").dump();
  // Without NVML: a skipped source with the reason, never an error.
  const auto n = run({bin("nodeprobe"), "diag", "--json", d.file("n.json"), "-q", "--no-limits"}, 120,
                     {"NODEPROBE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
  EXPECT_TRUE(n.exit_code == 0 || n.exit_code == 1) << n.err;
  std::string status;
  const Json without = report_at(d.file("n.json"));
  for (const auto& p : without.at("probes"))
    if (p.contains("data") && p.at("data").contains("sources"))
      for (const auto& s : p.at("data").at("sources"))
        if (s.value("name", std::string()) == "facts/nvml.json") status = s.value("status", std::string());
  EXPECT_TRUE(status == "analysed" || status == "skipped") << status;
  // Only what this test controls: the host's own history (an OOM kill in
  // this boot's kernel log) may raise errors of its own.
  for (const auto& f : without.at("findings"))
    for (const auto& e : f.at("evidence"))
      if (e.value("source", std::string()).find("nvml") != std::string::npos) {
        EXPECT_NE(f.at("severity"), "error") << f.dump();
      }
}

}  // namespace
}  // namespace nodeprobe::diag
