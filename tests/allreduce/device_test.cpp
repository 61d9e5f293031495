// GPU tier (registered with -DNODEPROBE_DEVICE_TESTS=ON): the nccl backend
// over this node's GPUs, one rank per GPU. Not run on the development machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "ar_test_util.h"

namespace nodeprobe::allreduce::testing {
namespace {

namespace nt = nodeprobe::testing;

int gpu_count() {
  const SpawnResult r = nt::run({"nvidia-smi", "-L"}, 30);
  if (!r.exited_ok()) return 0;
  std::istringstream in(r.out);
  int n = 0;
  for (std::string l; std::getline(in, l);) n += l.rfind("GPU ", 0) == 0 ? 1 : 0;
  return n;
}

TEST(AllreduceDevice, NcclOverLocalGpus) {
  const int gpus = std::min(gpu_count(), 8);
  if (gpus < 1) GTEST_SKIP() << "no GPU";
  TempDir dir;
  const ArRun r = run_ar({nt::bin("nodeprobe-allreduce"), "--np", std::to_string(gpus), "--backend", "nccl", "-b", "1M",
                          "-e", "256M", "-f", "4", "-n", "10", "-q", "--timeout", "300"},
                         dir, 360);
  ASSERT_TRUE(r.have_report) << r.proc.err;
  EXPECT_EQ(r.status(), "pass") << r.reason() << r.proc.err;
  EXPECT_EQ(r.check("data.nccl")["status"], "pass");
  EXPECT_FALSE(r.check("nccl.network").is_null());
  if (gpus > 1) {
    EXPECT_GT(r.metric("busbw", {{"backend", "nccl"}, {"size", "268435456"}}), 0);
  } else {
    // One GPU moves nothing over a link: no bandwidth is reported, only the time per call.
    EXPECT_EQ(r.check("ranks.single")["status"], "skip");
    EXPECT_GT(r.metric("time", {{"backend", "nccl"}, {"size", "268435456"}}), 0);
  }
  EXPECT_NE(r.probe["data"]["ranks"][0]["device"].get<std::string>().find("GPU0"), std::string::npos);
}

TEST(AllreduceDevice, NcclHalfTypesAndAverage) {
  const int gpus = std::min(gpu_count(), 8);
  if (gpus < 1) GTEST_SKIP() << "no GPU";
  TempDir dir;
  for (const char* dtype : {"bfloat16", "half"}) {
    const ArRun r = run_ar({nt::bin("nodeprobe-allreduce"), "--np", std::to_string(gpus), "--backend", "nccl", "-d",
                            dtype, "-o", "avg", "-b", "64K", "-e", "4M", "-f", "8", "-n", "3", "-c", "2", "-q",
                            "--timeout", "120"},
                           dir, 180);
    ASSERT_TRUE(r.have_report) << r.proc.err;
    EXPECT_EQ(r.status(), "pass") << dtype << ": " << r.reason();
  }
}

}  // namespace
}  // namespace nodeprobe::allreduce::testing
