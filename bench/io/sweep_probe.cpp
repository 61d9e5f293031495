// sweep: the workers x prefetch grid of the modelled DataLoader, the bounds
// side by side, the recommendation, and (--peer torch) the real DataLoader.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "cache.h"
#include "io_metrics.h"
#include "io_report.h"
#include "loader_model.h"
#include "probes.h"
#include "recommend.h"
#include "torch_peer.h"
#include "windows.h"

namespace nodeprobe::io {
namespace {

Json point_json(const SweepPoint& p, double seconds, const std::string& error) {
  return Json{{"layout", p.layout},     {"workers", p.workers},       {"prefetch", p.prefetch},
              {"au", p.au},             {"wait_fraction", p.wait_fraction},
              {"samples_per_s", p.samples_per_s}, {"seconds", seconds}, {"error", error}};
}

double finite_or(double v, double alt) { return std::isfinite(v) ? v : alt; }

// One dataset of the sweep with what the model and the storage run know of it.
struct SweepSet {
  std::unique_ptr<Dataset> ds;
  LoaderCpu cpu;
  double storage_sps = 0;         // the native reader, no step, most workers and prefetch
  double native_sample_cpu_s = 0; // the native workers' CPU per sample in that run
  double loader_sps = -1;         // the modelled loader without IO, no step (-1: not measured)
};

Json cpu_json(const LoaderCpu& c, const std::string& pipeline, Collate collate) {
  return Json{{"pipeline", pipeline},
              {"collate", to_string(collate)},
              {"sample_cpu_us", c.sample_cpu_s * 1e6},
              {"batch_cpu_us", c.batch_cpu_s * 1e6},
              {"step_cpu_us", c.step_cpu_s * 1e6},
              {"sample_cpu_from", c.sample_from},
              {"batch_cpu_from", c.batch_from}};
}

}  // namespace

void SweepProbe::run(ProbeContext& ctx, ProbeResult& r) {
  r.config = config_json(opt_.base);
  r.config.update(Json{{"dirs", opt_.dirs},
                       {"target_au", opt_.target_au},
                       {"seconds_per_point", opt_.seconds_per_point},
                       {"prefetch_list", opt_.prefetch},
                       {"pipeline", opt_.pipeline},
                       {"collate", opt_.collate},
                       {"sample_cpu_us", opt_.sample_cpu_us},
                       {"batch_cpu_us", opt_.batch_cpu_us},
                       {"step_cpu_fraction", opt_.step_cpu_fraction},
                       {"cores", opt_.cores},
                       {"pin_memory", opt_.pin_memory},
                       {"peer", opt_.peer}});
  declare_metrics(r, run_metrics(kSweepAxes));
  declare_metrics(r, sweep_model_metrics());
  guarded(ctx, r, [&] {
    if (opt_.base.step_s <= 0) throw InputError("--step-ms must be above 0: AU needs a step time to compare with");
    if (opt_.dirs.empty()) throw InputError("--dir is required");
    const bool modelled = opt_.pipeline != "native";
    const PipelinePreset* preset = modelled ? find_preset(opt_.pipeline) : nullptr;
    if (modelled && !preset)
      throw InputError("--pipeline " + opt_.pipeline + ": not one of native, " + preset_names());
    const Collate collate = !opt_.collate.empty() ? (opt_.collate == "list" ? Collate::kList : Collate::kStack)
                            : preset                ? preset->collate
                                                    : Collate::kStack;
    if (opt_.cores > 0) {
      // The whole process (every loader thread and the peer's processes) runs on these cores.
      if (auto why = restrict_cores(opt_.cores); !why.empty())
        throw InputError("--cores " + std::to_string(opt_.cores) + ": " + why);
    }
    const unsigned cores = available_cores();
    const auto workers = opt_.workers.empty() ? default_worker_list(cores) : opt_.workers;
    const std::size_t max_workers = *std::max_element(workers.begin(), workers.end());
    const std::size_t max_prefetch = *std::max_element(opt_.prefetch.begin(), opt_.prefetch.end());
    std::vector<SweepPoint> points;
    Json rows = Json::array();
    bool gpu = false, out_of_time = false;
    bool pin_thread = opt_.pin_memory == "on";  // auto: decided once the staging says whether a GPU is usable
    auto no_time_for = [&](double seconds) { return ctx.deadline_s > 0 && ctx.remaining_s() < seconds + 2; };
    auto budget = [&] { return ctx.deadline_s > 0 ? std::max(0.1, ctx.remaining_s() - 1.0) : 0.0; };
    // The defaults were measured on one machine; this node's CPU, measured now, scales them.
    const bool defaults_used = modelled && (opt_.sample_cpu_us < 0 || opt_.batch_cpu_us < 0);
    const double cal_us = defaults_used ? calibration_us() : 0.0;
    const double cpu_factor = cal_us > 0 && calibration_ref_us() > 0
                                  ? std::clamp(cal_us / calibration_ref_us(), 0.25, 8.0)
                                  : 1.0;
    // Every dataset is checked before the first measurement.
    std::vector<SweepSet> sets;
    for (const auto& dir : opt_.dirs) {
      SweepSet s;
      s.ds = std::make_unique<Dataset>(dir);
      if (auto why = method_unavailable(opt_.base.method, *s.ds); !why.empty()) throw MethodUnavailable(why);
      const double mean_bytes =
          s.ds->samples() ? static_cast<double>(s.ds->total_bytes()) / s.ds->samples() : 0.0;
      if (modelled)
        s.cpu = loader_cpu(*preset, collate, mean_bytes, opt_.base.batch, opt_.sample_cpu_us, opt_.batch_cpu_us,
                           opt_.step_cpu_fraction, opt_.base.step_s, cpu_factor);
      sets.push_back(std::move(s));
    }
    char line[512];
    if (modelled) {
      const LoaderCpu& c = sets.front().cpu;
      std::snprintf(line, sizeof line,
                    "modelled PyTorch DataLoader (%s, %s collate): %.0f us of worker CPU per sample (%s), "
                    "%.0f us of main-process CPU per batch (%s), %u cores\n",
                    preset->name.c_str(), to_string(collate), c.sample_cpu_s * 1e6, c.sample_from.c_str(),
                    c.batch_cpu_s * 1e6, c.batch_from.c_str(), cores);
      ctx.log << line;
      if (defaults_used) {
        std::snprintf(line, sizeof line,
                      "  this CPU: %.1f us for the calibration work, %.1f us where the defaults were measured "
                      "(x%.2f)\n",
                      cal_us, calibration_ref_us(), cpu_factor);
        ctx.log << line;
      }
    } else {
      ctx.log << "native loader (--pipeline native): no Python CPU modelled, " << cores << " cores\n";
    }

    // One point of the sweep: its settings, time-bounded (max_seconds ends it).
    auto point_config = [&](std::size_t w, std::size_t p) {
      LoaderConfig cfg = opt_.base;
      cfg.workers = w;
      cfg.prefetch = p;
      cfg.max_seconds = opt_.seconds_per_point;
      cfg.epochs = 1000000;
      return cfg;
    };
    // The ceilings, measured: the storage with the native reader, and the
    // modelled loader's CPU without IO (method null), each with no step and
    // the most workers and prefetch of the sweep.
    for (auto& s : sets) {
      if (no_time_for(opt_.seconds_per_point * (modelled ? 2 : 1))) {
        out_of_time = true;
        break;
      }
      LoaderConfig cfg = point_config(max_workers, max_prefetch);
      cfg.step_s = 0;
      const LoaderResult res = run_loader(*s.ds, cfg, ctx.clock, budget());
      if (!res.error.empty()) throw std::runtime_error("the storage ceiling run failed: " + res.error);
      gpu = gpu || res.pin.device;
      if (opt_.pin_memory == "auto") pin_thread = gpu;
      s.cpu.receive_thread = pin_thread;
      const Labels layout{{"layout", to_string(s.ds->layout())}};
      s.storage_sps = add_rate_metric(r, "storage_ceiling", res, layout);
      double wcpu = 0;
      for (const auto& w : res.workers) wcpu += w.cpu_s;
      s.native_sample_cpu_s = res.samples ? wcpu / static_cast<double>(res.samples) : 0.0;
      std::snprintf(line, sizeof line,
                    "storage ceiling (%s): %.0f samples/s, the native reader (%zu workers, prefetch %zu, no step; "
                    "%.0f us of its CPU per sample)\n",
                    to_string(s.ds->layout()), s.storage_sps, max_workers, max_prefetch,
                    s.native_sample_cpu_s * 1e6);
      ctx.log << line;
      if (!modelled) continue;
      cfg.method = Method::kNull;
      cfg.cache = CacheMode::kAsIs;
      cfg.sample_cpu_s = std::max(s.cpu.sample_cpu_s, s.native_sample_cpu_s);
      cfg.batch_cpu_s = s.cpu.batch_cpu_s;
      cfg.receive_thread = pin_thread;
      const LoaderResult lres = run_loader(*s.ds, cfg, ctx.clock, budget());
      s.loader_sps = add_rate_metric(r, "loader_ceiling", lres, layout);
      std::snprintf(line, sizeof line,
                    "loader ceiling (%s): %.0f samples/s, the modelled loader without IO (%zu workers, prefetch "
                    "%zu, no step; %.0f from its CPU costs alone on %u cores)\n",
                    to_string(s.ds->layout()), s.loader_sps, max_workers, max_prefetch,
                    cpu_ceiling(s.cpu, s.native_sample_cpu_s, max_workers, opt_.base.batch, cores), cores);
      ctx.log << line;
    }

    std::snprintf(line, sizeof line, "%-7s %7s %8s %7s %10s %10s\n", "layout", "workers", "prefetch", "AU",
                  "data wait", "samples/s");
    ctx.log << line;
    auto measure = [&](SweepSet& s, std::size_t w, std::size_t p) {
      LoaderConfig cfg = point_config(w, p);
      cfg.sample_cpu_s = s.cpu.sample_cpu_s;
      cfg.batch_cpu_s = s.cpu.batch_cpu_s;
      cfg.step_cpu_s = s.cpu.step_cpu_s;
      cfg.receive_thread = pin_thread;
      const LoaderResult res = run_loader(*s.ds, cfg, ctx.clock, budget());
      gpu = gpu || res.pin.device;
      WaitSummary sum = summarize(res.consumer);
      if (res.consumer.batches < 2 && res.elapsed_s > 0) {
        // AU leaves the first batch out; with at most one batch that leaves
        // nothing. What the accelerator did of the whole run is the honest share.
        sum.au = std::min(1.0, res.consumer.compute_s / res.elapsed_s);
        sum.wait_fraction = 1 - sum.au;
      }
      SweepPoint pt{to_string(s.ds->layout()), w, p, sum.au, sum.wait_fraction,
                    res.elapsed_s > 0 ? static_cast<double>(res.samples) / res.elapsed_s : 0.0,
                    res.error.empty() && res.bad_samples == 0};
      points.push_back(pt);
      rows.push_back(point_json(pt, res.elapsed_s, res.error.empty() ? res.first_bad : res.error));
      const Labels axes = run_axes(kSweepAxes, *s.ds, cfg);
      const WindowSamples win = window_samples(res, true);
      add_metric(r, "au", pt.au, sample_stats(win.au, pt.au), axes);
      add_metric(r, "samples_per_s", pt.samples_per_s, sample_stats(win.samples_per_s, pt.samples_per_s), axes);
      std::snprintf(line, sizeof line, "%-7s %7zu %8zu %6.1f%% %9.1f%% %10.0f%s\n", pt.layout.c_str(), w, p,
                    100 * pt.au, 100 * pt.wait_fraction, pt.samples_per_s, pt.ok ? "" : "  (error)");
      ctx.log << line;
      if (!res.error.empty()) ctx.log << "  " << res.error << "\n";
      return pt;
    };
    for (auto& s : sets) {
      if (out_of_time) break;
      for (std::size_t w : workers) {
        bool row_reached = false;
        for (std::size_t p : opt_.prefetch) {
          if (no_time_for(opt_.seconds_per_point)) {
            out_of_time = true;
            break;
          }
          const SweepPoint pt = measure(s, w, p);
          row_reached = row_reached || (pt.ok && pt.au >= opt_.target_au);
        }
        if (out_of_time || (row_reached && !opt_.exhaustive)) break;
      }
    }

    Recommendation rec = recommend(points, opt_.target_au, opt_.base.batch, cores, gpu, opt_.pin_memory != "off");
    SweepSet* best_set = &sets.front();
    for (auto& s : sets)
      if (rec.best.layout == to_string(s.ds->layout())) best_set = &s;
    BoundInputs bin;
    bin.storage_sps = best_set->storage_sps;
    bin.loader_sps = modelled ? best_set->loader_sps : -1;
    bin.cpu = best_set->cpu;
    bin.native_sample_cpu_s = best_set->native_sample_cpu_s;
    bin.workers = max_workers;
    bin.batch = opt_.base.batch;
    bin.cores = cores;
    bin.step_s = opt_.base.step_s;
    bin.predicted_au = rec.best.au;
    bin.target_au = opt_.target_au;
    bin.files_layout = best_set->ds->layout() == Layout::kFiles;
    const BoundReport bound = judge_bound(bin);
    if (!rec.pytorch.empty()) apply_bound(rec, bound, opt_.target_au);
    const Labels blabels{{"layout", rec.best.layout.empty() ? to_string(best_set->ds->layout()) : rec.best.layout}};
    add_metric(r, "consumer_demand", bound.demand_sps, blabels);

    Json notes = Json::array();
    for (const auto& n : rec.notes) notes.push_back(n);
    Json ceilings{{"storage_samples_per_s", bound.storage_sps},
                  {"loader_samples_per_s", modelled ? Json(finite_or(bound.loader_sps, 0)) : Json(nullptr)},
                  {"loader_cpu_model_samples_per_s", modelled ? Json(finite_or(bound.loader_cpu_sps, 0)) : Json(nullptr)},
                  {"loop_samples_per_s", modelled ? Json(finite_or(bound.loop_sps, 0)) : Json(nullptr)},
                  {"demand_samples_per_s", bound.demand_sps},
                  {"cores", cores},
                  {"loader_workers", max_workers}};
    Json recommendation{{"reached", rec.reached},
                        {"layout", rec.best.layout},
                        {"num_workers", rec.best.workers},
                        {"prefetch_factor", rec.best.prefetch},
                        {"batch_size", rec.batch},
                        {"pin_memory", rec.pin_memory},
                        {"pack_into_shards", rec.pack_shards},
                        {"au", rec.best.au},
                        {"bound", rec.bound.empty() ? Json(nullptr) : Json(rec.bound)},
                        {"advice", rec.advice},
                        {"pytorch", rec.pytorch},
                        {"ceilings", ceilings},
                        {"model", modelled ? cpu_json(best_set->cpu, preset->name, collate) : Json(nullptr)},
                        {"notes", notes}};

    // The three numbers side by side, then what binds.
    if (modelled)
      std::snprintf(line, sizeof line,
                    "\nbounds (samples/s): storage %.0f (native reader) | loader %.0f (modelled, %zu workers, %u "
                    "cores; the loop takes at most %.0f with the receive inline) | step demand %.0f (%zu per %.0f "
                    "ms)\n",
                    bound.storage_sps, finite_or(bound.loader_sps, 0), max_workers, cores,
                    finite_or(bound.loop_sps, 0), bound.demand_sps, opt_.base.batch, opt_.base.step_s * 1e3);
    else
      std::snprintf(line, sizeof line, "\nbounds (samples/s): storage %.0f (native reader) | step demand %.0f (%zu per %.0f ms)\n",
                    bound.storage_sps, bound.demand_sps, opt_.base.batch, opt_.base.step_s * 1e3);
    ctx.log << line;
    if (!rec.bound.empty()) ctx.log << "bound: " << rec.bound << ": " << rec.advice << "\n";

    // --peer torch: the real DataLoader at the recommended setting and its neighbours.
    Json peer_json;
    if (opt_.peer == "torch" && !rec.pytorch.empty()) {
      PeerRequest req;
      req.python = opt_.python;
      req.ds = best_set->ds.get();
      req.base = opt_.base;
      req.collate = collate;
      const double mean_bytes =
          best_set->ds->samples() ? static_cast<double>(best_set->ds->total_bytes()) / best_set->ds->samples() : 0;
      // The peer reads for real; what the model adds beyond a plain read is burnt in its workers.
      req.burn_us = modelled ? std::max(0.0, best_set->cpu.sample_cpu_s * 1e6 -
                                                 python_read_us(mean_bytes, collate, opt_.base.batch))
                             : 0.0;
      req.seconds = opt_.seconds_per_point;
      req.pin_memory = pin_thread;
      req.layout = rec.best.layout;
      req.workers = rec.best.workers;
      req.prefetch = rec.best.prefetch;
      req.worker_list = workers;
      req.prefetch_list = opt_.prefetch;
      // A setting the sweep skipped is measured now, so each has its prediction.
      auto predict = [&](std::size_t w, std::size_t p) {
        for (const auto& pt : points)
          if (pt.layout == rec.best.layout && pt.workers == w && pt.prefetch == p) return pt.ok ? pt.au : -1.0;
        if (no_time_for(2 * opt_.seconds_per_point + 30)) return -1.0;
        const SweepPoint pt = measure(*best_set, w, p);
        return pt.ok ? pt.au : -1.0;
      };
      peer_json = confirm_with_torch(ctx, r, req, predict, &out_of_time);
    } else if (opt_.peer == "torch") {
      peer_json = Json{{"name", "torch"}, {"status", "skipped"}, {"reason", "no setting ran without an error"}};
    }

    if (modelled) {
      recommendation["model"]["calibration_us"] = cal_us;
      recommendation["model"]["calibration_ref_us"] = calibration_ref_us();
      recommendation["model"]["cpu_factor"] = cpu_factor;
      recommendation["model"]["pin_memory_thread"] = pin_thread;
    }
    r.data = Json{{"points", rows}, {"recommendation", recommendation}, {"stopped_at_deadline", out_of_time}};
    if (!peer_json.is_null()) r.data["peer"] = peer_json;
    char obs[240], exp[96];
    std::snprintf(obs, sizeof obs, "AU %.1f %% with %zu workers, prefetch %zu (%s)%s%s", 100 * rec.best.au,
                  rec.best.workers, rec.best.prefetch, rec.best.layout.c_str(), rec.bound.empty() ? "" : "; bound: ",
                  rec.bound.c_str());
    std::snprintf(exp, sizeof exp, "AU >= %.0f %% at %.0f ms per batch", 100 * opt_.target_au, opt_.base.step_s * 1e3);
    Check& c = add_check(r, "io.sweep", rec.reached ? Status::kPass : Status::kWarn, obs, exp,
                         rec.reached ? "" : rec.notes.front(), rec.reached ? "" : "io.starved");
    c.detail = rec.pytorch;
    ctx.log << "\nrecommendation: " << rec.pytorch << "\n";
    char au_line[160];
    std::snprintf(au_line, sizeof au_line, "  predicted AU %.1f %% (%s), bound: %s\n", 100 * rec.best.au,
                  modelled ? "the modelled PyTorch DataLoader, measured" : "the native loader, measured",
                  rec.bound.empty() ? "-" : rec.bound.c_str());
    ctx.log << au_line;
    ctx.log << "  pack into shards: " << (rec.pack_shards ? "yes" : "no") << "\n";
    for (const auto& n : rec.notes) ctx.log << "  " << n << "\n";
    if (out_of_time) ctx.log << "  (the sweep stopped at the deadline; larger settings were not measured)\n";
  });
}

}  // namespace nodeprobe::io
