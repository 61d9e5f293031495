// sweep with the DataLoader model, end to end on real files: the
// machine-readable recommendation, the ceilings and the bound it names, the
// bound following known costs, and the torch peer's plumbing (skipped without
// torch; a stand-in interpreter checks what it is asked and how its answer is
// reported). Correctness only: the costs are chosen so far from the step that
// no host speed changes the outcome.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "io_test_util.h"
#include "test_support.h"

namespace nodeprobe::io::testing {
namespace {

std::vector<std::string> sweep_args(const std::string& dir, const std::string& step_ms,
                                    std::vector<std::string> extra = {}, const std::string& seconds = "0.2") {
  std::vector<std::string> a{"sweep", "--dir", dir, "--workers-list", "1,2", "--prefetch-list", "1,2",
                             "--seconds-per-point", seconds, "--step-ms", step_ms, "-b", "8"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

const nlohmann::json& rec_of(const IoRun& r) { return r.probe().at("data").at("recommendation"); }

TEST(IoSweepModel, EmitsTheRecommendationAndNamesABound) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("files"), {"--files", "64", "--size", "4k"});
  const IoRun r = run_io(sweep_args(s.sub("files"), "2"));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
  const auto& rec = rec_of(r);
  for (const char* k : {"num_workers", "prefetch_factor", "batch_size", "pin_memory", "pack_into_shards", "au",
                        "bound", "pytorch", "ceilings", "model", "advice"})
    EXPECT_TRUE(rec.contains(k)) << k;
  EXPECT_EQ(rec.at("batch_size"), 8);
  EXPECT_TRUE(std::set<std::string>({"storage", "cpu", "consumer"}).count(rec.at("bound").get<std::string>()))
      << rec.at("bound");
  const auto& c = rec.at("ceilings");
  EXPECT_GT(c.at("storage_samples_per_s").get<double>(), 0);
  EXPECT_GT(c.at("loader_samples_per_s").get<double>(), 0);
  EXPECT_NEAR(c.at("demand_samples_per_s").get<double>(), 8 / 0.002, 1e-6);
  EXPECT_GE(c.at("cores").get<int>(), 1);
  EXPECT_EQ(rec.at("model").at("pipeline"), "raw");
  EXPECT_EQ(rec.at("model").at("collate"), "list");
  EXPECT_GT(rec.at("model").at("sample_cpu_us").get<double>(), 0);
  EXPECT_GT(rec.at("model").at("batch_cpu_us").get<double>(), 0);
  for (const char* m : {"storage_ceiling", "loader_ceiling", "consumer_demand", "au"})
    EXPECT_FALSE(std::isnan(r.metric(m))) << m;
  for (const char* t : {"bounds (samples/s): storage", "loader ceiling", "bound: ", "predicted AU"})
    EXPECT_NE(r.proc.err.find(t), std::string::npos) << t << "\n" << r.proc.err;
  EXPECT_NE(r.check("io.sweep").at("observed").get<std::string>().find("bound: "), std::string::npos);
}

TEST(IoSweepModel, TheBoundFollowsTheCosts) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("files"), {"--files", "64", "--size", "4k"});
  // 5 ms of worker CPU per sample: two workers give at most 400 samples/s, the
  // step asks 4000. Nothing reaches the target; the CPU binds, not the storage.
  IoRun r = run_io(sweep_args(s.sub("files"), "2", {"--sample-cpu-us", "5000", "--batch-cpu-us", "0"}));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  auto rec = rec_of(r);
  EXPECT_FALSE(rec.at("reached").get<bool>());
  EXPECT_EQ(rec.at("bound"), "cpu");
  EXPECT_FALSE(rec.at("pack_into_shards").get<bool>());
  EXPECT_EQ(rec.at("advice").get<std::string>().rfind("CPU-bound", 0), 0u) << rec.at("advice");
  EXPECT_EQ(rec.at("model").at("sample_cpu_from"), "--sample-cpu-us");
  EXPECT_EQ(r.check("io.sweep").at("status"), "warn");

  // No loader CPU and 50 ms per batch of 8: the loader keeps up; the step decides.
  r = run_io(sweep_args(s.sub("files"), "50", {"--sample-cpu-us", "0", "--batch-cpu-us", "0"}, "0.5"));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  rec = rec_of(r);
  EXPECT_TRUE(rec.at("reached").get<bool>()) << r.proc.err;
  EXPECT_EQ(rec.at("bound"), "consumer");
  EXPECT_EQ(rec.at("advice").get<std::string>().rfind("fine", 0), 0u) << rec.at("advice");
}

TEST(IoSweepModel, TheReceiveIsPaidInlineUnlessPinMemoryHasItsThread) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("files"), {"--files", "64", "--size", "4k"});
  // 5 ms of main-process CPU per batch inside next(), a 5 ms step: the loop
  // spends at least as long receiving as stepping (AU about 0.5 at best).
  IoRun r = run_io(sweep_args(s.sub("files"), "5", {"--sample-cpu-us", "0", "--batch-cpu-us", "5000",
                                                    "--pin-memory", "off"}));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  auto rec = rec_of(r);
  EXPECT_FALSE(rec.at("model").at("pin_memory_thread").get<bool>());
  EXPECT_FALSE(rec.at("pin_memory").get<bool>());
  EXPECT_NE(rec.at("pytorch").get<std::string>().find("pin_memory=False"), std::string::npos);
  EXPECT_FALSE(rec.at("reached").get<bool>());
  EXPECT_NEAR(rec.at("ceilings").at("loop_samples_per_s").get<double>(), 8 / 0.010, 1e-6);
  EXPECT_EQ(rec.at("bound"), "cpu");
  EXPECT_EQ(rec.at("advice").get<std::string>().rfind("CPU-bound", 0), 0u) << rec.at("advice");
  // With pin_memory's thread the receive runs beside the step.
  r = run_io(sweep_args(s.sub("files"), "5", {"--sample-cpu-us", "0", "--batch-cpu-us", "5000",
                                              "--pin-memory", "on"}));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  rec = rec_of(r);
  EXPECT_TRUE(rec.at("model").at("pin_memory_thread").get<bool>());
  EXPECT_NE(rec.at("pytorch").get<std::string>().find("pin_memory=True"), std::string::npos);
  EXPECT_NEAR(rec.at("ceilings").at("loop_samples_per_s").get<double>(), 8 / 0.005, 1e-6);
}

TEST(IoSweepModel, NativePipelineAndCores) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("files"), {"--files", "64", "--size", "4k"});
  IoRun r = run_io(sweep_args(s.sub("files"), "2", {"--pipeline", "native", "--cores", "1"}));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  const auto& rec = rec_of(r);
  EXPECT_TRUE(rec.at("model").is_null());
  EXPECT_TRUE(rec.at("ceilings").at("loader_samples_per_s").is_null());
  EXPECT_EQ(rec.at("ceilings").at("cores"), 1);
  EXPECT_FALSE(rec.at("bound").is_null());
  r = run_io(sweep_args(s.sub("files"), "2", {"--cores", "100000"}));
  EXPECT_EQ(r.proc.exit_code, 2) << r.proc.err;
  EXPECT_EQ(r.stderr_lines().size(), 1u) << r.proc.err;
  EXPECT_NE(r.proc.err.find("--cores 100000"), std::string::npos) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
}

TEST(IoSweepModel, PeerTorchIsSkippedWithTheReasonWithoutTorch) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("files"), {"--files", "64", "--size", "4k"});
  const IoRun r = run_io(sweep_args(s.sub("files"), "2", {"--peer", "torch", "--python", "false"}));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  const auto& peer = r.probe().at("data").at("peer");
  EXPECT_EQ(peer.at("status"), "skipped");
  EXPECT_NE(peer.at("reason").get<std::string>().find("import torch"), std::string::npos) << peer;
  EXPECT_NE(r.proc.err.find("peer torch: skipped"), std::string::npos) << r.proc.err;
  EXPECT_TRUE(r.check("io.sweep_peer").is_null());
}

TEST(IoSweepModel, PeerTorchRunsTheScriptAndReportsBothAus) {
  // A stand-in interpreter: answers the import check, records what it was
  // asked to run, and prints a result line as torch_loader.py does.
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("files"), {"--files", "64", "--size", "4k"});
  const std::string py = s.sub("fake-python");
  nodeprobe::testing::write_file(
      py, "#!/bin/sh\n"
          "if [ \"$1\" = -c ]; then echo 9.9-stand-in; exit 0; fi\n"
          "echo \"$@\" >> " + s.sub("calls") + "\n"
          "echo '{\"au\": 0.5, \"wait_fraction\": 0.5, \"samples_per_s\": 123, \"batches\": 9}'\n");
  ASSERT_EQ(::chmod(py.c_str(), 0755), 0);
  const IoRun r = run_io(sweep_args(s.sub("files"), "2", {"--peer", "torch", "--python", py, "--cold"}));
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
  const auto& peer = r.probe().at("data").at("peer");
  EXPECT_EQ(peer.at("status"), "ran") << peer;
  EXPECT_EQ(peer.at("torch"), "9.9-stand-in");
  EXPECT_NE(peer.at("script").get<std::string>().find("torch_loader.py"), std::string::npos);
  const auto& runs = peer.at("runs");
  ASSERT_GE(runs.size(), 2u);  // the recommended setting and at least one neighbour
  const auto& rec = rec_of(r);
  EXPECT_TRUE(runs.at(0).at("recommended").get<bool>());
  EXPECT_EQ(runs.at(0).at("workers"), rec.at("num_workers"));
  EXPECT_EQ(runs.at(0).at("prefetch"), rec.at("prefetch_factor"));
  EXPECT_DOUBLE_EQ(runs.at(0).at("au").get<double>(), 0.5);
  EXPECT_NEAR(runs.at(0).at("predicted_au").get<double>(), rec.at("au").get<double>(), 1e-12);
  for (const auto& run : runs) EXPECT_FALSE(run.at("predicted_au").is_null()) << run;
  EXPECT_FALSE(r.check("io.sweep_peer").is_null());
  EXPECT_FALSE(std::isnan(r.metric("peer_au")));
  // Same files, step, batch, collate and cache state as the sweep.
  const std::string calls = nodeprobe::testing::read_file(s.sub("calls"));
  for (const std::string& want : {"--dir " + s.sub("files"), std::string("--step-ms 2 "), std::string("--batch 8"),
                                 std::string("--collate list"), std::string("--cold")})
    EXPECT_NE(calls.find(want), std::string::npos) << want << " in\n" << calls;
  EXPECT_NE(r.proc.err.find("predicted AU  measured AU"), std::string::npos) << r.proc.err;
}

TEST(IoSweepModel, TorchScriptRefusesAForeignDirectoryInOneLine) {
  // Runs without torch: the dataset is read before torch is imported.
  Scratch s(NODEPROBE_IO_SCRATCH);
  const auto py = nodeprobe::testing::run({"python3", "-c", "pass"});
  if (!py.exited_ok()) GTEST_SKIP() << "no python3: " << py.describe();
  const auto r = nodeprobe::testing::run(
      {"python3", nodeprobe::testing::bin("torch_loader.py"), "--dir", s.path(), "--seconds", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not a nodeprobe-io dataset"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace nodeprobe::io::testing
