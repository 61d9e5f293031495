// The real nodeprobe-gemm and the real CUDA runtime, with a fake driver
// library (or the toolkit's stub) standing in for the NVIDIA driver, so every
// branch of the no-GPU diagnosis runs end to end on a machine without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe::testing {
namespace {

class GemmFakeDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!NODEPROBE_GEMM_HAS_CUDA) GTEST_SKIP() << "this build has no CUDA";
  }
  // Runs nodeprobe-gemm with `env` and returns its report.
  nlohmann::json gemm(std::vector<std::string> env, std::vector<std::string> args = {},
                      int* exit_code = nullptr, std::string* err = nullptr) {
    const std::string out = dir_.file("r.json");
    args.insert(args.begin(), {std::string(NODEPROBE_BIN_DIR) + "/nodeprobe-gemm", "--json", out, "--quiet"});
    env.push_back("NODEPROBE_NVML_LIBRARY=" + nvml_);
    const SpawnResult r = run(args, 60, env);
    if (exit_code) *exit_code = r.exit_code;
    if (err) *err = r.err;
    return nlohmann::json::parse(read_file(out));
  }
  // The CUDA runtime major this build links (13 for 13.0).
  int runtime_major() {
    const auto doc = gemm({"LD_LIBRARY_PATH=" + std::string(NODEPROBE_FAKE_CUDA_DIR)});
    return std::stoi(doc["probes"][0]["data"]["cuda"]["runtime_version"].get<std::string>());
  }
  std::string fake_cuda() const { return "LD_LIBRARY_PATH=" + std::string(NODEPROBE_FAKE_CUDA_DIR); }

  TempDir dir_;
  std::string nvml_ = "/nonexistent/libnvidia-ml.so.1";  // no NVML unless a test sets the fake
};

TEST_F(GemmFakeDriver, DriverFineNoDevice) {
  const int major = runtime_major();
  int rc = 0;
  const auto doc = gemm({fake_cuda(), "FAKE_CUDA_DRIVER_VERSION=" + std::to_string(major * 1000)}, {}, &rc);
  EXPECT_EQ(rc, 77);
  const std::string reason = doc["probes"][0]["reason"];
  EXPECT_NE(reason.find("the driver is loaded but no CUDA device is visible"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cudaErrorNoDevice (100): no CUDA-capable device is detected"), std::string::npos);
  EXPECT_NE(reason.find("driver CUDA " + std::to_string(major) + ".0"), std::string::npos);
  EXPECT_EQ(doc["probes"][0]["checks"][0]["finding"], "gpu.not_found");
}

TEST_F(GemmFakeDriver, HiddenByCudaVisibleDevices) {
  const int major = runtime_major();
  const auto doc = gemm({fake_cuda(), "FAKE_CUDA_DRIVER_VERSION=" + std::to_string(major * 1000),
                         "CUDA_VISIBLE_DEVICES=none"});
  EXPECT_NE(doc["probes"][0]["reason"].get<std::string>().find("CUDA_VISIBLE_DEVICES='none'"),
            std::string::npos);
  EXPECT_EQ(doc["host"]["env"]["CUDA_VISIBLE_DEVICES"], "none");
}

TEST_F(GemmFakeDriver, DriverOlderThanRuntime) {
  const int major = runtime_major();
  int rc = 0;
  const std::vector<std::string> env = {fake_cuda(),
                                        "FAKE_CUDA_DRIVER_VERSION=" + std::to_string((major - 1) * 1000)};
  auto doc = gemm(env, {}, &rc);
  EXPECT_EQ(rc, 77);
  const auto& check = doc["probes"][0]["checks"][0];
  EXPECT_EQ(check["finding"], "gpu.cuda_driver_insufficient");
  EXPECT_NE(doc["probes"][0]["reason"].get<std::string>().find(
                "is older than the CUDA runtime (" + std::to_string(major) + ".0)"),
            std::string::npos);
  doc = gemm(env, {"--expect-gpus", "8"}, &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(doc["findings"][0]["id"], "gpu.cuda_driver_insufficient");
  EXPECT_EQ(schema_errors(doc), "");
}

TEST_F(GemmFakeDriver, ToolkitStubOnTheLibraryPath) {
  const std::string stub = std::string(NODEPROBE_CUDA_STUBS) + "/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no " << stub;
  const std::string d = dir_.file("stub");
  std::filesystem::create_directories(d);
  std::filesystem::create_symlink(stub, d + "/libcuda.so.1");
  const auto doc = gemm({"LD_LIBRARY_PATH=" + d});
  const std::string reason = doc["probes"][0]["reason"];
  EXPECT_NE(reason.find("the toolkit's stub"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cudaErrorStubLibrary"), std::string::npos);
  EXPECT_NE(doc["probes"][0]["checks"][0]["fix"].get<std::string>().find("stubs"), std::string::npos);
}

TEST_F(GemmFakeDriver, NvmlSeesGpusCudaCannotUseThem) {
  nvml_ = NODEPROBE_FAKE_NVML;
  const int major = runtime_major();
  int rc = 0;
  const std::vector<std::string> env = {fake_cuda(), "FAKE_CUDA_DRIVER_VERSION=" + std::to_string(major * 1000),
                                        "FAKE_NVML_GPUS=8"};
  auto doc = gemm(env, {"--expect", "p4d.24xlarge"}, &rc);
  EXPECT_EQ(rc, 1);
  const auto& p = doc["probes"][0];
  EXPECT_EQ(p["status"], "fail");
  EXPECT_EQ(p["data"]["nvml"]["gpus"].size(), 8u);
  EXPECT_EQ(p["data"]["nvml"]["driver_version"], "550.54.15");
  EXPECT_EQ(doc["host"]["driver"], "550.54.15");
  EXPECT_EQ(doc["host"]["gpus"].size(), 8u);
  EXPECT_EQ(p["checks"][1]["id"], "gpu.count");
  EXPECT_EQ(p["checks"][1]["status"], "pass");
  // Without an expectation NVML's GPUs alone make it a failure.
  doc = gemm(env, {}, &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(doc["probes"][0]["checks"][0]["observed"].get<std::string>().find("NVML sees 8 GPU(s)"),
            std::string::npos);
  // One GPU missing from the instance type's eight.
  doc = gemm({fake_cuda(), "FAKE_NVML_GPUS=7"}, {"--expect", "p4d.24xlarge"}, &rc);
  EXPECT_EQ(doc["probes"][0]["checks"][1]["status"], "fail");
  bool mismatch = false;
  for (const auto& f : doc["findings"]) mismatch = mismatch || f["id"] == "gpu.count_mismatch";
  EXPECT_TRUE(mismatch);
  EXPECT_EQ(schema_errors(doc), "");
}

// CUDA 802 names the Fabric Manager, with the fix, in the reason and the check.
TEST_F(GemmFakeDriver, SystemNotReadyNamesTheFabricManager) {
  int rc = 0;
  const auto doc = gemm({fake_cuda(), "FAKE_CUDA_INIT_RESULT=802"}, {"--expect", "p4d.24xlarge"}, &rc);
  EXPECT_EQ(rc, 1);
  const auto& p = doc["probes"][0];
  const std::string reason = p["reason"];
  EXPECT_NE(reason.find("cudaErrorSystemNotReady (802)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("NVIDIA Fabric Manager"), std::string::npos) << reason;
  EXPECT_NE(p["checks"][0]["fix"].get<std::string>().find("systemctl status nvidia-fabricmanager"),
            std::string::npos);
  EXPECT_EQ(schema_errors(doc), "");
}

// MIG on, no instance created: CUDA sees no device, NVML sees the GPUs.
TEST_F(GemmFakeDriver, MigEnabledWithoutInstancesIsNamed) {
  nvml_ = NODEPROBE_FAKE_NVML;
  const int major = runtime_major();
  int rc = 0;
  const auto doc = gemm({fake_cuda(), "FAKE_CUDA_DRIVER_VERSION=" + std::to_string(major * 1000),
                         "FAKE_NVML_GPUS=8", "FAKE_NVML_MIG_MODE=1"},
                        {"--expect", "p4d.24xlarge"}, &rc);
  EXPECT_EQ(rc, 1);
  const std::string reason = doc["probes"][0]["reason"];
  EXPECT_NE(reason.find("MIG mode is enabled on 8 GPU(s) but no MIG instance exists"), std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  EXPECT_NE(doc["probes"][0]["checks"][0]["fix"].get<std::string>().find("nvidia-smi mig"), std::string::npos);
  EXPECT_EQ(doc["probes"][0]["data"]["nvml"]["gpus"][0]["mig_mode"], true);
}

// cuBLAS / cuDNN missing on the node: the probe still starts, and the report
// names each library and why it could not be loaded.
TEST_F(GemmFakeDriver, MissingCudaLibrariesAreNamedInTheReport) {
  const std::string empty = dir_.file("no-cuda-libs");
  std::filesystem::create_directories(empty);
  int rc = 0;
  std::string err;
  const auto doc = gemm({fake_cuda(), "NODEPROBE_CUDA_LIBRARY_PATH=" + empty}, {}, &rc, &err);
  EXPECT_EQ(rc, 77) << err;  // no GPU here either: the report still lands
  std::map<std::string, nlohmann::json> libs;
  for (const auto& l : doc["probes"][0]["data"]["cuda"]["libraries"]) libs[l["name"]] = l;
  ASSERT_TRUE(libs.count("cublaslt"));
  EXPECT_EQ(libs["cublaslt"]["loaded"], false);
  EXPECT_NE(libs["cublaslt"]["error"].get<std::string>().find("cannot load libcublasLt.so."), std::string::npos);
  EXPECT_NE(libs["cublaslt"]["error"].get<std::string>().find(empty), std::string::npos);
  ASSERT_TRUE(libs.count("cudnn"));
  EXPECT_EQ(libs["cudnn"]["loaded"], false);
  EXPECT_EQ(libs["cuda_build"]["path"], "static");
  // Without the override the toolkit's libraries load.
  const auto ok = gemm({fake_cuda()});
  for (const auto& l : ok["probes"][0]["data"]["cuda"]["libraries"])
    if (l["name"] == "cublaslt") {
      EXPECT_EQ(l["loaded"], true) << l.dump();
    }
}

// No GPU binary needs a CUDA library to start: the loader's own failure
// ("error while loading shared libraries") would leave no report at all.
TEST(GpuBinaries, NeedNoCudaLibraryToStart) {
  for (const char* name : {"nodeprobe-gemm", "nodeprobe-io", "nodeprobe-allreduce"}) {
    const std::string path = std::string(NODEPROBE_BIN_DIR) + "/" + name;
    if (!std::filesystem::exists(path)) continue;  // allreduce needs MPI
    const SpawnResult r = run({"readelf", "-d", path}, 30);
    ASSERT_TRUE(r.exited_ok()) << r.err;
    for (const char* lib : {"libcudart", "libcublas", "libcublasLt", "libcudnn", "libnccl", "libcuda.so"})
      EXPECT_EQ(r.out.find(std::string("[") + lib), std::string::npos) << name << " needs " << lib;
  }
}

TEST_F(GemmFakeDriver, DriverLibraryVersionMismatch) {
  nvml_ = NODEPROBE_FAKE_NVML;
  const auto doc = gemm({fake_cuda(), "FAKE_NVML_INIT_RESULT=18"});
  EXPECT_EQ(doc["probes"][0]["checks"][0]["finding"], "gpu.driver_kernel_mismatch");
  EXPECT_NE(doc["probes"][0]["data"]["nvml"]["error"].get<std::string>().find("version mismatch"),
            std::string::npos);
}

}  // namespace
}  // namespace nodeprobe::testing
