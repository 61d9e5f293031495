#include "judge.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace nodeprobe::gemm {
namespace {

// Fixed-point with `digits` decimals.
std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Four significant digits.
std::string sig4(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

Verdict judge_count(const GpuExpectation& expect, const std::vector<std::string>& names) {
  Verdict v;
  std::map<std::string, int> by_name;
  for (const auto& n : names) ++by_name[n];
  for (const auto& [name, count] : by_name)
    v.observed += (v.observed.empty() ? "" : ", ") + std::to_string(count) + " x " + name;
  if (v.observed.empty()) v.observed = "0 GPUs";
  if (expect.count < 0) {
    v.expected = "no expectation (pass --expect-gpus N or --expect INSTANCE_TYPE)";
    return v;
  }
  v.expected = std::to_string(expect.count) + " x " +
               (expect.family.empty() ? std::string("GPU") : expect.family) + " (" +
               expect.source + ")";
  std::vector<std::string> wrong_model;
  if (!expect.family.empty()) {
    for (const auto& [name, count] : by_name) {
      const GpuSpec* s = find_gpu_spec(name);
      if (!s || s->family != expect.family) wrong_model.push_back(name);
    }
  }
  if (static_cast<int>(names.size()) != expect.count || !wrong_model.empty()) {
    v.status = Status::kFail;
    v.fix = static_cast<int>(names.size()) < expect.count
                ? "a GPU is missing: `nvidia-smi -L`, `dmesg | grep -iE 'nvrm|xid'`; a GPU that "
                  "fell off the bus needs the instance stopped and started (new host)"
                : "check the instance type (`--expect`) matches the node";
    if (!wrong_model.empty()) v.detail = "unexpected model: " + wrong_model.front();
  }
  return v;
}

Verdict judge_pcie(int gen, int width, int gen_max, int width_max, bool under_load) {
  Verdict v;
  if (gen < 0 || width < 0 || gen_max < 0 || width_max < 0) {
    v.status = Status::kSkip;
    v.observed = "unknown";
    v.expected = "Gen" + std::to_string(gen_max) + " x" + std::to_string(width_max);
    v.detail = "NVML did not report the PCIe link";
    return v;
  }
  v.observed = "Gen" + std::to_string(gen) + " x" + std::to_string(width) +
               (under_load ? " under load" : " at idle");
  v.expected = "Gen" + std::to_string(gen_max) + " x" + std::to_string(width_max);
  const bool narrow = width < width_max;
  const bool slow = gen < gen_max && under_load;
  if (narrow || slow) {
    v.status = Status::kWarn;
    v.fix = "reseat or replace: on EC2 stop and start the instance to move to another host; "
            "check `lspci -vv` LnkSta vs LnkCap for the GPU";
  } else if (gen < gen_max) {
    v.detail = "a lower generation at idle is power saving, not a fault";
  }
  return v;
}

Verdict judge_ecc(const EccFacts& f) {
  Verdict v;
  auto show = [](long long x) { return x < 0 ? std::string("n/a") : std::to_string(x); };
  v.observed = "uncorrectable (volatile) " + show(f.uncorrected_volatile) + ", correctable " +
               show(f.corrected_volatile) + ", remap failure " + show(f.remap_failure) +
               ", remap pending " + show(f.remap_pending) + ", retirement pending " +
               show(f.retired_pending);
  v.expected = "no uncorrectable errors, no pending or failed remapping";
  if (f.remap_failure > 0 || f.uncorrected_volatile > 0) {
    v.status = Status::kFail;
    v.fix = "drain the node; a GPU reset (or instance stop/start) applies pending remaps; a "
            "remapping failure needs the GPU replaced (on EC2: stop/start to a new host)";
  } else if (f.remap_pending > 0 || f.retired_pending > 0) {
    v.status = Status::kWarn;
    v.fix = "reset the GPU (`nvidia-smi -r` when idle) or reboot to apply the pending remapping";
  }
  return v;
}

Verdict judge_speed(double tflops, const GpuSpec* spec, Precision p, double threshold_pct) {
  Verdict v;
  v.observed = fixed(tflops, 1) + " TFLOP/s";
  const double peak = spec ? peak_tflops(*spec, p) : 0;
  if (!spec || peak <= 0) {
    v.expected = "no datasheet peak";
    v.detail = !spec ? "unknown GPU model: TFLOP/s reported without a judgement"
                     : std::string(spec->model) + " has no " + std::string(to_string(p)) +
                           " tensor-core peak: TFLOP/s reported without a judgement";
    return v;
  }
  const double threshold = threshold_pct > 0 ? threshold_pct : slow_threshold_pct(*spec, p);
  const double pct = 100.0 * tflops / peak;
  v.observed += " (" + fixed(pct, 1) + " % of " + fixed(peak, 1) + ")";
  v.expected = ">= " + fixed(threshold, 0) + " % of the datasheet dense peak";
  if (pct < threshold) {
    v.status = Status::kWarn;
    v.fix = "check clocks and throttling (`nvidia-smi -q -d PERFORMANCE,CLOCK,POWER`), "
            "temperature and power limit; compare with the other GPUs of the node";
  }
  return v;
}

Verdict judge_loss(const std::vector<double>& losses, double max_ratio) {
  Verdict v;
  v.expected = "final loss <= " + fixed(max_ratio, 2) + " x initial";
  if (losses.size() < 2) {
    v.status = Status::kFail;
    v.observed = "no losses";
    return v;
  }
  const double first = losses.front(), last = losses.back();
  v.observed = "initial " + sig4(first) + ", final " + sig4(last);
  bool finite = true;
  for (double l : losses) finite = finite && std::isfinite(l);
  if (!finite || !(last <= max_ratio * first)) {
    v.status = Status::kFail;
    v.detail = finite ? "the loss did not fall: the GPU does not train correctly"
                      : "the loss became NaN or infinite";
    v.fix = "check for Xid errors (`dmesg | grep -i xid`) and run the GEMM verification on "
            "each GPU; a GPU that computes wrongly must be replaced";
  }
  return v;
}

}  // namespace nodeprobe::gemm
