// The real nodeprobe-limits executable, end to end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::bin;
using testing::read_file;
using testing::run;
using testing::schema_errors;
using testing::TempDir;

const Check* find_check(const Report& r, const std::string& id) {
  for (const auto& p : r.probes)
    for (const auto& c : p.checks)
      if (c.id == id) return &c;
  return nullptr;
}

void expect_schema_valid(const std::string& json_text) {
  bool available = false;
  const std::string errors = schema_errors(nlohmann::json::parse(json_text), &available);
  if (!available) GTEST_SKIP() << "valijson not available: schema not checked";
  EXPECT_EQ(errors, "");
}

TEST(LimitsCli, LowUlimitsAreReportedWithFixes) {
  TempDir dir;
  const std::string out = dir.file("limits.json");
  // The shell only sets the limits for the test; the probe itself is exec'd.
  const auto r = run({"/bin/sh", "-c", "ulimit -n 1024 && ulimit -l 64 && exec \"$0\" --json \"$1\" -q",
                      bin("nodeprobe-limits"), out});
  ASSERT_TRUE(r.started) << r.start_error;
  // The other checks read this machine (a small /dev/shm fails): only the
  // limits set here are asserted.
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.describe() << r.err;
  const Report rep = load_report(out);
  ASSERT_EQ(rep.probes.size(), 1u);
  EXPECT_EQ(rep.probes[0].name, "limits");
  EXPECT_NE(rep.verdict, Status::kPass);

  const Check* nofile = find_check(rep, "limits.nofile.soft");
  ASSERT_NE(nofile, nullptr);
  EXPECT_EQ(nofile->status, Status::kWarn);
  EXPECT_EQ(nofile->observed, "1024");
  EXPECT_NE(nofile->fix.find("* soft nofile 65535"), std::string::npos);
  EXPECT_NE(nofile->fix.find("LimitNOFILE="), std::string::npos);

  const Check* memlock = find_check(rep, "limits.memlock.soft");
  ASSERT_NE(memlock, nullptr);
  EXPECT_EQ(memlock->status, Status::kWarn);
  EXPECT_EQ(memlock->observed, "64 KiB");
  EXPECT_NE(memlock->fix.find("* soft memlock unlimited"), std::string::npos);
  EXPECT_FALSE(memlock->detail.empty());  // the active verification said something

  bool nofile_finding = false, memlock_finding = false;
  for (const auto& f : rep.findings) {
    nofile_finding |= f.id == "limits.nofile" && !f.remedy.empty();
    memlock_finding |= f.id == "limits.memlock" && !f.remedy.empty();
  }
  EXPECT_TRUE(nofile_finding);
  EXPECT_TRUE(memlock_finding);
  expect_schema_valid(read_file(out));
}

TEST(LimitsCli, JsonToStdoutIsOnlyJson) {
  const auto r = run({bin("nodeprobe-limits"), "--json", "-", "--passive", "--sysroot",
                      std::string(NODEPROBE_FIXTURES) + "/sysroot/rhel8-p4d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Report rep = parse_report(r.out, "stdout");
  EXPECT_EQ(rep.host.hostname, "ip-10-0-1-23.ec2.internal");
  EXPECT_EQ(rep.host.instance_type, "p4d.24xlarge");
  EXPECT_EQ(rep.host.os, "Red Hat Enterprise Linux 8.8 (Ootpa)");
  EXPECT_EQ(rep.host.driver, "535.104.05");
  EXPECT_NE(r.err.find("verdict"), std::string::npos);  // people's text went to stderr
  expect_schema_valid(r.out);
}

TEST(LimitsCli, UnknownFlagIsUsageError) {
  const auto r = run({bin("nodeprobe-limits"), "--bogus"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--bogus"), std::string::npos);
}

TEST(LimitsCli, UnwritableReportPathIsErrorBeforeRunning) {
  const auto r = run({bin("nodeprobe-limits"), "--json", "/nonexistent-dir/x.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent-dir"), std::string::npos);
}

TEST(LimitsCli, DeadlineLeavesValidPartialReport) {
  TempDir dir;
  const std::string out = dir.file("partial.json");
  const auto r = run({bin("nodeprobe-limits"), "--json", out, "--timeout", "0.000001"});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  const std::string text = read_file(out);
  const Report rep = parse_report(text, out);
  ASSERT_EQ(rep.probes.size(), 1u);
  EXPECT_EQ(rep.probes[0].status, Status::kTimeout);
  EXPECT_NE(rep.probes[0].reason.find("--timeout"), std::string::npos);
  EXPECT_EQ(rep.verdict, Status::kError);
  expect_schema_valid(text);
}

// A network volume whose server never answers statfs, for real: a FUSE server (np_hung_fuse) mounted
// as fuse.glusterfs keeps every STATFS request waiting, as an NFS or Lustre server that hangs does. The
// probe asks it from a child process, gives up after its time limit, names it, and exits: it does not
// hang, although the child stays blocked in the kernel until the server goes. Root and /dev/fuse are
// needed; everything runs in a private mount namespace (unshare -m), so nothing is left mounted.
TEST(LimitsCli, AHungNetworkVolumeIsNamedAndDoesNotHangTheProbe) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (mount)";
  if (::access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  if (!run({"unshare", "-m", "true"}, 10).exited_ok()) GTEST_SKIP() << "unshare -m is not available";
  TempDir dir;
  const std::string mnt = dir.file("ckpt"), out = dir.file("limits.json");
  std::filesystem::create_directories(mnt);
  const std::string script =
      "\"$0\" \"$1\" >/dev/null 2>&1 & server=$!\n"
      "for i in $(seq 100); do grep -q \" $1 fuse.glusterfs \" /proc/self/mounts && break; sleep 0.05; done\n"
      "\"$2\" --passive --json \"$3\" -q; rc=$?\n"
      "kill $server; wait $server; umount -l \"$1\" 2>/dev/null\n"
      "exit $rc\n";
  const auto r = run({"unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script, NODEPROBE_HUNG_FUSE,
                      mnt, bin("nodeprobe-limits"), out},
                     60);
  ASSERT_TRUE(r.exited_ok() || r.exit_code == 1) << r.describe() << r.err;
  const Report rep = load_report(out);
  const Check* c = nullptr;
  for (const auto& p : rep.probes)
    for (const auto& ch : p.checks)
      if (ch.detail.find(mnt + " (fuse.glusterfs from np-hung:/vol)") != std::string::npos) c = &ch;
  ASSERT_NE(c, nullptr) << read_file(out);
  EXPECT_EQ(c->status, Status::kWarn);
  EXPECT_EQ(c->finding, "storage.slow");
  EXPECT_EQ(c->observed, "no answer in 2 s");
  EXPECT_NE(c->detail.find("did not answer statfs within 2 s"), std::string::npos) << c->detail;
  bool finding = false;
  for (const auto& f : rep.findings) finding = finding || f.id == "storage.slow";
  EXPECT_TRUE(finding);
  expect_schema_valid(read_file(out));
}

TEST(LimitsCli, ListsItsProbe) {
  const auto r = run({bin("nodeprobe-limits"), "--list"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("limits\t", 0), 0u) << r.out;
}

}  // namespace
}  // namespace nodeprobe
