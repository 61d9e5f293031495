// read, prepare and clean: one probe each.
#include <unistd.h>

#include <cstdio>
#include <ostream>

#include "io_report.h"
#include "probes.h"

namespace nodeprobe::io {

std::size_t default_workers() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 1 ? static_cast<std::size_t>(n / 2) : 1;
}

void ReadProbe::run(ProbeContext& ctx, ProbeResult& r) {
  const LoaderConfig& cfg = opt_.cfg;
  r.config = config_json(cfg);
  r.config["dir"] = opt_.dir;
  r.config["target_au"] = opt_.target_au;
  declare_metrics(r, run_metrics({}));
  guarded(ctx, r, [&] {
    Dataset ds(opt_.dir);
    if (auto why = method_unavailable(cfg.method, ds); !why.empty()) throw MethodUnavailable(why);
    const MountInfo mount = mount_of(ctx.fs, ds.dir());
    // Finish one second before the deadline, so the report is ours, not the watchdog's.
    const double budget = ctx.deadline_s > 0 ? std::max(0.1, ctx.remaining_s() - 1.0) : 0.0;
    const LoaderResult res = run_loader(ds, cfg, ctx.clock, budget);
    r.environment = mount_environment(mount);
    add_run_metrics(r, cfg, res, {}, true);
    add_integrity_check(r, res.samples, res.bad_samples, res.first_bad, run_name(ds, cfg, res));
    add_cache_check(r, ds, cfg, res, mount);
    add_au_check(r, ds, cfg, res, opt_.target_au);
    r.data = run_data(ds, cfg, res, mount);
    char line[200];
    std::snprintf(line, sizeof line, "%.2f of %u epochs", res.epochs_done, cfg.epochs);
    if (res.bad_samples > 0)
      ctx.log << "nodeprobe-io: " << res.bad_samples << " wrong records; first: " << res.first_bad << "\n";
    if (!res.error.empty()) {
      r.status = Status::kError;
      r.reason = "read failed after " + std::to_string(res.samples) + " samples (" + line + "): " + res.error +
                 " (partial results kept)";
      ctx.log << "nodeprobe-io: " << r.reason << "\n";
    } else if (res.stop_reason == "deadline") {
      add_check(r, "io.complete", Status::kWarn, std::string("stopped at the deadline after ") + line,
                "every requested epoch", "raise --timeout or lower --epochs");
      // The run did not finish: status timeout (exit 124, DESIGN.md), the
      // measurements of what finished stay.
      r.status = Status::kTimeout;
      r.reason = std::string("stopped at the --timeout deadline after ") + line +
                 "; the measurements that finished are kept";
    }
    ctx.debug("pin: " + res.pin.kind + " (" + res.pin.note + ")");
  });
}

void PrepareProbe::run(ProbeContext& ctx, ProbeResult& r) {
  r.config = Json{{"dir", opt_.dir},           {"files", opt_.samples},       {"size", opt_.size},
                  {"size_spread_pct", opt_.spread_pct}, {"shards", opt_.shards}, {"align", opt_.align},
                  {"seed", opt_.seed},          {"overwrite", opt_.overwrite}, {"space_check", opt_.space_check}};
  declare_metrics(r, prepare_metrics({}));
  guarded(ctx, r, [&] {
    auto cancelled = [&] { return ctx.deadline_s > 0 && ctx.remaining_s() < 1.0; };
    const PrepareResult p = prepare_dataset(opt_, ctx.clock, ctx.log, cancelled);
    add_write_metric(r, p, {});
    r.data = Json{{"dir", opt_.dir},
                  {"layout", to_string(p.marker.layout)},
                  {"samples", p.marker.samples},
                  {"shards", p.marker.shards},
                  {"bytes", p.bytes},
                  {"seconds", p.seconds},
                  {"space_needed_bytes", p.need_bytes},
                  {"space_free_bytes", p.free_bytes},
                  {"created_dir", p.marker.created_dir}};
  });
}

void CleanProbe::run(ProbeContext& ctx, ProbeResult& r) {
  r.config = Json{{"dir", dir_}};
  guarded(ctx, r, [&] {
    const CleanResult c = clean_dataset(dir_);
    Json left = Json::array();
    for (const auto& l : c.left) left.push_back(l);
    r.data = Json{{"dir", dir_}, {"files", c.files}, {"bytes", c.bytes}, {"dir_removed", c.dir_removed}, {"left", left}};
    if (!c.left.empty())
      add_check(r, "io.clean", Status::kWarn,
                std::to_string(c.left.size()) + " entries that nodeprobe-io did not make were left, e.g. " + c.left.front(),
                "only nodeprobe-io files in a dataset directory", "remove them yourself if they are not needed");
  });
}

}  // namespace nodeprobe::io
