// Sections "memory" (device bandwidth, host<->device pinned vs pageable, PCIe
// link under load) and "train" (the 100-step training smoke loop).
#include <cstdio>

#include "judge.h"
#include "nodeprobe/stats.h"
#include "probe_sections.h"
#include "verify.h"

namespace nodeprobe::gemm {
namespace {

std::vector<double> to_gbs(const Bandwidth& b) {
  std::vector<double> v;
  for (double s : b.timing.seconds) v.push_back(static_cast<double>(b.bytes) / s / 1e9);
  return v;
}

}  // namespace

std::string_view to_string(DeviceCopy c) {
  switch (c) {
    case DeviceCopy::kMemcpy: return "memcpy";
    case DeviceCopy::kCopyKernel: return "copy";
    case DeviceCopy::kTriadKernel: return "triad";
  }
  return "unknown";
}

void run_memory_section(SectionEnv& env, DeviceRun& d) {
  const GemmOptions& o = env.opt;
  Json mem = Json::object();
  const double spec = d.spec ? d.spec->mem_gbs : 0;  // 0 for a MIG slice: not judged
  double best_kernel = 0;
  for (DeviceCopy c : {DeviceCopy::kMemcpy, DeviceCopy::kCopyKernel, DeviceCopy::kTriadKernel}) {
    const std::string cn(to_string(c));
    if (const std::string why = env.backend.copy_unavailable_reason(c); !why.empty()) {
      add_check(env.r, check_id(d, "memory." + cn), Status::kSkip, "not run", cn + " kernel")
          .detail = why;
      mem[cn] = {{"skipped", why}};
      continue;
    }
    const Bandwidth b = env.backend.device_bandwidth(d.dev, c, o.device_bytes, 2, o.mem_reps);
    const std::map<std::string, std::string> labels = {{"gpu", d.label()}, {"kernel", cn}};
    const double gbs = add_sampled_metric(env.r, "memory.device_bandwidth", to_gbs(b), labels).value;
    mem[cn] = {{"gbs", gbs}, {"bytes_per_rep", b.bytes}};
    if (spec > 0) {
      add_metric(env.r, "memory.device_pct_of_spec", 100 * gbs / spec, labels);
      mem[cn]["pct_of_spec"] = 100 * gbs / spec;
    }
    if (c != DeviceCopy::kMemcpy) best_kernel = std::max(best_kernel, gbs);
  }
  if (spec > 0) mem["spec_gbs"] = spec;
  if (!d.mig_profile.empty()) mem["judged"] = "not judged: a MIG slice's share of memory bandwidth is not its SM share";

  // Host <-> device, pageable vs pinned: the reason DataLoader's pin_memory exists.
  BusyWindow window;
  double h2d[2] = {0, 0}, d2h[2] = {0, 0};
  for (bool pinned : {false, true}) {
    for (bool to_device : {true, false}) {
      const Bandwidth b = env.backend.host_transfer(d.dev, to_device, pinned, o.host_bytes, 2, o.mem_reps,
                                                    window_sampler(env, d, pinned && to_device, window));
      const double gbs = add_sampled_metric(env.r, "memory.host_bandwidth", to_gbs(b),
                                            {{"gpu", d.label()}, {"direction", to_device ? "h2d" : "d2h"},
                                             {"memory", pinned ? "pinned" : "pageable"}})
                             .value;
      (to_device ? h2d : d2h)[pinned ? 1 : 0] = gbs;
    }
  }
  mem["host"] = {{"h2d_pageable_gbs", h2d[0]}, {"h2d_pinned_gbs", h2d[1]},
                 {"d2h_pageable_gbs", d2h[0]}, {"d2h_pinned_gbs", d2h[1]}, {"bytes", o.host_bytes}};
  if (h2d[0] > 0)
    add_metric(env.r, "memory.pinned_speedup", h2d[1] / h2d[0], {{"gpu", d.label()}, {"direction", "h2d"}});
  if (d2h[0] > 0)
    add_metric(env.r, "memory.pinned_speedup", d2h[1] / d2h[0], {{"gpu", d.label()}, {"direction", "d2h"}});

  if (d.nvml_index >= 0) {
    const NvmlSample busy = window.last();
    const NvmlGpu& g = env.nvml.inventory().gpus[static_cast<std::size_t>(d.nvml_index)];
    const Verdict v = judge_pcie(busy.pcie_gen, busy.pcie_width, g.pcie_gen_max, g.pcie_width_max, true);
    const double link = pcie_link_gbs(busy.pcie_gen, busy.pcie_width);
    std::string detail = v.detail;
    if (link > 0) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "pinned H2D %.1f GB/s = %.0f %% of the link's %.1f GB/s",
                    h2d[1], 100 * h2d[1] / link, link);
      detail += (detail.empty() ? "" : "; ") + std::string(buf);
      mem["pcie_link_gbs"] = link;
    }
    add_check(env.r, check_id(d, "pcie"), v.status, v.observed, v.expected, v.fix, "gpu.pcie_degraded")
        .detail = detail;
    mem["pcie_under_load"] = to_json(busy);
  } else {
    add_check(env.r, check_id(d, "pcie"), Status::kSkip, "unknown", "full PCIe link")
        .detail = "NVML unavailable: link state not readable";
  }
  d.data["memory"] = mem;
}

void run_train_section(SectionEnv& env, DeviceRun& d) {
  const TrainConfig& cfg = env.opt.train_cfg;
  if (!env.cache.train_ready) {
    env.cache.train_data = make_train_data(cfg);
    env.cache.train_ref = train_reference(cfg, env.cache.train_data);
    env.cache.train_ready = true;
  }
  const TrainRun t = env.backend.train(d.dev, cfg, env.cache.train_data);
  const std::map<std::string, std::string> labels = {{"gpu", d.label()}};
  if (!t.losses.empty()) {
    add_metric(env.r, "train.loss_initial", t.losses.front(), labels);
    add_metric(env.r, "train.loss_final", t.losses.back(), labels);
  }
  const double step_ms = cfg.steps > 0 ? 1e3 * t.seconds / cfg.steps : 0;
  add_metric(env.r, "train.step_time", step_ms, compute_stats({step_ms}), labels);

  const Verdict v = judge_loss(t.losses, env.opt.loss_ratio);
  add_check(env.r, check_id(d, "train.loss_falls"), v.status, v.observed, v.expected, v.fix,
            "gpu.compute_wrong")
      .detail = v.detail;
  const LossComparison lc = compare_losses(t.losses, env.cache.train_ref);
  add_check(env.r, check_id(d, "train.matches_cpu"), lc.ok ? Status::kPass : Status::kFail,
            lc.ok ? "losses match the CPU reference" : "losses differ from the CPU reference",
            "every step within 0.1 % of the CPU reference",
            lc.ok ? "" : "the GPU trains wrongly: check `dmesg` for Xid errors, reset or replace the GPU",
            "gpu.compute_wrong")
      .detail = lc.describe();
  Json losses = Json::array();
  for (std::size_t i = 0; i < t.losses.size(); i += 10) losses.push_back(t.losses[i]);
  d.data["train"] = {{"loss_initial", t.losses.empty() ? 0 : t.losses.front()},
                     {"loss_final", t.losses.empty() ? 0 : t.losses.back()},
                     {"cpu_loss_final", env.cache.train_ref.back()},
                     {"step_ms", step_ms}, {"loss_every_10_steps", losses}};
}

}  // namespace nodeprobe::gemm
