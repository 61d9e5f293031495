#pragma once
/// Options of nodeprobe-gemm and the two profiles accept uses.

#include <cstddef>
#include <string>
#include <vector>

#include "cpu_reference.h"
#include "numeric.h"

namespace nodeprobe::gemm {

struct GemmOptions {
  std::string profile = "quick";          ///< quick | full: sets the defaults below
  std::vector<int> devices;               ///< CUDA device indices; empty = every visible GPU
  std::vector<int> sizes;                 ///< square GEMM sizes (M = N = K)
  std::vector<Precision> precisions;      ///< GEMM precisions
  int warmup = 3, reps = 10;              ///< GEMM warm-up and timed repetitions
  int verify_size = 512;                  ///< verification GEMM: M = N = size, K = 2 x size
  int expect_gpus = -1;                   ///< --expect-gpus N (-1: not given)
  std::string expect_instance;            ///< --expect INSTANCE_TYPE (else the host's)
  double slow_pct = 0;                    ///< GEMM below this % of peak warns (0: per-GPU default)
  bool gemm = true, conv = true, memory = true, train = true, p2p = true;
  int conv_batch = 64, conv_warmup = 2, conv_reps = 5;
  std::size_t device_bytes = 256u << 20;  ///< per buffer of the device copy/triad tests
  std::size_t host_bytes = 64u << 20;     ///< per host<->device transfer
  std::size_t p2p_bytes = 64u << 20;      ///< per peer copy
  int mem_reps = 10;
  TrainConfig train_cfg;
  double loss_ratio = 0.9;                ///< final loss must be <= this x initial
};

/// Defaults of a profile: "quick" (accept's default: seconds per GPU) or
/// "full" (bigger sweep, more repetitions). Throws InputError for others.
GemmOptions profile_defaults(const std::string& profile);

/// Checks option values; "" or a one-line reason.
std::string validate(const GemmOptions& o);

}  // namespace nodeprobe::gemm
