#include "gemm_metrics.h"

#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe::gemm {

// Two runs of an unchanged node, measured on one idle H200: two
// nodeprobe-gemm --profile full and two accept --profile quick seconds apart
// (reports/examples/nvidia-h200-gemm-{A,B}.json, -accept-{A,B}.json), then
// eight more processes' convolutions and four more processes' 1024 and 2048
// GEMMs (reports/examples/nvidia-h200-run-to-run.txt). Each run's repetitions
// follow one another and share the process's state, so their spread misses
// what differs between processes:
// - the 1024^3 GEMM (about 8 us a call): medians 1.14x (TF32) to 2.3x (FP8)
//   apart over four processes; 2048 and up stayed within 1.06x;
// - cuDNN's FP16/BF16 tensor-core convolutions of the 56x56 layers, the same
//   algorithm every time: 1.5x to 3.2x apart (FP16 3x3 forward: 85 to 276
//   TFLOP/s); the 7x7 stem and FP32 stayed within 1.02x, except FP32's 1x1
//   forward (1.23x);
// - pageable host copies: 1.22x (pinned ones and device bandwidth: 1.04x).
// A change within these factors needs several runs a side to be judged.
constexpr double kShortGemmRunToRun = 2.5;
constexpr double kTensorConvRunToRun = 3.5;
constexpr double kPageableRunToRun = 1.3;

const std::vector<MetricDescriptor>& gemm_metrics() {
  static const std::vector<std::string> kGemm{"gpu", "precision", "size"};
  static const std::vector<MetricDescriptor> t = {
      measured("gemm.tflops", "TFLOP/s", Better::kHigher, "cuBLAS GEMM throughput; spread over repetitions")
          .titled("GEMM")
          .axes(kGemm)
          .bar_chart("gemm", "GEMM throughput per precision (best size)", "precision", "gemm.peak_tflops")
          .best_of("size")
          .run_to_run_where("size", "1024", kShortGemmRunToRun)
          .key(1, "", "precision"),
      counted("gemm.peak_tflops", "TFLOP/s", Better::kHigher, "datasheet dense peak of the GPU at the precision")
          .axes({"gpu", "precision"}),
      derived("gemm.pct_of_peak", "%", Better::kHigher, "GEMM throughput as a share of the datasheet peak")
          .axes(kGemm)
          .run_to_run_where("size", "1024", kShortGemmRunToRun),
      derived("gemm.speedup_vs_fp32", "x", Better::kHigher, "throughput at the largest size over FP32's")
          .axes(kGemm),
      measured("conv.tflops", "TFLOP/s", Better::kHigher, "cuDNN convolution throughput; spread over repetitions")
          .axes({"gpu", "layer", "precision", "pass", "batch"})
          .run_to_run_where("precision", "fp16", kTensorConvRunToRun)
          .run_to_run_where("precision", "bf16", kTensorConvRunToRun),
      measured("memory.device_bandwidth", "GB/s", Better::kHigher, "device memory bandwidth; spread over repetitions")
          .axes({"gpu", "kernel"}),
      derived("memory.device_pct_of_spec", "%", Better::kHigher, "device bandwidth as a share of the datasheet's")
          .axes({"gpu", "kernel"}),
      measured("memory.host_bandwidth", "GB/s", Better::kHigher, "host <-> device copy bandwidth; spread over repetitions")
          .axes({"gpu", "direction", "memory"})
          .run_to_run_where("memory", "pageable", kPageableRunToRun),
      derived("memory.pinned_speedup", "x", Better::kHigher, "pinned over pageable copy bandwidth")
          .axes({"gpu", "direction"})
          .run_to_run(kPageableRunToRun),
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
