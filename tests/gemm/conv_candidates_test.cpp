#include <gtest/gtest.h>

#include "conv_candidates.h"

namespace nodeprobe::gemm {
namespace {

TEST(ConvCandidates, EachRunsWithItsOwnMathTypeFp32StaysFma) {
  const std::vector<ConvCandidate> perf = {
      {1, true, 1 << 20, cudnn_math::kTensorOp},   // tensor cores: TF32 for FP32 data
      {1, true, 1 << 20, cudnn_math::kFma},
      {6, false, 0, cudnn_math::kFma},             // cuDNN cannot run it
      {4, true, 1ull << 40, cudnn_math::kFma},     // workspace too large
      {0, true, 0, cudnn_math::kDefault},          // default math may pick TF32 on Ampere
      {2, true, 0, cudnn_math::kFma},
  };
  EXPECT_EQ(conv_candidates_to_try(perf, 512u << 20, /*fma_only=*/true), (std::vector<std::size_t>{1, 5}));
  EXPECT_EQ(conv_candidates_to_try(perf, 512u << 20, /*fma_only=*/false),
            (std::vector<std::size_t>{0, 1, 4, 5}));
  EXPECT_TRUE(conv_candidates_to_try({}, 512u << 20, false).empty());
}

}  // namespace
}  // namespace nodeprobe::gemm
