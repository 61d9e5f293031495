// Section "gemm": cuBLASLt GEMM per precision and size vs the datasheet peak,
// verified against the CPU reference; shared section helpers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "judge.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/error.h"
#include "nodeprobe/stats.h"
#include "probe_sections.h"
#include "verify.h"

namespace nodeprobe::gemm {
namespace {

constexpr std::uint64_t kTimingSeed = 0x6e6f646570726f62ULL;
constexpr std::uint64_t kVerifySeed = 0x7665726966790000ULL;

// Which finding an API error points at, and whether it proves the GPU broken.
std::pair<std::string, Status> finding_for(const ApiErrorInfo& i) {
  const std::string& n = i.code_name;
  if (n == "cudaErrorMemoryAllocation" || n == "CUBLAS_STATUS_ALLOC_FAILED" ||
      (n.rfind("CUDNN_STATUS_", 0) == 0 && n.find("ALLOC") != std::string::npos))
    return {"gpu.oom", Status::kError};
  if (n == "cudaErrorECCUncorrectable") return {"gpu.ecc", Status::kFail};
  if (n == "cudaErrorIllegalAddress" || n == "cudaErrorLaunchFailure" ||
      n == "cudaErrorHardwareStackError" || n == "cudaErrorIllegalInstruction" ||
      n == "cudaErrorMisalignedAddress" || n == "cudaErrorInvalidPc" ||
      n == "CUBLAS_STATUS_EXECUTION_FAILED" || n.rfind("CUDNN_STATUS_EXECUTION_FAILED", 0) == 0)
    return {"gpu.xid", Status::kFail};
  return {"", Status::kError};
}

}  // namespace

std::string check_id(const DeviceRun& d, const std::string& what) {
  return "gpu" + d.label() + "." + what;
}


BusyHook window_sampler(SectionEnv& env, const DeviceRun& d, bool enabled, BusyWindow& window) {
  if (!enabled || d.nvml_index < 0) return {};
  const unsigned index = static_cast<unsigned>(d.nvml_index);
  return [&env, &window, index](const std::function<bool()>& still_busy) {
    // Every few ms until the timed work is done (bounded: a hung GPU is the
    // deadline's business, not the sampler's).
    constexpr int kMaxSamples = 4000;
    // Wall time, not the probe's injectable clock: the samples pair with the
    // GPU's energy counter, which runs in real time.
    Clock& wall = steady_clock();
    do {
      window.add(env.nvml.sample(index), wall.now_s());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (still_busy() && window.count() < kMaxSamples);
  };
}

void record_section_error(SectionEnv& env, const DeviceRun& d, const std::string& section,
                          const std::exception& e) {
  std::string finding;
  Status status = Status::kError;
  std::string fix;
  if (const auto* api = dynamic_cast<const ApiError*>(&e)) {
    std::tie(finding, status) = finding_for(api->info());
    if (finding == "gpu.oom")
      fix = "another process holds GPU memory (`nvidia-smi`); free it or lower the sizes";
    else if (!finding.empty())
      fix = "look for Xid / ECC messages (`dmesg | grep -iE 'xid|nvrm'`); drain the node and "
            "reset or replace the GPU";
  }
  add_check(env.r, check_id(d, section), status, e.what(), "section completes", fix, finding);
  env.ctx.log << "nodeprobe-gemm: gpu " << d.label() << " " << section << ": " << e.what() << "\n";
}

void run_gemm_section(SectionEnv& env, DeviceRun& d) {
  const GemmOptions& o = env.opt;
  const int max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  const auto max_elems = static_cast<std::size_t>(max_size) * static_cast<std::size_t>(max_size);
  Json rows = Json::array();
  Json largest = Json::object();
  for (Precision p : o.precisions) {
    const std::string pn(to_string(p));
    if (const std::string why = env.backend.unsupported_reason(d.dev, p); !why.empty()) {
      add_check(env.r, check_id(d, "gemm." + pn), Status::kSkip, "not supported", pn + " GEMM")
          .detail = why;
      rows.push_back({{"precision", pn}, {"skipped", why}});
      continue;
    }
    // Timing inputs: uniform random in [-1, 1) (random data draws realistic
    // power, unlike zeros), generated once per input format for every GPU.
    const std::string fmt_key = p == Precision::kTf32 ? "fp32" : pn;
    auto& inputs = env.cache.gemm_inputs[fmt_key];
    if (inputs.first.empty()) {
      inputs.first = random_inputs(p, max_elems, kTimingSeed);
      inputs.second = random_inputs(p, max_elems, kTimingSeed + 1);
    }
    const double peak = d.spec ? peak_tflops(*d.spec, p) : 0;
    if (peak > 0) add_metric(env.r, "gemm.peak_tflops", peak, {{"gpu", d.label()}, {"precision", pn}});
    double tflops_at_max = 0;
    BusyWindow busy;
    bool unsupported = false;
    for (int size : o.sizes) {
      GemmRequest req{p, size, size, size, o.warmup, o.reps};
      Timing t;
      try {
        t = env.backend.time_gemm(d.dev, req, inputs.first, inputs.second,
                                  window_sampler(env, d, size == max_size, busy));
      } catch (const ApiError& e) {
        // This cuBLAS has no kernel for the precision on this GPU (e.g. FP8 on
        // an L4 with CUDA 11.8): a skip for the precision, not a broken GPU.
        if (e.info().code_name != "CUBLAS_STATUS_NOT_SUPPORTED") throw;
        add_check(env.r, check_id(d, "gemm." + pn), Status::kSkip, "not supported", pn + " GEMM")
            .detail = e.what();
        rows.push_back({{"precision", pn}, {"skipped", e.what()}});
        unsupported = true;
        break;
      }
      const double flops = 2.0 * size * static_cast<double>(size) * size;
      std::vector<double> tf;
      for (double s : t.seconds) tf.push_back(flops / s / 1e12);
      const std::map<std::string, std::string> labels = {
          {"gpu", d.label()}, {"precision", pn}, {"size", std::to_string(size)}};
      const Metric& tm = add_sampled_metric(env.r, "gemm.tflops", tf, labels);
      const double median = tm.value;
      const Stats tstats = *tm.stats;
      Json row = {{"precision", pn}, {"m", size}, {"n", size}, {"k", size},
                  {"tflops", median}, {"algo", t.algo}, {"workspace_bytes", t.workspace}};
      if (peak > 0) {
        add_metric(env.r, "gemm.pct_of_peak", 100.0 * median / peak,
                   map_stats(tstats, [&](double x) { return 100.0 * x / peak; }), labels);
        row["pct_of_peak"] = 100.0 * median / peak;
      }
      rows.push_back(row);
      if (size == max_size) tflops_at_max = median;
    }
    if (unsupported) continue;
    largest[pn] = tflops_at_max;

    // Verification after timing: a smaller GEMM against the CPU reference.
    auto& ver = env.cache.gemm_verify[p];
    const int vm = o.verify_size, vn = o.verify_size, vk = 2 * o.verify_size;
    if (ver.a.empty()) {
      std::vector<float> av, bv;
      ver.a = random_inputs(p, static_cast<std::size_t>(vk) * static_cast<std::size_t>(vm), kVerifySeed, &av);
      ver.b = random_inputs(p, static_cast<std::size_t>(vk) * static_cast<std::size_t>(vn), kVerifySeed + 1, &bv);
      ver.ref = gemm_reference(av, bv, vm, vn, vk);
    }
    const std::vector<float> got = decode_outputs(p, env.backend.run_gemm(d.dev, p, vm, vn, vk, ver.a, ver.b));
    const Comparison cmp = compare_results(got, ver.ref, static_cast<std::size_t>(vk), gemm_tolerance(p));
    add_check(env.r, check_id(d, "gemm.verify." + pn), cmp.ok() ? Status::kPass : Status::kFail,
              cmp.ok() ? "matches the CPU reference" : "differs from the CPU reference",
              "within " + pn + " rounding of the CPU reference (" + std::to_string(vm) + "x" +
                  std::to_string(vn) + "x" + std::to_string(vk) + ")",
              cmp.ok() ? "" : "the GPU computes wrong results: drain the node, check `dmesg` for "
                              "Xid errors, reset or replace the GPU",
              "gpu.compute_wrong")
        .detail = cmp.describe();

    // Speed at the largest size against the datasheet (a MIG slice: its share).
    Verdict v = judge_speed(tflops_at_max, d.spec, p, o.slow_pct);
    std::string detail = v.detail;
    if (!d.mig_profile.empty())
      detail += std::string(detail.empty() ? "" : "; ") + "MIG slice " + d.mig_profile + ": " +
                d.data["mig"].value("judged", std::string());
    if (d.nvml_index >= 0) {
      // Clocks and throttle reasons from the timed window itself: a slow
      // result from a throttled GPU reads differently from a slow GPU.
      detail += std::string(detail.empty() ? "" : "; ") + "during the timed window: " + busy.describe();
      d.data["gemm_busy_window_" + pn] = busy.to_json();
      if (const long long why = abnormal_throttle(busy.throttle_reasons()); why && v.status == Status::kWarn) {
        v.observed += " while throttled (" + describe_throttle_reasons(why) + ")";
        v.fix = "the GPU was throttled by heat or power delivery, not slow by itself: check cooling "
                "and power (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i " + d.label() +
                "`), then rerun";
      }
    }
    add_check(env.r, check_id(d, "gemm.speed." + pn), v.status, v.observed, v.expected, v.fix,
              "gpu.compute_slow")
        .detail = detail;
  }
  // The mixed-precision gain users expect (FIELD-NOTES acceptance step 4).
  if (largest.contains("fp32") && largest["fp32"].get<double>() > 0) {
    const double fp32 = largest["fp32"].get<double>();
    for (const char* p : {"tf32", "fp16", "bf16", "fp8"}) {
      if (!largest.contains(p)) continue;
      add_metric(env.r, "gemm.speedup_vs_fp32", largest[p].get<double>() / fp32,
                 {{"gpu", d.label()}, {"precision", p}, {"size", std::to_string(max_size)}});
    }
  }
  d.data["gemm"] = rows;
  d.data["gemm_largest"] = largest;
}

}  // namespace nodeprobe::gemm
