#include "gemm_probe.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "gemm_metrics.h"
#include "instance_types.h"
#include "judge.h"
#include "nodeprobe/error.h"
#include "probe_sections.h"

namespace nodeprobe::gemm {
namespace {

// Below this many seconds before the deadline a section is skipped, so the
// report still lands before the runner's kill.
constexpr double kMinSectionSeconds = 5;

GpuExpectation expectation(const GemmOptions& opt, const HostInfo* host) {
  GpuExpectation e;
  const std::string type = !opt.expect_instance.empty() ? opt.expect_instance
                           : host                       ? host->instance_type
                                                        : std::string();
  if (auto g = expected_gpus(type)) {
    e.count = g->count;
    e.family = std::string(g->family);
    e.source = "instance type " + type;
  }
  if (opt.expect_gpus >= 0) {  // an explicit count wins over the table
    e.count = opt.expect_gpus;
    e.source = "--expect-gpus " + std::to_string(opt.expect_gpus) +
               (e.family.empty() ? "" : ", " + e.family + " per instance type " + type);
  }
  return e;
}

Json config_json(const GemmOptions& o) {
  Json j = Json::object();
  j["profile"] = o.profile;
  j["devices"] = o.devices;
  j["sizes"] = o.sizes;
  Json p = Json::array();
  for (Precision x : o.precisions) p.push_back(std::string(to_string(x)));
  j["precisions"] = p;
  j["warmup"] = o.warmup;
  j["reps"] = o.reps;
  j["verify_size"] = o.verify_size;
  j["expect_gpus"] = o.expect_gpus;
  j["expect_instance"] = o.expect_instance;
  j["slow_pct"] = o.slow_pct;
  j["sections"] = {{"gemm", o.gemm}, {"conv", o.conv}, {"memory", o.memory},
                   {"train", o.train}, {"p2p", o.p2p}};
  j["conv_batch"] = o.conv_batch;
  j["device_bytes"] = o.device_bytes;
  j["host_bytes"] = o.host_bytes;
  j["p2p_bytes"] = o.p2p_bytes;
  j["train"] = {{"batch", o.train_cfg.batch}, {"in", o.train_cfg.in}, {"out", o.train_cfg.out},
                {"steps", o.train_cfg.steps}, {"lr", o.train_cfg.lr}, {"loss_ratio", o.loss_ratio}};
  return j;
}

void inventory_checks(ProbeResult& r, const DeviceRun& d, const NvmlGpu& g) {
  EccFacts f;
  f.uncorrected_volatile = g.ecc_uncorrected_volatile;
  f.corrected_volatile = g.ecc_corrected_volatile;
  f.retired_pending = g.retired_pending;
  f.remap_pending = g.remap_pending;
  f.remap_failure = g.remap_failure;
  f.remapped_uncorrectable = g.remapped_uncorrectable;
  const Verdict v = judge_ecc(f);
  add_check(r, check_id(d, "ecc"), v.status, v.observed, v.expected, v.fix, "gpu.ecc");
}

// Cross-GPU view: a GPU well below the node's median stands out even when
// every GPU clears the datasheet threshold.
void outlier_checks(ProbeResult& r, const std::vector<DeviceRun>& runs) {
  if (runs.size() < 2) return;
  Json summary = Json::object();
  for (Precision p : kAllPrecisions) {
    std::vector<std::pair<int, double>> v;
    for (const auto& d : runs) {
      const auto& best = d.data.value("gemm_largest", Json::object());
      if (best.contains(std::string(to_string(p))))
        v.emplace_back(d.dev, best[std::string(to_string(p))].get<double>());
    }
    if (v.size() < 2) continue;
    std::vector<double> t;
    for (auto& [dev, x] : v) t.push_back(x);
    std::sort(t.begin(), t.end());
    const double median = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
    summary[std::string(to_string(p))] = {{"median_tflops", median}, {"min_tflops", t.front()},
                                          {"max_tflops", t.back()},
                                          {"spread_pct", median > 0 ? 100 * (t.back() - t.front()) / median : 0}};
    for (auto& [dev, x] : v) {
      if (x >= 0.85 * median) continue;
      char obs[96], exp[96];
      std::snprintf(obs, sizeof obs, "%.1f TFLOP/s (%.0f %% of the node median)", x, 100 * x / median);
      std::snprintf(exp, sizeof exp, ">= 85 %% of the node median %.1f TFLOP/s", median);
      add_check(r, "gpu" + std::to_string(dev) + ".gemm.outlier." + std::string(to_string(p)),
                Status::kWarn, obs, exp,
                "compare clocks, temperature and power of this GPU with its neighbours "
                "(`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i " + std::to_string(dev) + "`)",
                "gpu.compute_slow");
    }
  }
  if (!summary.empty()) r.data["gemm_across_gpus"] = summary;
}

// A MIG slice is judged by its share of the whole GPU (its SMs of the GPU's
// SMs), never against the whole GPU's datasheet; without an SM count for the
// model it is not judged at all. Either way the GPU's data says so.
void judge_as_mig_slice(DeviceRun& d, const MigName& mig) {
  d.mig_profile = mig.profile;
  Json mj = {{"profile", mig.profile}, {"parent", mig.parent}};
  const GpuSpec* whole = d.spec;
  d.spec = nullptr;
  if (whole) {
    if (const auto share = mig_share(*whole, d.info.sm_count)) {
      d.share_spec = std::make_shared<const GpuSpec>(*share);
      d.spec = d.share_spec.get();
      mj["judged"] = "by share: " + std::to_string(d.info.sm_count) + " of the " +
                     std::string(whole->model) + "'s " + std::to_string(whole->sm_count) +
                     " SMs; memory bandwidth not judged";
    } else {
      mj["judged"] = "not judged: no SM count for " + std::string(whole->model);
    }
  } else {
    mj["judged"] = "not judged: unknown GPU model";
  }
  d.data["mig"] = mj;
}

void run_p2p(SectionEnv& env, const std::vector<DeviceRun>& runs) {
  const std::size_t n = runs.size();
  Json bw = Json::array(), access = Json::array();
  for (std::size_t i = 0; i < n; ++i) {
    Json row = Json::array(), arow = Json::array();
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        row.push_back(nullptr);
        arow.push_back(nullptr);
        continue;
      }
      const int src = runs[i].dev, dst = runs[j].dev;
      const bool direct = env.backend.peer_access(src, dst);
      arow.push_back(direct);
      const Bandwidth b = env.backend.peer_copy(src, dst, env.opt.p2p_bytes, 2, env.opt.mem_reps);
      std::vector<double> gbs;
      for (double s : b.timing.seconds) gbs.push_back(static_cast<double>(b.bytes) / s / 1e9);
      const Metric& m = add_sampled_metric(env.r, "p2p.bandwidth", gbs,
                                           {{"src", std::to_string(src)}, {"dst", std::to_string(dst)},
                                            {"path", direct ? "peer" : "staged"}});
      row.push_back(m.value);
    }
    bw.push_back(row);
    access.push_back(arow);
  }
  Json devs = Json::array();
  for (const auto& d : runs) devs.push_back(d.dev);
  env.r.data["p2p"] = {{"devices", devs}, {"bytes", env.opt.p2p_bytes},
                       {"bandwidth_gbs", bw}, {"peer_access", access}};
}

}  // namespace

void GemmProbe::run(ProbeContext& ctx, ProbeResult& r) {
  if (const std::string why = validate(opt_); !why.empty()) throw InputError(why);
  r.config = config_json(opt_);
  declare_metrics(r, gemm_metrics());
  const Nvml nvml(nvml_library_);
  const NvmlInventory& inv = nvml.inventory();
  driver_version_ = inv.driver_version;
  Json nv = {{"loaded", inv.loaded}, {"library", inv.library}};
  if (!inv.error.empty()) nv["error"] = inv.error;
  if (inv.loaded) {
    nv["driver_version"] = inv.driver_version;
    nv["cuda_driver_version"] = format_cuda_version(inv.cuda_driver_version);
    Json gpus = Json::array();
    for (const auto& g : inv.gpus) gpus.push_back(to_json(g));
    nv["gpus"] = gpus;
  }
  r.data["nvml"] = nv;

  const CudaEnv env = backend_.query_env();
  if (env.runtime_version > 0) cuda_runtime_ = format_cuda_version(env.runtime_version);
  Json cj = {{"built_with_cuda", env.built_with_cuda},
             {"driver_version", format_cuda_version(env.driver_version)},
             {"runtime_version", format_cuda_version(env.runtime_version)},
             {"device_count", env.device_count}};
  if (env.rc != cuda_rc::kSuccess)
    cj["error"] = {{"code", env.rc}, {"name", env.error_name}, {"string", env.error_string}};
  if (env.visible_devices_set) cj["cuda_visible_devices"] = env.visible_devices;
  Json libs = Json::array();
  for (const LibraryState& l : backend_.libraries()) {
    if (!l.version.empty()) cj[l.name + "_version"] = l.version;
    Json lj = {{"name", l.name}, {"loaded", l.error.empty()}};
    if (!l.version.empty()) lj["version"] = l.version;
    if (!l.path.empty()) lj["path"] = l.path;
    if (!l.error.empty()) lj["error"] = l.error;
    libs.push_back(lj);
  }
  cj["libraries"] = libs;
  r.data["cuda"] = cj;

  const GpuExpectation expect = expectation(opt_, ctx.host);
  NvmlView view{inv.loaded, inv.init_rc, inv.error, static_cast<int>(inv.gpus.size()),
                nvml.mig_enabled_count(), nvml.mig_device_count()};
  const Diagnosis dg = diagnose_cuda(env, expect, view);
  r.data["diagnosis"] = {{"usable", dg.problem == CudaProblem::kNone}, {"summary", dg.summary}};

  // The count check uses NVML's list when it has one: CUDA_VISIBLE_DEVICES
  // hides GPUs from CUDA, not from the node.
  std::vector<std::string> names;
  if (inv.loaded) {
    for (const auto& g : inv.gpus) names.push_back(g.name);
    for (const auto& g : inv.gpus) {
      Json hg = {{"index", g.index}, {"name", g.name}, {"uuid", g.uuid},
                 {"memory_bytes", g.memory_total}, {"pci_bus_id", g.pci_bus_id}};
      if (!g.migs.empty()) {
        Json migs = Json::array();
        for (const auto& m : g.migs) migs.push_back({{"name", m.name}, {"uuid", m.uuid}});
        hg["mig_devices"] = migs;
      }
      host_gpus_.push_back(hg);
    }
  }
  if (dg.problem != CudaProblem::kNone) {
    add_check(r, "gpu.cuda_init", dg.status == Status::kSkip ? Status::kSkip : dg.status,
              dg.observed, dg.expected, dg.fix, dg.finding);
    if (inv.loaded && expect.count >= 0) {
      const Verdict v = judge_count(expect, names);
      add_check(r, "gpu.count", v.status, v.observed, v.expected, v.fix, "gpu.count_mismatch");
    }
    r.status = dg.status;
    r.reason = dg.reason;
    ctx.log << "nodeprobe-gemm: " << dg.reason << "\n";
    return;
  }

  std::vector<int> devices = opt_.devices;
  if (devices.empty())
    for (int i = 0; i < env.device_count; ++i) devices.push_back(i);
  for (int d : devices)
    if (d < 0 || d >= env.device_count)
      throw InputError("--devices: device " + std::to_string(d) + " does not exist (" +
                       std::to_string(env.device_count) + " visible)");

  std::vector<DeviceRun> runs;
  const bool nvml_list = inv.loaded;
  if (!nvml_list) host_gpus_ = Json::array();
  for (int dev = 0; dev < env.device_count; ++dev) {
    DeviceInfo info;
    try {
      info = backend_.device_info(dev);
    } catch (const std::exception& e) {
      // A GPU that cannot even report its properties (fallen off the bus,
      // Xid 79) fails; the others are still tested.
      add_check(r, "gpu" + std::to_string(dev) + ".info", Status::kFail, e.what(),
                "device properties readable",
                "`nvidia-smi -q -i " + std::to_string(dev) + "`, `dmesg | grep -i xid`; reset the GPU "
                "or stop/start the instance",
                "gpu.xid");
      names.push_back("(unreadable)");
      continue;
    }
    if (!nvml_list) {
      names.push_back(info.name);
      host_gpus_.push_back({{"index", dev}, {"name", info.name}, {"uuid", info.uuid},
                            {"memory_bytes", info.memory_bytes}, {"pci_bus_id", info.pci_bus_id}});
    }
    if (std::find(devices.begin(), devices.end(), dev) == devices.end()) continue;
    DeviceRun d;
    d.dev = dev;
    d.info = info;
    d.spec = find_gpu_spec(info.name);
    d.nvml_index = nvml.index_of_uuid(info.uuid);
    d.unsupported = cuda_build_support(env.runtime_version, info.cc_major, info.cc_minor);
    d.data = {{"index", dev}, {"name", info.name}, {"uuid", info.uuid},
              {"pci_bus_id", info.pci_bus_id},
              {"compute_capability", std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor)},
              {"memory_bytes", info.memory_bytes}, {"sm_count", info.sm_count},
              {"model", d.spec ? std::string(d.spec->model) : std::string("unknown")}};
    if (const auto mig = parse_mig_name(info.name)) judge_as_mig_slice(d, *mig);
    if (d.nvml_index >= 0) d.data["nvml_index"] = d.nvml_index;
    if (!d.unsupported.empty()) d.data["unsupported"] = d.unsupported;
    runs.push_back(std::move(d));
  }
  {
    const Verdict v = judge_count(expect, names);
    add_check(r, "gpu.count", v.status, v.observed, v.expected, v.fix, "gpu.count_mismatch")
        .detail = v.detail;
  }

  SharedCache cache;
  SectionEnv senv{ctx, r, backend_, opt_, nvml, cache};
  using Section = void (*)(SectionEnv&, DeviceRun&);
  const std::pair<const char*, Section> sections[] = {
      {"gemm", opt_.gemm ? run_gemm_section : nullptr},
      {"conv", opt_.conv ? run_conv_section : nullptr},
      {"memory", opt_.memory ? run_memory_section : nullptr},
      {"train", opt_.train ? run_train_section : nullptr}};
  // A section starts only when it can finish before the deadline: at least
  // kMinSectionSeconds, and 1.5 x what it took on the previous GPU. A deadline
  // hit mid-section would leave a report without this probe's results.
  std::map<std::string, double> took;
  const std::string blas_missing = backend_.blas_unavailable_reason();
  for (DeviceRun& d : runs) {
    if (d.nvml_index >= 0) inventory_checks(r, d, inv.gpus[static_cast<std::size_t>(d.nvml_index)]);
    for (const auto& [name, fn] : sections) {
      if (!fn) continue;
      if (!d.unsupported.empty()) {
        add_check(r, check_id(d, name), Status::kSkip, "not run", "a GPU this build supports",
                  "run a nodeprobe built with CUDA 12.x (or 11.8) on this GPU")
            .detail = d.unsupported;
        continue;
      }
      if (!blas_missing.empty() && (std::string(name) == "gemm" || std::string(name) == "train")) {
        add_check(r, check_id(d, name), Status::kError, blas_missing, "cuBLAS and cuBLASLt loaded",
                  "install the CUDA math libraries this build uses (cuBLAS), or set "
                  "NODEPROBE_CUDA_LIBRARY_PATH to their lib directory");
        continue;
      }
      const double need = std::max(kMinSectionSeconds, 1.5 * took[name]);
      if (ctx.remaining_s() < need) {
        add_check(r, check_id(d, name), Status::kSkip, "not run", "run",
                  "raise the deadline (--timeout) or use --profile quick")
            .detail = "skipped: the deadline was near";
        continue;
      }
      ctx.debug("gpu " + d.label() + ": " + name);
      const double t0 = ctx.clock.now_s();
      try {
        fn(senv, d);
      } catch (const std::exception& e) {
        record_section_error(senv, d, name, e);
      }
      took[name] = ctx.clock.now_s() - t0;
    }
  }
  outlier_checks(r, runs);
  // A build that cannot drive any of these GPUs measured nothing: skip, and say why.
  if (!runs.empty() && std::all_of(runs.begin(), runs.end(), [](const DeviceRun& d) { return !d.unsupported.empty(); })) {
    r.status = Status::kSkip;
    r.reason = runs.front().unsupported;
    ctx.log << "nodeprobe-gemm: " << r.reason << "\n";
  }
  if (!blas_missing.empty() && (opt_.gemm || opt_.train) && !runs.empty() && r.reason.empty())
    r.reason = blas_missing;
  if (opt_.p2p && runs.size() >= 2 && r.status != Status::kSkip) {
    if (ctx.remaining_s() < kMinSectionSeconds) {
      add_check(r, "gpu.p2p", Status::kSkip, "not run", "run").detail = "skipped: the deadline was near";
    } else {
      try {
        run_p2p(senv, runs);
      } catch (const std::exception& e) {
        add_check(r, "gpu.p2p", Status::kError, e.what(), "peer copies complete");
      }
    }
  }
  Json gpus = Json::array();
  for (auto& d : runs) gpus.push_back(std::move(d.data));
  r.data["gpus"] = gpus;
}

void GemmProbe::fill_host(HostInfo& host) const {
  if (!host_gpus_.empty()) host.gpus = host_gpus_;
  if (host.driver.empty()) host.driver = driver_version_;
  if (!cuda_runtime_.empty()) host.cuda_runtime = cuda_runtime_;
}

}  // namespace nodeprobe::gemm
