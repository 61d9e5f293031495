// Everything a support bundle carries passes the one redaction: logs,
// command output, the environment and the reports inside it (issue 14:
// NCCL_DEBUG_FILE=...?token=X was redacted in env.txt but raw in the report
// of the same bundle).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "collector.h"
#include "nodeprobe/report_json.h"
#include "secret_shapes.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

using nodeprobe::testing::read_file;
using nodeprobe::testing::TempDir;
using nodeprobe::testing::write_file;

std::string all_shapes() {
  std::string text;
  for (const auto& s : nodeprobe::testing::secret_shapes()) text += s.text + "\n";
  return text;
}

// Commands "print" every secret shape (a helper tool's output is evidence too).
class LeakyRunner final : public CommandRunner {
 public:
  SpawnResult run(const std::vector<std::string>&, double, const std::string& out_path) override {
    std::ofstream(out_path) << all_shapes();
    SpawnResult r;
    r.started = true;
    r.exit_code = 0;
    return r;
  }
};

TEST(BundleSecrets, NoSeededSecretReachesAnyFileOfTheBundle) {
  TempDir root, out, d;
  std::filesystem::create_directories(root.path() + "/var/log/audit");
  std::filesystem::create_directories(root.path() + "/proc");
  write_file(root.path() + "/var/log/messages", all_shapes());
  write_file(root.path() + "/var/log/audit/audit.log", "type=AVC msg=audit(1.0:1): avc: denied password=auditpw\n");
  write_file(root.path() + "/proc/cmdline", "BOOT_IMAGE=/vmlinuz token=cmdlineTok\n");
  // A report with the secrets in env, argv, config and evidence.
  Report rep;
  rep.tool = {"nodeprobe", "0", "g"};
  rep.run.argv = {"nodeprobe", "accept", "--password", "argvPw"};
  rep.host.env = {{"NCCL_DEBUG_FILE", "/tmp/nccl.log?token=reportTok"}};
  ProbeResult p;
  p.name = "limits";
  p.config = {{"url", "https://u:cfgPw@host"}};
  rep.probes.push_back(p);
  Finding f;
  f.id = "nccl.timeout";
  f.evidence.push_back({"nccl.log", 1, all_shapes()});
  rep.findings.push_back(f);
  Json raw = rep;  // written as another tool would, secrets and all
  raw["run"]["argv"] = Json::array({"nodeprobe", "accept", "--password", "argvPw"});
  raw["host"]["env"]["NCCL_DEBUG_FILE"] = "/tmp/nccl.log?token=reportTok";
  raw["probes"][0]["config"]["url"] = "https://u:cfgPw@host";
  raw["findings"][0]["evidence"][0]["text"] = all_shapes();
  write_file(d.file("last.json"), raw.dump(2));
  ASSERT_NE(read_file(d.file("last.json")).find("reportTok"), std::string::npos);

  const FsRoot fs(root.path());
  LeakyRunner runner;
  const char* env[] = {"NCCL_DEBUG_FILE=/tmp/n.log?token=envTok", "UCX_AUTH=ucxSecret", "NCCL_IB_HCA=mlx5",
                       "CUDA_VISIBLE_DEVICES=0", nullptr};
  CollectOptions o;
  o.fs = &fs;
  o.runner = &runner;
  o.envp = env;
  o.report_path = d.file("last.json");
  o.now = 1764432000;
  const Manifest m = collect_artifacts(o, out.path());
  ASSERT_FALSE(m.files.empty());

  std::vector<std::string> secrets = {"auditpw", "cmdlineTok", "argvPw", "reportTok", "cfgPw", "envTok", "ucxSecret"};
  for (const auto& s : nodeprobe::testing::secret_shapes()) secrets.push_back(s.secret);
  int files = 0;
  bool report_seen = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(out.path())) {
    if (!e.is_regular_file()) continue;
    ++files;
    const std::string text = read_file(e.path().string());
    for (const auto& s : secrets) EXPECT_EQ(text.find(s), std::string::npos) << e.path() << ": " << s;
    if (e.path().filename() == "last.json") {
      report_seen = true;
      EXPECT_NO_THROW(parse_report(text, "last.json"));  // still a valid report
    }
  }
  EXPECT_GE(files, 5);
  EXPECT_TRUE(report_seen);
  EXPECT_NE(read_file(out.path() + "/facts/env.txt").find("NCCL_DEBUG_FILE=/tmp/n.log?token=<redacted>"),
            std::string::npos);
}

// accept --sysroot DIR collects DIR/var/log through the collector: a log
// there that is a FIFO without a writer, or a link to /dev/zero, must be
// skipped with its reason at once (an ifstream waited forever on the FIFO
// and read /dev/zero until memory ran out), and a large log keeps its tail.
TEST(BundleInputs, SystemLogsUnderASysrootAreTypedBoundedAndPrompt) {
  TempDir root, out;
  std::filesystem::create_directories(root.path() + "/var/log/audit");
  ASSERT_EQ(::mkfifo((root.path() + "/var/log/messages").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("/dev/zero", (root.path() + "/var/log/audit/audit.log").c_str()), 0);
  const FsRoot fs(root.path());
  CollectOptions o;
  o.fs = &fs;
  o.now = 1764432000;
  const auto t0 = std::chrono::steady_clock::now();
  Manifest m = collect_artifacts(o, out.path());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  std::map<std::string, Artifact> by_rel;
  for (const auto& a : m.files) by_rel[a.path] = a;
  EXPECT_EQ(by_rel["logs/messages"].status, "skipped");
  EXPECT_EQ(by_rel["logs/messages"].reason, "cannot read /var/log/messages: is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(by_rel["logs/audit.log"].status, "skipped");
  EXPECT_EQ(by_rel["logs/audit.log"].reason,
            "cannot read /var/log/audit/audit.log: is a character device, not a regular file");

  // A regular log larger than the tail: the last lines only, the first partial one dropped.
  std::filesystem::remove(root.path() + "/var/log/messages");
  std::string big;
  for (int i = 0; i < 4000; ++i) big += "Nov 29 16:39:36 node1 kernel: line " + std::to_string(i) + "\n";
  write_file(root.path() + "/var/log/messages", big);
  TempDir out2;
  o.max_log_bytes = 1000;
  m = collect_artifacts(o, out2.path());
  for (const auto& a : m.files) {
    if (a.path == "logs/messages") {
      EXPECT_EQ(a.status, "truncated") << a.reason;
    }
  }
  const std::string kept = read_file(out2.path() + "/logs/messages");
  EXPECT_LE(kept.size(), 1000u);
  EXPECT_EQ(kept.rfind("Nov 29 16:39:36 node1 kernel: line ", 0), 0u) << kept.substr(0, 80);
  EXPECT_NE(kept.find("line 3999\n"), std::string::npos);
}

}  // namespace
}  // namespace nodeprobe::diag
