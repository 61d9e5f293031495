// prepare + read on real files, on tmpfs and on disk, both layouts, every
// read method this build and kernel offer; cold vs warm; sweep and accept.
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "io_test_util.h"
#include "staging.h"

namespace nodeprobe::io::testing {
namespace {

constexpr int kSamples = 96;

std::string base_for(const std::string& storage, std::string* why) {
  return storage == "disk" ? disk_base(why) : tmpfs_base(why);
}

using Combo = std::tuple<std::string, std::string, std::string>;  // storage, layout, method

class IoReadEveryMethod : public ::testing::TestWithParam<Combo> {};

TEST_P(IoReadEveryMethod, DeliversEverySampleVerified) {
  const auto& [storage, layout, method] = GetParam();
  std::string why;
  const std::string base = base_for(storage, &why);
  if (base.empty()) GTEST_SKIP() << why;
  Scratch s(base);
  const std::string dir = s.sub("ds");
  std::vector<std::string> extra{"--files", std::to_string(kSamples), "--size", "8k"};
  if (layout == "shards") extra.insert(extra.end(), {"--shards", "3"});
  prepare(dir, extra);

  const IoRun r = run_io({"read", "--dir", dir, "--method", method, "-w", "2", "-b", "8", "-p", "2", "-e", "2",
                          "--seed", "5"});
  ASSERT_FALSE(r.report.is_null()) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
  if (r.proc.exit_code == 77) {
    // Only a method the kernel or filesystem refuses may be skipped, and it must say why.
    const std::string reason = r.probe().at("reason");
    EXPECT_TRUE(reason.find("O_DIRECT") != std::string::npos || reason.find("io_uring") != std::string::npos)
        << reason;
    GTEST_SKIP() << reason;
  }
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  const auto& p = r.probe();
  EXPECT_EQ(p.at("name"), "io");
  EXPECT_EQ(p.at("status"), "pass");
  EXPECT_EQ(p.at("data").at("samples"), 2 * kSamples);
  EXPECT_EQ(p.at("data").at("bytes"), 2 * p.at("data").at("dataset").at("bytes").get<std::uint64_t>());
  EXPECT_EQ(r.check("io.data_integrity").at("status"), "pass");
  // One configuration: its settings are config, the metrics have no axes
  // (only the per-worker rate has one); every measured metric has its spread.
  EXPECT_TRUE(p.at("metrics").at(0).at("labels").empty());
  EXPECT_EQ(p.at("config").at("method"), method);
  EXPECT_EQ(p.at("config").at("workers"), 2);
  EXPECT_EQ(p.at("config").at("batch"), 8);
  EXPECT_EQ(p.at("config").at("prefetch"), 2);
  EXPECT_EQ(p.at("data").at("dataset").at("layout"), layout);
  for (const auto& m : p.at("metrics"))
    if (m.at("name") == "samples_per_s" || m.at("name") == "throughput") {
      EXPECT_GE(m.at("stats").at("n"), 2) << m;
    }
  std::uint64_t per_worker = 0;
  for (const auto& w : p.at("data").at("workers")) per_worker += w.at("samples").get<std::uint64_t>();
  EXPECT_EQ(per_worker, 2u * kSamples);
  EXPECT_GT(r.metric("samples_per_s"), 0);
  // Staging is workers x prefetch x batch sample slots, nothing more.
  const auto slot = p.at("data").at("staging_bytes_per_sample").get<std::uint64_t>();
  EXPECT_EQ(p.at("data").at("staging_bytes"), 2 * 2 * 8 * slot);
}

std::vector<Combo> combos() {
  std::vector<Combo> out;
  for (const char* storage : {"disk", "tmpfs"})
    for (const char* layout : {"files", "shards"})
      for (const char* m : {"pread", "direct", "mmap", "uring", "uring-direct", "null"}) out.emplace_back(storage, layout, m);
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, IoReadEveryMethod, ::testing::ValuesIn(combos()), [](const ::testing::TestParamInfo<Combo>& p) {
  std::string n = std::get<0>(p.param) + "_" + std::get<1>(p.param) + "_" + std::get<2>(p.param);
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
});

TEST(IoLoader, FirstFreeDispatchDeliversEveryBatchInOrder) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  for (const char* shards : {"0", "4"}) {
    const std::string dir = s.sub(std::string("ds") + shards);
    prepare(dir, {"--files", "101", "--size", "4k", "--shards", shards});
    const IoRun r = run_io({"read", "--dir", dir, "--dispatch", "first-free", "-w", "3", "-b", "7", "-p", "2", "-e", "3"});
    ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
    EXPECT_EQ(r.probe().at("data").at("samples"), 3 * 101);
    EXPECT_EQ(r.probe().at("data").at("consumer").at("batches"), 3 * 15);
    EXPECT_EQ(r.check("io.data_integrity").at("status"), "pass");
    EXPECT_EQ(r.probe().at("config").at("dispatch"), "first-free");
    // Samples compare can judge: the first-batch wait per epoch, the rest
    // per window (7 of them: 45 batches, well under 0.7 s).
    for (const auto& m : r.probe().at("metrics")) {
      const std::string name = m.at("name");
      if (name == "first_batch_wait") {
        EXPECT_EQ(m.at("stats").at("n"), 3) << m;
      }
      if (name == "batch_latency_p99" || name == "worker_samples_per_s" || name == "samples_per_s") {
        EXPECT_EQ(m.at("stats").at("n"), 7) << m;
      }
    }
  }
}

TEST(IoCacheState, ColdAndWarmOnDisk) {
  std::string why;
  const std::string base = disk_base(&why);
  if (base.empty()) GTEST_SKIP() << why;
  Scratch s(base);
  prepare(s.sub("ds"), {"--files", "64", "--size", "16k"});
  const IoRun cold = run_io({"read", "--dir", s.sub("ds"), "--cold", "-w", "1"});
  ASSERT_EQ(cold.proc.exit_code, 0) << cold.proc.err;
  EXPECT_EQ(cold.probe().at("data").at("cache").at("observed"), "cold");
  EXPECT_LE(cold.probe().at("data").at("cache").at("resident_fraction").get<double>(), 0.1);
  EXPECT_EQ(cold.probe().at("config").at("cache"), "cold");
  const IoRun warm = run_io({"read", "--dir", s.sub("ds"), "--warm", "-w", "1"});
  ASSERT_EQ(warm.proc.exit_code, 0) << warm.proc.err;
  EXPECT_EQ(warm.probe().at("data").at("cache").at("observed"), "warm");
  EXPECT_GE(warm.probe().at("data").at("cache").at("resident_fraction").get<double>(), 0.9);
}

TEST(IoCacheState, ColdOnTmpfsIsReportedAsUnevictable) {
  std::string why;
  const std::string base = tmpfs_base(&why);
  if (base.empty()) GTEST_SKIP() << why;
  Scratch s(base);
  prepare(s.sub("ds"), {"--files", "32", "--size", "8k", "--shards", "2"});
  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "--cold", "-w", "1"});
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(r.probe().at("status"), "warn");
  EXPECT_EQ(r.probe().at("data").at("cache").at("observed"), "cold-unevictable");
  EXPECT_EQ(r.check("io.cache_state").at("status"), "warn");
  EXPECT_NE(r.check("io.cache_state").at("detail").get<std::string>().find("tmpfs"), std::string::npos);
}

TEST(IoLoader, DropLastStepTimeAndAu) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "100", "--size", "4k"});
  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "-b", "32", "--drop-last", "--step-ms", "3", "-w", "1",
                          "--method", "null"});
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(r.probe().at("data").at("samples"), 96);
  EXPECT_EQ(r.probe().at("data").at("consumer").at("batches"), 3);
  const double au = r.metric("au"), wait = r.metric("data_wait_fraction");
  EXPECT_NEAR(au + wait, 1.0, 1e-9);
  EXPECT_GT(au, 0.0);
  EXPECT_FALSE(r.check("io.starved").is_null());
  // Three batches of 3 ms at least.
  EXPECT_GE(r.probe().at("data").at("consumer").at("compute_s").get<double>(), 0.009);
}

TEST(IoLoader, PinFallsBackToMlockWithoutAGpuAndSaysWhy) {
  std::string name;
  if (cuda::unusable(&name).empty()) GTEST_SKIP() << "a GPU is usable here (" << name << ")";
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "16", "--size", "4k"});
  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "-w", "1"});
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  const auto& pin = r.probe().at("data").at("pin");
  EXPECT_NE(pin.at("kind"), "cuda-host");
  EXPECT_FALSE(pin.at("device").get<bool>());
  EXPECT_FALSE(pin.at("note").get<std::string>().empty());
  const IoRun forced = run_io({"read", "--dir", s.sub("ds"), "-w", "1", "--pin", "cuda"});
  EXPECT_EQ(forced.proc.exit_code, 2);
  EXPECT_EQ(forced.stderr_lines().size(), 1u) << forced.proc.err;
  EXPECT_EQ(report_problems(forced.report), "");
}

TEST(IoSweep, RecommendsASetting) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("files"), {"--files", "64", "--size", "4k"});
  prepare(s.sub("shards"), {"--files", "64", "--size", "4k", "--shards", "2"});
  const IoRun r = run_io({"sweep", "--dir", s.sub("files"), "--dir", s.sub("shards"), "--workers-list", "1,2",
                          "--prefetch-list", "1,2", "--seconds-per-point", "0.2", "--step-ms", "2", "-b", "8",
                          "--exhaustive"});
  ASSERT_TRUE(r.proc.exit_code == 0) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
  const auto& d = r.probe().at("data");
  EXPECT_EQ(d.at("points").size(), 8u);
  const auto& rec = d.at("recommendation");
  EXPECT_GE(rec.at("num_workers").get<int>(), 1);
  EXPECT_NE(rec.at("pytorch").get<std::string>().find("DataLoader("), std::string::npos);
  EXPECT_NE(r.proc.err.find("recommendation:"), std::string::npos);
  EXPECT_FALSE(r.check("io.sweep").is_null());
}

TEST(IoAccept, QuickProfileCleansUpAfterItself) {
  std::string why;
  const std::string base = disk_base(&why);
  if (base.empty()) GTEST_SKIP() << why;
  Scratch s(base);
  const IoRun r = run_io({"accept", "--data-dir", s.path(), "--profile", "quick", "--timeout", "60"}, 90);
  ASSERT_FALSE(r.report.is_null()) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
  EXPECT_TRUE(r.proc.exit_code == 0) << r.proc.err;
  EXPECT_EQ(r.probe().at("name"), "io");
  EXPECT_EQ(r.check("io.data_integrity").at("status"), "pass");
  EXPECT_FALSE(r.check("io.mount_options").is_null());
  EXPECT_FALSE(r.check("io.cold_read_throughput").is_null());
  EXPECT_FALSE(r.check("io.starved").is_null());
  bool files = false, shards = false;
  for (const auto& m : r.probe().at("metrics")) {
    if (m.at("name") != "samples_per_s") continue;
    files = files || m.at("labels").at("layout") == "files";
    shards = shards || m.at("labels").at("layout") == "shards";
  }
  EXPECT_TRUE(files && shards);
  EXPECT_TRUE(std::filesystem::is_empty(s.path())) << "accept left its dataset behind";
}

TEST(IoAccept, OnTmpfsSkipsTheColdThroughputCheck) {
  std::string why;
  const std::string base = tmpfs_base(&why);
  if (base.empty()) GTEST_SKIP() << why;
  Scratch s(base);
  const IoRun r = run_io({"accept", "--data-dir", s.path(), "--timeout", "60"}, 90);
  ASSERT_FALSE(r.report.is_null()) << r.proc.err;
  EXPECT_EQ(r.check("io.cold_read_throughput").at("status"), "skip");
  EXPECT_TRUE(std::filesystem::is_empty(s.path()));
}

}  // namespace
}  // namespace nodeprobe::io::testing
