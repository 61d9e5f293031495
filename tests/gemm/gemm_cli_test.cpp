// The real nodeprobe-gemm on this machine as it is: without a GPU or driver
// it must skip with the exact CUDA error, fail when GPUs are expected, and
// turn bad input into a one-line reason and the right exit code.
#include <gtest/gtest.h>
#include <dlfcn.h>

#include <regex>

#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe::testing {
namespace {

class GemmCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
      ::dlclose(h);
      GTEST_SKIP() << "this machine has an NVIDIA driver: the no-GPU path cannot be observed";
    }
  }
  SpawnResult gemm(std::vector<std::string> args) {
    args.insert(args.begin(), std::string(NODEPROBE_BIN_DIR) + "/nodeprobe-gemm");
    return run(std::move(args), 60);
  }
  TempDir dir_;
};

TEST_F(GemmCli, NoGpuSkipsWithTheExactError) {
  const std::string out = dir_.file("r.json");
  const SpawnResult r = gemm({"--json", out});
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 77) << r.err;
  const auto doc = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(schema_errors(doc), "");
  const auto& p = doc["probes"][0];
  EXPECT_EQ(p["name"], "gemm");
  EXPECT_EQ(p["status"], "skip");
  EXPECT_EQ(doc["verdict"], "skip");
  const std::string reason = p["reason"];
  if (p["data"]["cuda"]["built_with_cuda"] == false) {
    EXPECT_NE(reason.find("no CUDA toolkit"), std::string::npos);
    return;
  }
  // The runtime's own words: no driver gives "insufficient driver" with
  // driver version 0.
  EXPECT_NE(reason.find("no NVIDIA driver loaded"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cudaGetDeviceCount: cudaErrorInsufficientDriver (35): CUDA driver version is "
                        "insufficient for CUDA runtime version"),
            std::string::npos)
      << reason;
  EXPECT_TRUE(std::regex_search(reason, std::regex("driver CUDA none, runtime CUDA [0-9]+\\.[0-9]+")));
  EXPECT_EQ(p["data"]["cuda"]["error"]["name"], "cudaErrorInsufficientDriver");
  EXPECT_EQ(p["data"]["cuda"]["driver_version"], "none");
  EXPECT_TRUE(std::regex_match(doc["host"]["cuda_runtime"].get<std::string>(), std::regex("[0-9]+\\.[0-9]+")));
  EXPECT_EQ(p["data"]["nvml"]["loaded"], false);
  EXPECT_NE(p["data"]["nvml"]["error"].get<std::string>().find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_EQ(p["checks"][0]["id"], "gpu.cuda_init");
  EXPECT_EQ(p["checks"][0]["finding"], "gpu.not_found");
  EXPECT_TRUE(doc["findings"].empty());  // a skip raises no finding
  EXPECT_NE(r.err.find("nodeprobe-gemm: no NVIDIA driver loaded"), std::string::npos);
}

TEST_F(GemmCli, ExpectedGpusTurnItIntoFailure) {
  const std::string out = dir_.file("r.json");
  const SpawnResult r = gemm({"--json", out, "--expect-gpus", "1", "--quiet"});
  if (!NODEPROBE_GEMM_HAS_CUDA) {  // a build without CUDA cannot judge the node: error
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(nlohmann::json::parse(read_file(out))["probes"][0]["status"], "error");
    return;
  }
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto doc = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(schema_errors(doc), "");
  EXPECT_EQ(doc["probes"][0]["status"], "fail");
  EXPECT_EQ(doc["verdict"], "fail");
  ASSERT_EQ(doc["findings"].size(), 1u);
  EXPECT_EQ(doc["findings"][0]["severity"], "error");
  const std::string id = doc["findings"][0]["id"];
  EXPECT_TRUE(id == "gpu.not_found" || id == "gpu.cuda_driver_insufficient") << id;
  EXPECT_FALSE(doc["findings"][0]["remedy"].empty());
}

TEST_F(GemmCli, InstanceTypeSetsTheExpectation) {
  const std::string out = dir_.file("r.json");
  SpawnResult r = gemm({"--json", out, "--expect", "p4d.24xlarge", "--quiet"});
  EXPECT_EQ(r.exit_code, NODEPROBE_GEMM_HAS_CUDA ? 1 : 2) << r.err;
  auto doc = nlohmann::json::parse(read_file(out));
  if (NODEPROBE_GEMM_HAS_CUDA) {
    EXPECT_EQ(doc["probes"][0]["checks"][0]["expected"], "8 GPU(s) (instance type p4d.24xlarge)");
  }
  r = gemm({"--json", out, "--expect", "c5.xlarge", "--quiet"});  // no GPUs expected
  EXPECT_EQ(r.exit_code, 77) << r.err;
}

TEST_F(GemmCli, JsonOnStdout) {
  const SpawnResult r = gemm({"--json", "-"});
  EXPECT_EQ(r.exit_code, 77);
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["tool"]["name"], "nodeprobe-gemm");
  EXPECT_NE(r.err.find("verdict"), std::string::npos);  // people's text went to stderr
}

TEST_F(GemmCli, BadInputGivesOneLineAndExitCode) {
  struct Case {
    std::vector<std::string> args;
    int code;
    const char* says;
  } cases[] = {
      {{"--sizes", "100"}, 64, "--sizes: 100 is not a multiple of 16"},
      {{"--precisions", "fp7"}, 64, "unknown precision 'fp7'"},
      {{"--profile", "huge"}, 64, "--profile"},
      {{"--skip", "everything"}, 64, "--skip"},
      {{"--reps", "0"}, 64, "--reps"},
      {{"--no-such-flag"}, 64, "no-such-flag"},
      {{"--json", "/nonexistent/dir/r.json"}, 2, "cannot write report"},
  };
  for (const auto& c : cases) {
    const SpawnResult r = gemm(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(GemmCli, ListsItsProbe) {
  const SpawnResult r = gemm({"--list"});
  EXPECT_EQ(r.exit_code, 0) << r.describe() << r.err;
  EXPECT_EQ(r.out.rfind("gemm\t", 0), 0u) << r.out;
}

}  // namespace
}  // namespace nodeprobe::testing
