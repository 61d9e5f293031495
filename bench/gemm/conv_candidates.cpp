#include "conv_candidates.h"

namespace nodeprobe::gemm {

std::vector<std::size_t> conv_candidates_to_try(const std::vector<ConvCandidate>& perf,
                                                 std::size_t max_workspace, bool fma_only) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < perf.size(); ++i) {
    const ConvCandidate& c = perf[i];
    if (!c.ok || c.memory > max_workspace) continue;
    if (fma_only && c.math_type != cudnn_math::kFma) continue;
    out.push_back(i);
  }
  return out;
}

}  // namespace nodeprobe::gemm
