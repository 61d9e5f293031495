// nodeprobe fleet and accept --profile health as users run them: bad input,
// no launcher, one host with two ranks, compare of two fleet reports, the
// health decision and its budget when a check hangs.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "fleet_test_util.h"
#include "nodeprobe/fleet_analysis.h"
#include "nodeprobe/fleet_json.h"
#include "nodeprobe/mpirun.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

namespace nt = nodeprobe::testing;

std::string bin(const std::string& name) { return std::string(NODEPROBE_BIN_DIR) + "/" + name; }
const std::string kEmptyRoot = std::string(NODEPROBE_FIXTURES) + "/sysroot/empty";

TEST(FleetCli, WithoutALauncherItSaysHowToStartItAndWritesAReport) {
  nt::TempDir tmp;
  const SpawnResult r = nt::run({bin("nodeprobe"), "fleet", "--json", tmp.file("f.json")}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--map-by ppr:1:node"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--hostfile"), std::string::npos) << r.err;
  const FleetReport f = load_fleet_report(tmp.file("f.json"));
  EXPECT_EQ(f.verdict, Status::kError);
  EXPECT_FALSE(f.reason.empty());
  bool available = false;
  EXPECT_EQ(nt::schema_errors(nlohmann::json::parse(nt::read_file(tmp.file("f.json"))), &available,
                              std::string(NODEPROBE_SOURCE_DIR) + "/reports/schema/fleet.schema.json"),
            "");
}

TEST(FleetCli, BadInputIsOneLineAndExitTwo) {
  const SpawnResult size = nt::run({bin("nodeprobe"), "fleet", "--pair-bytes", "12x"}, 30);
  EXPECT_EQ(size.exit_code, 64);  // a bad size is a usage error, as in every command
  EXPECT_NE(size.err.find("--pair-bytes"), std::string::npos) << size.err;
  EXPECT_NE(size.err.find("unknown unit 'x'"), std::string::npos) << size.err;
  EXPECT_EQ(std::count(size.err.begin(), size.err.end(), '\n'), 1) << size.err;
  const SpawnResult share = nt::run({bin("nodeprobe"), "fleet", "--outlier-share", "1.5"}, 30);
  EXPECT_EQ(share.exit_code, 64) << share.err;
  const SpawnResult hostfile = nt::run({bin("nodeprobe"), "fleet", "--hostfile", "/nonexistent/hosts"}, 30);
  EXPECT_EQ(hostfile.exit_code, 2);
  EXPECT_NE(hostfile.err.find("cannot read the hostfile"), std::string::npos) << hostfile.err;
}

TEST(FleetCli, TwoRanksOnOneHostAreRefused) {
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "no mpirun";
  nt::TempDir tmp;
  std::vector<std::string> argv = {mpirun, "-np", "2", "--oversubscribe", "--bind-to", "none"};
  if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
  argv.insert(argv.end(), {bin("nodeprobe"), "fleet", "--json", tmp.file("f.json"), "-q"});
  const SpawnResult r = nt::run(argv, 90);
  EXPECT_NE(r.exit_code, 0);
  const FleetReport f = load_fleet_report(tmp.file("f.json"));
  EXPECT_EQ(f.verdict, Status::kError);
  EXPECT_NE(f.reason.find("one rank per node"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("got 2 ranks on 1 host"), std::string::npos) << f.reason;
}

// What carries the pairs, on this GPU-less machine (one node under mpirun;
// the phases left out, the choice is made before them): nccl is refused with
// the reason, auto picks fabric and says why, in the report and the text.
TEST(FleetCli, PairBackendNcclWithoutAGpuIsRefusedAndAutoFallsBackToFabric) {
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "no mpirun";
  nt::TempDir tmp;
  auto fleet = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {mpirun, "-np", "1", "--bind-to", "none"};
    if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
    argv.insert(argv.end(), {bin("nodeprobe"), "fleet", "--skip", "local,mesh,ring"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return nt::run(argv, 90);
  };
  const SpawnResult nccl = fleet({"--pair-backend", "nccl", "--json", tmp.file("nccl.json"), "-q"});
  EXPECT_EQ(nccl.exit_code, 2) << nccl.err;
  const std::string why = "nodeprobe fleet: --pair-backend nccl, but ";
  const auto at = nccl.err.find(why);
  ASSERT_NE(at, std::string::npos) << nccl.err;
  EXPECT_EQ(nccl.err.find("nodeprobe fleet:", at + 1), std::string::npos) << nccl.err;  // said once, on one line
  const FleetReport refused = load_fleet_report(tmp.file("nccl.json"));
  EXPECT_EQ(refused.verdict, Status::kError);
  EXPECT_EQ(refused.reason.rfind("--pair-backend nccl, but ", 0), 0u) << refused.reason;
  EXPECT_EQ(refused.reason.find('\n'), std::string::npos);
  EXPECT_EQ(refused.config["pair_backend"]["name"], "none");

  const SpawnResult autorun = fleet({"--json", tmp.file("auto.json")});
  EXPECT_EQ(autorun.exit_code, 0) << autorun.err;
  const FleetReport picked = load_fleet_report(tmp.file("auto.json"));
  EXPECT_EQ(picked.config["pair_backend"]["name"], "fabric");
  EXPECT_EQ(picked.config["pair_backend"]["requested"], "auto");
  const std::string reason = picked.config["pair_backend"].value("reason", "");
  EXPECT_EQ(reason.rfind("auto: NCCL cannot carry the pairs (", 0), 0u) << reason;
  EXPECT_NE(autorun.out.find("pair backend: fabric (" + reason + ")"), std::string::npos) << autorun.out;
  // Every setting `nodeprobe compare` judges a measurement change by is written.
  for (const char* k : kFleetMeasurementKeys) EXPECT_TRUE(picked.config.contains(k)) << k;
}

TEST(FleetCli, CompareTwoFleetReportsPairsNodesByHost) {
  nt::TempDir tmp;
  FleetReport before = fleet_testing::make_fleet(4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) fleet_testing::set_pair(before, a, b, a == 2 || b == 2 ? 0.006 : 0.025);
  judge_fleet(before, {}, OutlierOptions{});
  FleetReport after = fleet_testing::make_fleet(4);
  std::swap(after.nodes[0], after.nodes[3]);  // another rank order: hosts still pair up
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) fleet_testing::set_pair(after, a, b, 0.025);
  judge_fleet(after, {}, OutlierOptions{});
  nt::write_file(tmp.file("before.json"), dump_fleet_report(before));
  nt::write_file(tmp.file("after.json"), dump_fleet_report(after));
  const SpawnResult fixed = nt::run({bin("nodeprobe"), "compare", tmp.file("before.json"), tmp.file("after.json")}, 30);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err << fixed.out;
  EXPECT_NE(fixed.out.find("node h3: warn (reboot) -> pass (none)"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("better"), std::string::npos) << fixed.out;
  const SpawnResult broke = nt::run({bin("nodeprobe"), "compare", tmp.file("after.json"), tmp.file("before.json"),
                                     "--format", "json"}, 30);
  EXPECT_EQ(broke.exit_code, 1) << broke.err;
  EXPECT_EQ(Json::parse(broke.out)["schema"], "nodeprobe.fleet-compare/1");
  // `nodeprobe report` renders a fleet report too.
  const SpawnResult text = nt::run({bin("nodeprobe"), "report", tmp.file("before.json")}, 30);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("nodeprobe fleet: 4 node(s), verdict fail"), std::string::npos) << text.out;
  const SpawnResult page = nt::run({bin("nodeprobe"), "report", tmp.file("before.json"), "--html", tmp.file("f.html")}, 30);
  EXPECT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(nt::read_file(tmp.file("f.html")).find("id=\"pairs\""), std::string::npos);
  // A fleet against a node report is refused in one line.
  nt::write_file(tmp.file("node.json"), R"({"schema":"nodeprobe.report/1"})");
  const SpawnResult mixed = nt::run({bin("nodeprobe"), "compare", tmp.file("before.json"), tmp.file("node.json")}, 30);
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("compare a fleet with a fleet"), std::string::npos) << mixed.err;
}

struct HealthRun {
  SpawnResult r;
  std::string reason;  // the drain reason file
  double wall_s = 0;
};

HealthRun health(const nt::TempDir& tmp, std::vector<std::string> args, std::vector<std::string> env = {}) {
  std::vector<std::string> argv = {bin("nodeprobe"), "accept", "--profile", "health", "--no-imds", "--sysroot",
                                   kEmptyRoot, "--drain-reason-file", tmp.file("reason"), "--json", tmp.file("r.json")};
  argv.insert(argv.end(), args.begin(), args.end());
  env.push_back("NODEPROBE_NO_IMDS=1");
  const auto t0 = std::chrono::steady_clock::now();
  HealthRun h;
  h.r = nt::run(argv, 60, env);
  h.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (std::filesystem::exists(tmp.file("reason"))) h.reason = nt::read_file(tmp.file("reason"));
  return h;
}

TEST(Health, AHealthyNodeExitsZeroWithAnEmptyReason) {
  nt::TempDir tmp;
  nt::write_file(tmp.file("reason"), "nodeprobe: stale: from an earlier run\n");
  const HealthRun h = health(tmp, {});
  EXPECT_EQ(h.r.exit_code, 0) << h.r.err << h.r.out;
  EXPECT_EQ(h.reason, "");  // no stale reason lingers
  EXPECT_NE(h.r.out.find("nodeprobe health: ok"), std::string::npos) << h.r.out;
  EXPECT_LT(h.wall_s, 10 + 2.0);  // the default budget, plus the start of the process
  const Report r = load_report(tmp.file("r.json"));
  bool limits = false;
  for (const auto& p : r.probes) {
    limits |= p.name == "limits";
    EXPECT_TRUE(p.name == "limits" || p.name == "diag" || p.name == "expect") << p.name << " is not a quick check";
  }
  EXPECT_TRUE(limits);
}

TEST(Health, ANodeToDrainExitsOneWithOneLineForScontrol) {
  nt::TempDir tmp;
  const HealthRun h = health(tmp, {"--expect", "p4d.24xlarge"});  // no GPU where 8 are expected
  EXPECT_EQ(h.r.exit_code, 1) << h.r.err << h.r.out;
  ASSERT_FALSE(h.reason.empty());
  EXPECT_EQ(h.reason.rfind("nodeprobe: gpu.not_found: ", 0), 0u) << h.reason;
  EXPECT_EQ(h.reason.back(), '\n');
  EXPECT_EQ(std::count(h.reason.begin(), h.reason.end(), '\n'), 1);
  EXPECT_LE(h.reason.size() - 1, 100u);
}

TEST(Health, AHungCheckNeverHoldsItPastTheBudget) {
  nt::TempDir tmp, probes, scratch;
  // Every probe executable is found here; nodeprobe-limits stops the check itself.
  ASSERT_EQ(::symlink(NODEPROBE_STOP_PARENT, probes.file("nodeprobe-limits").c_str()), 0);
  const HealthRun h =
      health(tmp, {"--budget", "7"}, {"NODEPROBE_PROBE_DIR=" + probes.path(), "TMPDIR=" + scratch.path()});
  // The slack covers starting and ending processes (stretched where instrumented
  // code runs slower: under ASan and a loaded machine it took 10.2 s).
  EXPECT_LT(h.wall_s, 7 + 1.5 * nt::time_factor()) << "the budget is hard";
  EXPECT_EQ(h.r.exit_code, 1) << h.r.err << h.r.out;
  EXPECT_EQ(h.reason, "nodeprobe: probe.timeout: health check did not finish in 7 s (hung in limits)\n");
  const Report r = load_report(tmp.file("r.json"));
  EXPECT_EQ(r.probes.at(0).status, Status::kTimeout);
  // The check was killed (SIGKILL): its temporary directories go all the same.
  EXPECT_TRUE(nt::entries_with_prefix(scratch.path(), "nodeprobe-").empty());
}

TEST(Health, BadInputIsNotADrain) {
  nt::TempDir tmp;
  const HealthRun h = health(tmp, {"--expect", "no.such-type"});
  EXPECT_EQ(h.r.exit_code, 64) << h.r.err;
  EXPECT_EQ(h.reason, "");
  const SpawnResult dir = nt::run({bin("nodeprobe"), "accept", "--profile", "health", "--drain-reason-file",
                                   "/nonexistent/dir/reason"},
                                  30, {"NODEPROBE_NO_IMDS=1"});
  EXPECT_EQ(dir.exit_code, 2) << dir.err;
}

}  // namespace
}  // namespace nodeprobe
