// sweep: the workers x prefetch grid and the recommendation.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <ostream>

#include "io_report.h"
#include "probes.h"
#include "recommend.h"
#include "windows.h"

namespace nodeprobe::io {
namespace {

Json point_json(const SweepPoint& p, double seconds, const std::string& error) {
  return Json{{"layout", p.layout},     {"workers", p.workers},       {"prefetch", p.prefetch},
              {"au", p.au},             {"wait_fraction", p.wait_fraction},
              {"samples_per_s", p.samples_per_s}, {"seconds", seconds}, {"error", error}};
}

}  // namespace

void SweepProbe::run(ProbeContext& ctx, ProbeResult& r) {
  r.config = config_json(opt_.base);
  r.config["dirs"] = opt_.dirs;
  r.config["target_au"] = opt_.target_au;
  r.config["seconds_per_point"] = opt_.seconds_per_point;
  r.config["prefetch_list"] = opt_.prefetch;
  declare_metrics(r, run_metrics(kSweepAxes));
  guarded(ctx, r, [&] {
    if (opt_.base.step_s <= 0) throw InputError("--step-ms must be above 0: AU needs a step time to compare with");
    if (opt_.dirs.empty()) throw InputError("--dir is required");
    const auto cores = static_cast<unsigned>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    const auto workers = opt_.workers.empty() ? default_worker_list(cores) : opt_.workers;
    std::vector<SweepPoint> points;
    Json rows = Json::array();
    bool gpu = false, out_of_time = false;
    // Every dataset is checked before the first measurement.
    std::vector<std::unique_ptr<Dataset>> datasets;
    for (const auto& dir : opt_.dirs) {
      datasets.push_back(std::make_unique<Dataset>(dir));
      if (auto why = method_unavailable(opt_.base.method, *datasets.back()); !why.empty())
        throw MethodUnavailable(why);
    }
    char line[256];
    std::snprintf(line, sizeof line, "%-7s %7s %8s %7s %10s %10s\n", "layout", "workers", "prefetch", "AU",
                  "data wait", "samples/s");
    ctx.log << line;
    for (const auto& dsp : datasets) {
      Dataset& ds = *dsp;
      for (std::size_t w : workers) {
        bool row_reached = false;
        for (std::size_t p : opt_.prefetch) {
          if (ctx.deadline_s > 0 && ctx.remaining_s() < opt_.seconds_per_point + 2) {
            out_of_time = true;
            break;
          }
          LoaderConfig cfg = opt_.base;
          cfg.workers = w;
          cfg.prefetch = p;
          cfg.max_seconds = opt_.seconds_per_point;
          cfg.epochs = 1000000;  // time-bounded: max_seconds ends each point
          const double budget = ctx.deadline_s > 0 ? std::max(0.1, ctx.remaining_s() - 1.0) : 0.0;
          const LoaderResult res = run_loader(ds, cfg, ctx.clock, budget);
          gpu = gpu || res.pin.device;
          const WaitSummary s = summarize(res.consumer);
          SweepPoint pt{to_string(ds.layout()), w, p, s.au, s.wait_fraction,
                        res.elapsed_s > 0 ? static_cast<double>(res.samples) / res.elapsed_s : 0.0,
                        res.error.empty() && res.bad_samples == 0};
          points.push_back(pt);
          rows.push_back(point_json(pt, res.elapsed_s, res.error.empty() ? res.first_bad : res.error));
          const Labels axes = run_axes(kSweepAxes, ds, cfg);
          const WindowSamples win = window_samples(res, true);
          add_metric(r, "au", pt.au, sample_stats(win.au, pt.au), axes);
          add_metric(r, "samples_per_s", pt.samples_per_s, sample_stats(win.samples_per_s, pt.samples_per_s), axes);
          std::snprintf(line, sizeof line, "%-7s %7zu %8zu %6.1f%% %9.1f%% %10.0f%s\n", pt.layout.c_str(), w, p,
                        100 * pt.au, 100 * pt.wait_fraction, pt.samples_per_s, pt.ok ? "" : "  (error)");
          ctx.log << line;
          if (!res.error.empty()) ctx.log << "  " << res.error << "\n";
          row_reached = row_reached || (pt.ok && pt.au >= opt_.target_au);
        }
        if (out_of_time || (row_reached && !opt_.exhaustive)) break;
      }
      if (out_of_time) break;
    }
    const Recommendation rec = recommend(points, opt_.target_au, opt_.base.batch, cores, gpu);
    Json notes = Json::array();
    for (const auto& n : rec.notes) notes.push_back(n);
    r.data = Json{{"points", rows},
                  {"recommendation",
                   Json{{"reached", rec.reached},
                        {"layout", rec.best.layout},
                        {"num_workers", rec.best.workers},
                        {"prefetch_factor", rec.best.prefetch},
                        {"au", rec.best.au},
                        {"pin_memory", rec.pin_memory},
                        {"pack_into_shards", rec.pack_shards},
                        {"pytorch", rec.pytorch},
                        {"notes", notes}}},
                  {"stopped_at_deadline", out_of_time}};
    char obs[200], exp[96];
    std::snprintf(obs, sizeof obs, "AU %.1f %% with %zu workers, prefetch %zu (%s)", 100 * rec.best.au,
                  rec.best.workers, rec.best.prefetch, rec.best.layout.c_str());
    std::snprintf(exp, sizeof exp, "AU >= %.0f %% at %.0f ms per batch", 100 * opt_.target_au, opt_.base.step_s * 1e3);
    Check& c = add_check(r, "io.sweep", rec.reached ? Status::kPass : Status::kWarn, obs, exp,
                         rec.reached ? "" : rec.notes.front(), rec.reached ? "" : "io.starved");
    c.detail = rec.pytorch;
    ctx.log << "\nrecommendation: " << rec.pytorch << "\n";
    ctx.log << "  pack into shards: " << (rec.pack_shards ? "yes" : "no") << "\n";
    for (const auto& n : rec.notes) ctx.log << "  " << n << "\n";
    if (out_of_time) ctx.log << "  (the sweep stopped at the deadline; larger settings were not measured)\n";
  });
}

}  // namespace nodeprobe::io
