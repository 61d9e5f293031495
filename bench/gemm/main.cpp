// nodeprobe-gemm: does this GPU really compute, as fast as it should?
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <vector>

#include "gemm_probe.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/emit.h"
#include "nodeprobe/error.h"
#include "nodeprobe/instance_table.h"
#include "nodeprobe/probe_main.h"

int main(int argc, char** argv) {
  using namespace nodeprobe;
  using namespace nodeprobe::gemm;
  CLI::App app{"nodeprobe-gemm: GPU smoke test: NVML inventory, GEMM per precision vs the "
               "datasheet peak (verified on the CPU), cuDNN convolutions, memory bandwidth, a "
               "training loop, per GPU, and a P2P matrix",
               "nodeprobe-gemm"};
  CommonOptions common;
  add_common_flags(app, common);
  std::string profile = "quick";
  std::vector<int> devices, sizes;
  std::vector<std::string> precisions, skip;
  int reps = -1, warmup = -1, verify_size = -1, expect_gpus = -1, conv_batch = -1, train_steps = -1;
  double slow_pct = 0;
  std::string expect;
  app.add_option("--profile", profile, "quick (default) or full: sets sizes and repetitions")
      ->check(CLI::IsMember({"quick", "full"}));
  app.add_option("--devices", devices, "CUDA device indices to test (default: all)")->delimiter(',')
      ->check(finite_range(0, 1023));
  app.add_option("--sizes", sizes, "Square GEMM sizes, multiples of 16 (quick: 2048,8192)")
      ->delimiter(',')->check(finite_range(16, 65536));
  app.add_option("--precisions", precisions, "fp32,tf32,fp16,bf16,fp8 (default: all)")
      ->delimiter(',');
  app.add_option("--reps", reps, "Timed GEMM repetitions")->check(finite_range(1, 1e6));
  app.add_option("--warmup", warmup, "Untimed GEMM warm-up repetitions")->check(finite_range(0, 1e6));
  app.add_option("--verify-size", verify_size, "Verification GEMM: M = N = S, K = 2S (default 512)")
      ->check(finite_range(16, 8192));
  app.add_option("--expect-gpus", expect_gpus, "GPUs the node must have (> 0 turns 'no GPU' into fail)")
      ->check(finite_range(0, 1024));
  app.add_option("--expect", expect, "Instance type to judge against (default: the host's; --list shows the known ones)")
      ->type_name("TYPE");
  app.add_option("--slow-pct", slow_pct, "Warn below this % of the datasheet peak (default per GPU)")
      ->check(finite_range(0, 100));
  app.add_option("--conv-batch", conv_batch, "Batch of the ResNet-50 convolutions (default 64)")
      ->check(finite_range(1, 4096));
  app.add_option("--train-steps", train_steps, "Steps of the training loop (default 100)")->check(finite_range(1, 1e6));
  app.add_option("--skip", skip, "Sections to leave out: gemm,conv,memory,train,p2p")
      ->delimiter(',')
      ->check(CLI::IsMember({"gemm", "conv", "memory", "train", "p2p"}));
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  if (const std::string why = instance_table().unknown_reason(expect); !why.empty()) {
    std::cerr << "nodeprobe-gemm: --expect: " << why << "\n";
    return exit_code::kUsage;
  }

  GemmOptions opt;
  try {
    opt = profile_defaults(profile);
    if (!sizes.empty()) opt.sizes = sizes;
    if (!precisions.empty()) {
      opt.precisions.clear();
      for (const auto& p : precisions) {
        const auto parsed = precision_from_string(p);
        if (!parsed) throw InputError("--precisions: unknown precision '" + p + "'");
        opt.precisions.push_back(*parsed);
      }
    }
    if (reps >= 0) opt.reps = reps;
    if (warmup >= 0) opt.warmup = warmup;
    if (verify_size >= 0) opt.verify_size = verify_size;
    if (conv_batch >= 0) opt.conv_batch = conv_batch;
    if (train_steps >= 0) opt.train_cfg.steps = train_steps;
    opt.devices = devices;
    opt.expect_gpus = expect_gpus;
    opt.expect_instance = expect;
    opt.slow_pct = slow_pct;
    for (const auto& s : skip) {
      if (s == "gemm") opt.gemm = false;
      if (s == "conv") opt.conv = false;
      if (s == "memory") opt.memory = false;
      if (s == "train") opt.train = false;
      if (s == "p2p") opt.p2p = false;
    }
    if (const std::string why = validate(opt); !why.empty()) throw InputError(why);
  } catch (const InputError& e) {
    std::cerr << "nodeprobe-gemm: " << e.what() << "\n";
    return exit_code::kUsage;
  }

  const auto backend = make_cuda_backend();
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<GemmProbe>(*backend, opt));
  const int rc = run_probes("nodeprobe-gemm", probes, common, argc, argv);
  if (common.list) text_stream(common) << instance_table().list_lines();  // what --expect takes
  return rc;
}
