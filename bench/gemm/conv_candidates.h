#pragma once
/// Which of cuDNN's heuristic candidates a convolution pass tries, in order,
/// and with which math type. Host-only, so the choice is unit tested; the
/// CUDA backend (cuda_conv.cpp) fills the list from cudnnGet*Algorithm_v7.

#include <cstddef>
#include <vector>

namespace nodeprobe::gemm {

/// cudnnMathType_t values (static_asserted against <cudnn.h> in cuda_conv.cpp).
namespace cudnn_math {
inline constexpr int kDefault = 0;
inline constexpr int kTensorOp = 1;
inline constexpr int kTensorOpAllowConversion = 2;
inline constexpr int kFma = 3;
}  // namespace cudnn_math

/// One entry of cudnnConvolution*AlgoPerf_t.
struct ConvCandidate {
  int algo = 0;
  bool ok = false;          ///< status == CUDNN_STATUS_SUCCESS
  std::size_t memory = 0;   ///< workspace bytes
  int math_type = 0;        ///< cudnnMathType_t the algorithm needs
};

/// Indices of the candidates to try, best first: those cuDNN can run within
/// `max_workspace`. cuDNN (7.4 and newer) decides from algorithm *and* the
/// descriptor's math type whether tensor cores are used, so each candidate
/// runs with its own math type (as PyTorch does); with `fma_only` (FP32
/// without TF32) only candidates with FMA math qualify, so FP32 stays FP32.
std::vector<std::size_t> conv_candidates_to_try(const std::vector<ConvCandidate>& perf,
                                                 std::size_t max_workspace, bool fma_only);

}  // namespace nodeprobe::gemm
