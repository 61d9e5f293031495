// Real ranks on this machine: mpirun with 4 processes, MPI over shared memory,
// libfabric over the tcp and shm providers.
#include <gtest/gtest.h>

#include <chrono>

#include "ar_test_util.h"
#include "fabric_ep.h"

namespace nodeprobe::allreduce::testing {
namespace {

namespace nt = nodeprobe::testing;
const std::vector<std::string> kQuick = {"-b", "64K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1", "--timeout", "60"};

std::string dotted(std::string s) {
  for (char& c : s)
    if (c == ':') c = '.';
  return s;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(AllreduceLocal, MpiAndFabricTcpShmFourRanks) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(4, with(kQuick, {"--backend", "mpi,fabric:tcp,fabric:shm", "-q"})), dir);
  ASSERT_TRUE(r.have_report) << r.proc.describe() << "\n" << r.proc.err;
  EXPECT_EQ(r.proc.exit_code, 0) << r.reason() << "\n" << r.proc.err;
  EXPECT_EQ(r.status(), "pass") << r.reason();
  const std::map<std::string, std::pair<std::string, std::string>> axes = {
      {"mpi", {"mpi", "auto"}}, {"fabric:tcp", {"fabric", "tcp"}}, {"fabric:shm", {"fabric", "shm"}}};
  for (const char* target : {"mpi", "fabric:tcp", "fabric:shm"}) {
    const auto& [backend, provider] = axes.at(target);
    for (const char* size : {"65536", "262144", "1048576"}) {
      for (const char* placement : {"out-of-place", "in-place"}) {
        const std::map<std::string, std::string> labels = {
            {"backend", backend}, {"provider", provider}, {"size", size}, {"placement", placement}};
        EXPECT_GT(r.metric("busbw", labels), 0) << target << " " << size << " " << placement;
        // Every timed iteration is a sample: the spread of time, algbw and busbw.
        for (const char* name : {"busbw", "algbw", "time"}) EXPECT_GE(r.stats_n(name, labels), 2) << name;
      }
    }
    EXPECT_EQ(r.check(std::string("data.") + dotted(target))["status"], "pass");
  }
  EXPECT_EQ(r.metric("busbw", {{"backend", "fabric"}, {"provider", "tcp"}}) > 0, true);
  // The transports that really carried the data.
  const auto& targets = r.probe["data"]["targets"];
  // "tcp" opens libfabric's native-RDM TCP provider where it has one ("net" in 1.16-1.17).
  EXPECT_EQ(targets[1]["transport"], resolve_provider("tcp", present_providers()) == "net" ? "net" : "tcp;ofi_rxm");
  EXPECT_EQ(targets[2]["transport"], "shm");
  EXPECT_NE(targets[0]["transport"].get<std::string>().find("ob1:"), std::string::npos);
  // Per-rank rows and a schema-valid report.
  ASSERT_EQ(r.probe["data"]["ranks"].size(), 4u);
  EXPECT_EQ(r.probe["config"]["ranks"], 4);
  bool available = false;
  EXPECT_EQ(nt::schema_errors(nlohmann::json::parse(r.report.dump()), &available), "");
}

TEST(AllreduceLocal, TableIsNcclTestsShaped) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(2, with(kQuick, {"--backend", "fabric:tcp", "-d", "int32", "-o", "max"})), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_NE(r.proc.out.find("#wrong"), std::string::npos);
  EXPECT_NE(r.proc.out.find("# Avg bus bandwidth"), std::string::npos);
  EXPECT_NE(r.proc.out.find("# Out of bounds values : 0 OK"), std::string::npos);
  EXPECT_NE(r.proc.out.find("     1048576        262144     int32     max      -1"), std::string::npos) << r.proc.out;
}

TEST(AllreduceLocal, CompareReportsRatioPerSize) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(2, with(kQuick, {"--compare", "shm,mpi", "--inplace", "0", "-q"})), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_GT(r.metric("busbw_ratio", {{"a", "fabric:shm"}, {"b", "mpi"}, {"size", "1048576"}}), 0);
  EXPECT_EQ(r.probe["data"]["compare"]["sizes"].size(), 3u);
}

TEST(AllreduceLocal, NpStartsLocalRanksWithoutALauncher) {
  TempDir dir;
  const ArRun r = run_ar(with({nt::bin("nodeprobe-allreduce"), "--np", "3"}, with(kQuick, {"--backend", "mpi", "-q"})), dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(r.probe["config"]["ranks"], 3);
}

// One rank moves nothing over a link (the case of a one-GPU node): the run
// passes on its data checks and time per call, says why no bandwidth is
// reported, and reports none (nccl-tests prints busbw 0 there, and in place a
// collective with one rank has nothing to do). Every time lies within the
// spread of its own samples.
TEST(AllreduceLocal, OneRankReportsTimeNotBandwidth) {
  TempDir dir;
  const ArRun r = run_ar(with({nt::bin("nodeprobe-allreduce"), "--np", "1"}, with(kQuick, {"--backend", "mpi", "-q"})), dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(r.status(), "pass") << r.reason();
  EXPECT_EQ(r.check("ranks.single")["status"], "skip");
  EXPECT_EQ(r.check("data.mpi")["status"], "pass");
  int times = 0;
  for (const auto& m : r.probe["metrics"]) {
    const std::string name = m["name"];
    EXPECT_TRUE(name != "busbw" && name != "algbw" && name != "avg_busbw") << m.dump();
    if (name != "time") continue;
    ++times;
    const double v = m["value"];
    EXPECT_GT(v, 0) << m.dump();
    EXPECT_GE(v, m["stats"]["min"].get<double>() * (1 - 1e-9)) << m.dump();
    EXPECT_LE(v, m["stats"]["max"].get<double>() * (1 + 1e-9)) << m.dump();
  }
  EXPECT_EQ(times, 6) << "3 sizes, out of place and in place";
}

// --spread paces the timed iterations (sample k starts at k/n of the spread)
// and times each from its own start: every sample is still there, the pause
// is not in them, and the run lasts at least (n-1)/n of the spread.
TEST(AllreduceLocal, SpreadPacesTheIterationsAndKeepsEverySample) {
  TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  const ArRun r = run_ar({nt::bin("nodeprobe-allreduce"), "--np", "2", "--backend", "fabric:shm", "-b", "64K", "-e",
                          "64K", "-n", "4", "--inplace", "0", "--spread", "2000", "-q", "--timeout", "60"},
                         dir);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.proc.exit_code, 0) << r.reason() << r.proc.err;
  EXPECT_EQ(r.probe["config"]["spread_ms"], 2000);
  EXPECT_EQ(r.stats_n("time", {{"size", "65536"}}), 4);
  EXPECT_EQ(r.stats_n("busbw", {{"size", "65536"}}), 4);
  EXPECT_GE(wall, 1.5) << "4 samples over 2 s: the last starts 1.5 s after the first";
  // The mean time is over the samples, not the paced wall time (with the
  // 500 ms pauses in it, it would be 375 ms or more).
  EXPECT_LT(r.metric("time", {{"size", "65536"}}), 250e3) << "us";
}

TEST(AllreduceLocal, LaunchesPoolEveryLaunchsSamplesInOneTable) {
  TempDir dir;
  const ArRun r = run_ar({nt::bin("nodeprobe-allreduce"), "--np", "2", "--backend", "fabric:shm", "-b", "64K", "-e",
                          "64K", "-n", "3", "--inplace", "0", "--launches", "3", "--timeout", "90"},
                         dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.proc.exit_code, 0) << r.reason() << r.proc.err;
  EXPECT_EQ(r.probe["config"]["launches"], 3);
  EXPECT_EQ(r.probe["data"]["launches"], 3);
  // 3 launches x 3 iterations, busbw and time from the same pooled samples.
  EXPECT_EQ(r.stats_n("time", {{"size", "65536"}}), 9);
  EXPECT_EQ(r.stats_n("busbw", {{"size", "65536"}}), 9);
  const double time_us = r.metric("time", {{"size", "65536"}});
  EXPECT_NEAR(r.metric("algbw", {{"size", "65536"}}), 65536 / (time_us * 1e-6) / 1e9, 1e-6);
  // Only the last launch prints its table, once, with the pooled numbers.
  const std::string& out = r.proc.out;
  EXPECT_EQ(out.find("# launch 1 of 3"), std::string::npos) << out;
  EXPECT_NE(out.find("# launch 3 of 3: the table holds the timed samples of every launch so far, pooled"),
            std::string::npos)
      << out;
  const auto first = out.find("# fabric:shm\n");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_EQ(out.find("# fabric:shm\n", first + 1), std::string::npos) << out;
}

TEST(AllreduceLocal, LaunchesStopWhereTheDeadlineLeavesTooLittleTime) {
  TempDir dir;
  // 30 launches cannot fit in 15 s (each starts mpirun, a pause of 1 s
  // between): the run reports the launches that finished, and passes.
  const ArRun r = run_ar({nt::bin("nodeprobe-allreduce"), "--np", "2", "--backend", "fabric:shm", "-b", "64K", "-e",
                          "64K", "-n", "2", "--inplace", "0", "--launches", "30", "-q", "--timeout", "15"},
                         dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.proc.exit_code, 0) << r.reason() << r.proc.err;
  EXPECT_EQ(r.probe["config"]["launches"], 30);  // the setting; data.launches: the pooled count
  const int launches = r.probe["data"]["launches"].get<int>();
  EXPECT_GE(launches, 1);
  EXPECT_LT(launches, 30);
  EXPECT_EQ(r.stats_n("time", {{"size", "65536"}}), 2 * launches);
  // Either the next launch was not started or, cut by the deadline, dropped.
  EXPECT_NE(r.proc.err.find("; the report holds " + std::to_string(launches) + " of 30 launches\n"), std::string::npos)
      << r.proc.err;
}

TEST(AllreduceLocal, PlainLaunchSaysWhatToDo) {
  TempDir dir;
  const ArRun r = run_ar({nt::bin("nodeprobe-allreduce"), "--backend", "mpi"}, dir);
  EXPECT_EQ(r.proc.exit_code, 2) << r.proc.describe() << " " << r.proc.start_error;
  EXPECT_NE(r.proc.err.find("--np N"), std::string::npos);
  EXPECT_NE(r.proc.err.find("mpirun -np N"), std::string::npos);
  ASSERT_TRUE(r.have_report);
  EXPECT_EQ(r.status(), "error");
}

TEST(AllreduceLocal, MeshOnLocalhostReachesEveryPair) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(3, {"--mesh", "--mesh-timeout", "2", "--timeout", "60", "-q"}), dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.status(), "pass") << r.reason();
  EXPECT_EQ(r.check("mesh.reachability")["status"], "pass");
  const auto& m = r.probe["data"]["mesh"]["rtt_us"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_TRUE(m[0][0].is_null());
  EXPECT_GT(m[0][1].get<double>(), 0);
  EXPECT_GT(m[2][1].get<double>(), 0);
}

TEST(AllreduceLocal, NcclSkipsWithTheCudaErrorWithoutAGpu) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(2, with(kQuick, {"--backend", "nccl", "-q"})), dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  if (r.status() != "skip") GTEST_SKIP() << "a GPU is present: covered by the device tier";
  EXPECT_EQ(r.proc.exit_code, 77);
  // The exact CUDA error (no driver: cudaErrorInsufficientDriver; no device: cudaErrorNoDevice),
  // or the reason this build has no NCCL.
  const std::string why = r.reason();
  EXPECT_TRUE(why.find("cudaError") != std::string::npos || why.find("no NCCL") != std::string::npos) << why;
}

}  // namespace
}  // namespace nodeprobe::allreduce::testing
