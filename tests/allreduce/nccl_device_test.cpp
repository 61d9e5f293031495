#include <gtest/gtest.h>

#include "backend_nccl_device.h"

namespace nodeprobe::allreduce {
namespace {

TEST(NcclDevice, AllGpusVisibleOrOnePerRank) {
  // mpirun: every rank sees the host's 8 GPUs and takes its local rank's.
  EXPECT_EQ(choose_nccl_device(8, 5, 8, "h").device, 5);
  EXPECT_EQ(choose_nccl_device(8, 1, 2, "h").device, 1);
  // Slurm --gpus-per-task=1 / CUDA_VISIBLE_DEVICES per rank: one GPU each, device 0.
  EXPECT_EQ(choose_nccl_device(1, 5, 8, "h").device, 0);
  // Two per rank: the rank's own pair, first by local rank.
  EXPECT_EQ(choose_nccl_device(2, 3, 4, "h").device, 1);
  const NcclDeviceChoice none = choose_nccl_device(0, 0, 2, "node7");
  EXPECT_EQ(none.device, -1);
  EXPECT_EQ(none.error, "no CUDA device visible on node7");
}

TEST(NcclDevice, TwoRanksOnOneGpuAreRefused) {
  EXPECT_EQ(shared_gpu_problem({"a", "a", "b", "b"}, {"u0", "u1", "u0", "u1"}), "");  // same UUIDs, other host
  const std::string p = shared_gpu_problem({"a", "a", "a"}, {"u0", "u1", "u0"});
  EXPECT_EQ(p.rfind("ranks 0 and 2 on a would both drive GPU u0", 0), 0u) << p;
  EXPECT_NE(p.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

}  // namespace
}  // namespace nodeprobe::allreduce
