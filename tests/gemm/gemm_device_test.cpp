// Device tests (a GPU is required): the real nodeprobe-gemm on every visible
// GPU. They assert correctness only (verification, the training loss, a
// complete report), never speed: the benchmark script measures speed.
#include <gtest/gtest.h>

#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe::testing {
namespace {

nlohmann::json run_gemm(const TempDir& dir, std::vector<std::string> args, int* rc) {
  const std::string out = dir.file("r.json");
  args.insert(args.begin(), {std::string(NODEPROBE_BIN_DIR) + "/nodeprobe-gemm", "--json", out, "--quiet"});
  const SpawnResult r = run(args, 900);
  *rc = r.exit_code;
  return nlohmann::json::parse(read_file(out));
}

TEST(GemmDevice, EveryGpuComputesCorrectly) {
  TempDir dir;
  int rc = -1;
  const auto doc = run_gemm(dir, {"--profile", "quick"}, &rc);
  EXPECT_EQ(schema_errors(doc), "");
  const auto& p = doc["probes"][0];
  ASSERT_NE(p["status"], "skip") << p["reason"];
  EXPECT_TRUE(rc == 0 || rc == 1) << rc;
  ASSERT_FALSE(p["data"]["gpus"].empty());
  std::size_t verified = 0;
  for (const auto& c : p["checks"]) {
    const std::string id = c["id"];
    const bool correctness = id.find(".verify.") != std::string::npos ||
                             id.find(".train.") != std::string::npos;
    if (correctness) {
      EXPECT_EQ(c["status"], "pass") << id << ": " << c.value("detail", "");
      ++verified;
    }
    EXPECT_NE(c["status"], "error") << id << ": " << c["observed"];
  }
  // fp32 and fp16 GEMM, fp32 and fp16 conv, and two training checks per GPU at least.
  EXPECT_GE(verified, 6 * p["data"]["gpus"].size());
  EXPECT_FALSE(doc["host"]["gpus"].empty());
  EXPECT_NE(doc["host"]["cuda_runtime"], "");
}

TEST(GemmDevice, EveryPrecisionRunsOnTheFirstGpu) {
  TempDir dir;
  int rc = -1;
  const auto doc = run_gemm(dir, {"--devices", "0", "--sizes", "1024", "--skip", "conv,memory,train,p2p"}, &rc);
  const auto& gpu = doc["probes"][0]["data"]["gpus"][0];
  for (const auto& row : gpu["gemm"]) {
    if (row.contains("skipped")) continue;  // the GPU lacks the precision (e.g. FP8 before 8.9)
    EXPECT_GT(row["tflops"].get<double>(), 0) << row["precision"];
    EXPECT_FALSE(row["algo"].get<std::string>().empty());
  }
}

}  // namespace
}  // namespace nodeprobe::testing
