#include "gemm_metrics.h"

#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe::gemm {

const std::vector<MetricDescriptor>& gemm_metrics() {
  static const std::vector<std::string> kGemm{"gpu", "precision", "size"};
  static const std::vector<MetricDescriptor> t = {
      measured("gemm.tflops", "TFLOP/s", Better::kHigher, "cuBLAS GEMM throughput; spread over repetitions")
          .titled("GEMM")
          .axes(kGemm)
          .bar_chart("gemm", "GEMM throughput per precision (best size)", "precision", "gemm.peak_tflops")
          .best_of("size")
          .key(1, "", "precision"),
      counted("gemm.peak_tflops", "TFLOP/s", Better::kHigher, "datasheet dense peak of the GPU at the precision")
          .axes({"gpu", "precision"}),
      derived("gemm.pct_of_peak", "%", Better::kHigher, "GEMM throughput as a share of the datasheet peak")
          .axes(kGemm),
      derived("gemm.speedup_vs_fp32", "x", Better::kHigher, "throughput at the largest size over FP32's")
          .axes(kGemm),
      measured("conv.tflops", "TFLOP/s", Better::kHigher, "cuDNN convolution throughput; spread over repetitions")
          .axes({"gpu", "layer", "precision", "pass", "batch"}),
      measured("memory.device_bandwidth", "GB/s", Better::kHigher, "device memory bandwidth; spread over repetitions")
          .axes({"gpu", "kernel"}),
      derived("memory.device_pct_of_spec", "%", Better::kHigher, "device bandwidth as a share of the datasheet's")
          .axes({"gpu", "kernel"}),
      measured("memory.host_bandwidth", "GB/s", Better::kHigher, "host <-> device copy bandwidth; spread over repetitions")
          .axes({"gpu", "direction", "memory"}),
      derived("memory.pinned_speedup", "x", Better::kHigher, "pinned over pageable copy bandwidth")
          .axes({"gpu", "direction"}),
      measured("p2p.bandwidth", "GB/s", Better::kHigher, "GPU to GPU copy bandwidth; spread over repetitions")
          .axes({"src", "dst", "path"}),
      counted("train.loss_initial", "", Better::kLower, "loss of the smoke training loop's first step")
          .axes({"gpu"}),
      counted("train.loss_final", "", Better::kLower, "loss of the smoke training loop's last step")
          .axes({"gpu"}),
      measured("train.step_time", "ms", Better::kLower, "mean step of the smoke training loop (one sample: the loop)")
          .axes({"gpu"}),
  };
  return t;
}

}  // namespace nodeprobe::gemm
