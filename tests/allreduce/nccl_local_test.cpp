// The real nodeprobe-allreduce under mpirun with the nccl backend on this
// machine (no GPU): what it says when CUDA or NCCL cannot be used. The CUDA
// runtime is the real one; a fake libcuda.so.1 (tests/gemm) answers as a
// node whose NVSwitch fabric is not up would.
#include <gtest/gtest.h>

#include <filesystem>

#include "ar_test_util.h"

namespace nodeprobe::allreduce::testing {
namespace {

namespace nt = nodeprobe::testing;

// mpirun exports `env` ("K=V") to the ranks.
std::vector<std::string> mpirun_with(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::vector<std::string> v = local_mpirun(1, args);
  std::vector<std::string> x;
  for (const auto& e : env) x.insert(x.end(), {"-x", e});
  v.insert(v.begin() + 1, x.begin(), x.end());
  return v;
}

const std::vector<std::string> kNccl = {"--backend", "nccl", "-b", "1M", "-e", "1M", "-n", "2", "-q"};

TEST(AllreduceNccl, SystemNotReadyNamesTheFabricManager) {
  TempDir dir;
  const ArRun r = run_ar(mpirun_with({"LD_LIBRARY_PATH=" + std::string(NODEPROBE_FAKE_CUDA_DIR),
                                      "FAKE_CUDA_INIT_RESULT=802"},
                                     kNccl),
                         dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.status(), "skip") << r.reason();
  const std::string why = r.reason();
  EXPECT_NE(why.find("cudaErrorSystemNotReady (802)"), std::string::npos) << why;
  EXPECT_NE(why.find("NVIDIA Fabric Manager"), std::string::npos) << why;
  EXPECT_NE(why.find("systemctl status nvidia-fabricmanager"), std::string::npos) << why;
}

TEST(AllreduceNccl, MissingNcclIsNamedAndOtherBackendsStillRun) {
  TempDir dir;
  const std::string empty = dir.file("no-libs");
  std::filesystem::create_directories(empty);
  const ArRun r = run_ar(mpirun_with({"NODEPROBE_CUDA_LIBRARY_PATH=" + empty},
                                     {"--backend", "mpi,nccl", "-b", "64K", "-e", "64K", "-n", "2", "-q"}),
                         dir);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  bool nccl_seen = false, mpi_ran = false;
  for (const auto& t : r.probe["data"]["targets"]) {
    if (t["target"] == "nccl") {
      nccl_seen = true;
      EXPECT_EQ(t["status"], "skip");
      EXPECT_NE(t["reason"].get<std::string>().find("cannot load libnccl.so.2"), std::string::npos) << t.dump();
    }
    if (t["target"] == "mpi") mpi_ran = !t["table"].empty();
  }
  EXPECT_TRUE(nccl_seen);
  EXPECT_TRUE(mpi_ran) << r.proc.err;
}

}  // namespace
}  // namespace nodeprobe::allreduce::testing
