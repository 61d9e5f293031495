#include "gemm_options.h"

#include "nodeprobe/error.h"

namespace nodeprobe::gemm {

GemmOptions profile_defaults(const std::string& profile) {
  GemmOptions o;
  o.profile = profile;
  o.precisions.assign(std::begin(kAllPrecisions), std::end(kAllPrecisions));
  if (profile == "quick") {
    o.sizes = {2048, 8192};
    o.warmup = 3;
    o.reps = 10;
  } else if (profile == "full") {
    o.sizes = {1024, 2048, 4096, 8192};
    o.warmup = 5;
    o.reps = 20;
    o.conv_warmup = 3;
    o.conv_reps = 10;
    o.device_bytes = 1u << 30;
    o.host_bytes = 256u << 20;
    o.p2p_bytes = 256u << 20;
    o.mem_reps = 20;
  } else {
    throw InputError("--profile must be quick or full, not '" + profile + "'");
  }
  return o;
}

std::string validate(const GemmOptions& o) {
  if (o.sizes.empty()) return "--sizes: give at least one size";
  for (int s : o.sizes)
    if (s < 16 || s > 65536 || s % 16 != 0)
      return "--sizes: " + std::to_string(s) + " is not a multiple of 16 in [16, 65536]";
  if (o.precisions.empty()) return "--precisions: give at least one precision";
  if (o.reps < 1 || o.reps > 10000) return "--reps must be in [1, 10000]";
  if (o.warmup < 0 || o.warmup > 10000) return "--warmup must be in [0, 10000]";
  if (o.verify_size < 16 || o.verify_size > 4096 || o.verify_size % 16 != 0)
    return "--verify-size must be a multiple of 16 in [16, 4096]";
  if (o.slow_pct < 0 || o.slow_pct > 100) return "--slow-pct must be in [0, 100]";
  if (o.expect_gpus < -1) return "--expect-gpus must be 0 or more";
  if (o.conv_batch < 1 || o.conv_batch > 1024) return "--conv-batch must be in [1, 1024]";
  for (int d : o.devices)
    if (d < 0) return "--devices: " + std::to_string(d) + " is not a device index";
  if (o.train_cfg.steps < 1) return "--train-steps must be at least 1";
  if (o.device_bytes < (1u << 20) || o.host_bytes < (1u << 20) || o.p2p_bytes < (1u << 20))
    return "buffer sizes must be at least 1 MiB";
  return {};
}

}  // namespace nodeprobe::gemm
