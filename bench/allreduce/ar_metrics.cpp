#include "ar_metrics.h"

#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe::allreduce {

const std::vector<MetricDescriptor>& allreduce_metrics() {
  static const std::vector<std::string> kSize{"backend", "provider", "size", "placement"};
  static const std::vector<std::string> kTarget{"backend", "provider"};
  static const std::vector<MetricDescriptor> t = {
      measured("busbw", "GB/s", Better::kHigher,
               "bus bandwidth: algbw x 2(n-1)/n (nccl-tests); spread over timed iterations")
          .axes(kSize)
          .line_chart("busbw", "Allreduce bus bandwidth vs message size", "size", "message size (bytes)", true)
          .key(1, "busbw max"),
      measured("algbw", "GB/s", Better::kHigher, "algorithm bandwidth: bytes / time; spread over timed iterations")
          .axes(kSize)
          .key(2, "algbw max"),
      measured("time", "us", Better::kLower,
               "time per allreduce, mean over ranks; spread over timed iterations (its median is the p50)")
          .axes(kSize),
      derived("time_p99", "us", Better::kLower,
              "99th percentile of the per-iteration times (each the mean over ranks; one number per size)")
          .axes(kSize),
      derived("avg_busbw", "GB/s", Better::kHigher, "bus bandwidth averaged over the sizes (nccl-tests' summary line)")
          .axes(kTarget),
      derived("busbw_ratio", "ratio", Better::kHigher, "busbw of target a over target b at one size (--compare)")
          .axes({"a", "b", "size"}),
      measured("pt2pt_latency", "us", Better::kLower,
               "--pt2pt: half a ping-pong round trip between ranks a and b (osu_latency); spread over round trips")
          .axes({"backend", "provider", "a", "b", "size"}),
      derived("pt2pt_latency_p99", "us", Better::kLower, "--pt2pt: 99th percentile of those half round trips")
          .axes({"backend", "provider", "a", "b", "size"}),
      measured("pt2pt_bw", "GB/s", Better::kHigher,
               "--pt2pt: bandwidth a -> b, windows of 64 messages each acknowledged (osu_bw); spread over windows")
          .axes({"backend", "provider", "a", "b", "size"}),
      measured("mesh_rtt", "us", Better::kLower, "round trip between two ranks; median and spread over the mesh's links"),
      counted("mesh_unreachable", "count", Better::kLower, "rank pairs that could not reach each other"),
      measured("step_time", "s", Better::kLower, "emulated training step (compute + overlapped allreduce); spread over steps")
          .axes({"nodes"})
          .line_chart("scaling-step", "Training step time vs nodes", "nodes", "nodes"),
      measured("throughput", "samples/s", Better::kHigher, "ranks / step time (one sample per rank per step)")
          .axes({"nodes"}),
      measured("scaling_efficiency", "ratio", Better::kHigher,
               "throughput(N) / (N x throughput(1)); spread from the step-time spread at N")
          .titled("efficiency")
          .axes({"nodes"})
          .percent(1)
          .line_chart("scaling-efficiency", "Scaling efficiency vs nodes", "nodes", "nodes"),
      modelled("predicted_step_time", "s", Better::kLower,
               "step time the model predicts (assumptions in data.scaling.model)")
          .axes({"nodes"})
          .line_chart("scaling-step", "Training step time vs nodes", "nodes", "nodes"),
      modelled("predicted_efficiency", "ratio", Better::kHigher,
               "scaling efficiency the model predicts (never above the last measured one)")
          .titled("predicted efficiency")
          .axes({"nodes"})
          .percent(1)
          .line_chart("scaling-efficiency", "Scaling efficiency vs nodes", "nodes", "nodes"),
      modelled("predicted_busbw", "GB/s", Better::kHigher,
               "bus bandwidth the model assumes at N nodes (never above the measured link rate)")
          .axes({"nodes"}),
  };
  return t;
}

}  // namespace nodeprobe::allreduce
