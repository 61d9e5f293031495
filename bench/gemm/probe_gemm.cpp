// Section "gemm": cuBLASLt GEMM per precision and size vs the datasheet peak,
// verified against the CPU reference; shared section helpers.
#include <algorithm>
#include <cstdio>

#include "judge.h"
#include "nodeprobe/error.h"
#include "nodeprobe/stats.h"
#include "probe_sections.h"
#include "verify.h"

namespace nodeprobe::gemm {
namespace {

constexpr std::uint64_t kTimingSeed = 0x6e6f646570726f62ULL;
constexpr std::uint64_t kVerifySeed = 0x7665726966790000ULL;

std::string fmt1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

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
    NvmlSample busy;
    bool unsupported = false;
    for (int size : o.sizes) {
      GemmRequest req{p, size, size, size, o.warmup, o.reps};
      const bool sample_now = size == max_size && d.nvml_index >= 0;
      Timing t;
      try {
        t = env.backend.time_gemm(d.dev, req, inputs.first, inputs.second, [&] {
          if (sample_now) busy = env.nvml.sample(static_cast<unsigned>(d.nvml_index));
        });
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

    // Speed at the largest size against the datasheet.
    const Verdict v = judge_speed(tflops_at_max, d.spec, p, o.slow_pct);
    std::string detail = v.detail;
    if (d.nvml_index >= 0) {
      detail += std::string(detail.empty() ? "" : "; ") + "during the run: SM clock " +
                std::to_string(busy.sm_clock_mhz) + " MHz, power " + fmt1(busy.power_draw_w) +
                " W, throttle reasons " + describe_throttle_reasons(busy.throttle_reasons);
      d.data["gemm_busy_sample_" + pn] = to_json(busy);
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
