// accept: a compact, self-cleaning IO fitness check for `nodeprobe accept`.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>

#include "io_report.h"
#include "nodeprobe/safe_remove.h"
#include "probes.h"

namespace nodeprobe::io {
namespace {

struct Profile {
  std::uint64_t samples;
  std::uint32_t shards;
  std::uint32_t epochs;
  bool all_methods;
};

struct Run {
  Layout layout;
  Method method;
  CacheMode cache;
  bool step;  // with the nominal step time (the AU run)
};

std::vector<Run> plan_runs(bool all_methods) {
  std::vector<Run> runs{{Layout::kFiles, Method::kPread, CacheMode::kWarm, false},
                        {Layout::kFiles, Method::kPread, CacheMode::kCold, true},
                        {Layout::kShards, Method::kPread, CacheMode::kCold, false},
                        {Layout::kShards, Method::kPread, CacheMode::kWarm, false}};
  if (all_methods) {
    for (Method m : {Method::kDirect, Method::kMmap, Method::kUring, Method::kUringDirect})
      runs.push_back({Layout::kShards, m, CacheMode::kCold, false});
    runs.push_back({Layout::kFiles, Method::kUring, CacheMode::kCold, false});
  }
  return runs;
}

void mount_check(ProbeResult& r, const MountInfo& m, const std::string& dir) {
  if (m.mount_point.empty()) {
    add_check(r, "io.mount_options", Status::kSkip, "mount of " + dir + " unknown", "noatime,nodiratime");
    return;
  }
  const std::string opts = "," + m.options + ",";
  const bool strict = opts.find(",strictatime,") != std::string::npos;
  const bool noatime = opts.find(",noatime,") != std::string::npos;
  const std::string observed = m.mount_point + " (" + m.fs_type + "): " +
                               (noatime ? "noatime" : strict ? "strictatime" : "relatime");
  // strictatime turns every read into an inode write; relatime writes atime
  // at most once a day per file, which a training read pattern barely feels.
  Check& c = add_check(r, "io.mount_options", strict ? Status::kWarn : Status::kPass, observed,
                       "noatime,nodiratime (relatime tolerated)",
                       strict ? "mount -o remount,noatime,nodiratime " + m.mount_point +
                                    " and add noatime,nodiratime to its /etc/fstab line"
                              : "",
                       "storage.mount_options");
  if (!noatime && !strict) c.detail = "relatime: atime is written at most daily; noatime removes even that";
}

}  // namespace

void AcceptIoProbe::run(ProbeContext& ctx, ProbeResult& r) {
  const bool full = opt_.profile == "full";
  const Profile prof = full ? Profile{4096, 16, 2, true} : Profile{512, 4, 1, false};
  std::string base = opt_.data_dir;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = t && *t ? t : "/tmp";
  }
  const std::size_t workers = opt_.workers ? opt_.workers : default_workers();
  // The data directory is the run's own temporary place (accept makes a fresh
  // one each run): it goes in data, its mount in environment; config holds settings.
  r.config = Json{{"profile", opt_.profile}, {"samples", prof.samples},
                  {"shards", prof.shards}, {"epochs", prof.epochs},   {"size", 110000},
                  {"workers", workers},    {"batch", opt_.batch},     {"prefetch", opt_.prefetch},
                  {"step_ms", opt_.step_ms}, {"target_au", opt_.target_au},
                  {"min_cold_mb_s", opt_.min_cold_mb_s}};
  declare_metrics(r, run_metrics(kAcceptAxes));
  declare_metrics(r, prepare_metrics({"layout"}));
  guarded(ctx, r, [&] {
    struct stat st {};
    if (::stat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw InputError("--data-dir " + base + ": not an existing directory");
    const MountInfo mount = mount_of(ctx.fs, base);
    r.environment = mount_environment(mount);
    mount_check(r, mount, base);
    const bool in_memory = memory_backed(mount.fs_type);

    // Removed whatever happens: here, on unwinding, or by the stop handlers.
    OwnedTempDir area(base, "nodeprobe-io-accept");
    auto cancelled = [&] { return ctx.deadline_s > 0 && ctx.remaining_s() < 3.0; };
    Json runs = Json::array();
    for (std::uint32_t shards : {0U, prof.shards}) {
      PrepareOptions p;
      p.dir = area.path() + (shards ? "/shards" : "/files");
      p.samples = prof.samples;
      p.shards = shards;
      const PrepareResult pr = prepare_dataset(p, ctx.clock, ctx.log, cancelled);
      add_write_metric(r, pr, {{"layout", to_string(pr.marker.layout)}});
    }

    std::uint64_t verified = 0, bad = 0;
    std::string first_bad, skipped, failure;
    double cold_mb_s = -1;
    for (const Run& run : plan_runs(prof.all_methods)) {
      const std::string name = std::string(to_string(run.layout)) + "/" + to_string(run.method) + "/" + to_string(run.cache);
      if (ctx.deadline_s > 0 && ctx.remaining_s() < 4.0) {
        skipped += (skipped.empty() ? "" : ", ") + name;
        continue;
      }
      Dataset ds(area.path() + (run.layout == Layout::kFiles ? "/files" : "/shards"));
      if (auto why = method_unavailable(run.method, ds); !why.empty()) {
        runs.push_back(Json{{"run", name}, {"skipped", why}});
        continue;
      }
      LoaderConfig cfg;
      cfg.workers = workers;
      cfg.batch = opt_.batch;
      cfg.prefetch = opt_.prefetch;
      // A warm epoch of the quick profile is over in a few milliseconds:
      // eight of them, 40 ms apart, spread its windows over more than one
      // state of the host (~0.3 s more per warm run); cold epochs each
      // re-evict and stay as they are. A/A, bench/compare/run_to_run.sh
      // --runs 8 -- nodeprobe-io accept --profile quick: with three warm
      // epochs back to back warm shards throughput separated in 8 of 28
      // pairs of runs (run-to-run 1.29x, one run's spread 1.19x).
      cfg.epochs = run.cache == CacheMode::kWarm ? 8 * prof.epochs : prof.epochs;
      if (run.cache == CacheMode::kWarm) cfg.epoch_gap_s = 0.04;
      cfg.method = run.method;
      cfg.cache = run.cache;
      cfg.step_s = run.step ? opt_.step_ms / 1e3 : 0;
      cfg.seed = 1;
      const double budget = ctx.deadline_s > 0 ? std::max(0.5, ctx.remaining_s() - 3.0) : 0.0;
      const LoaderResult res = run_loader(ds, cfg, ctx.clock, budget);
      add_run_metrics(r, cfg, res, run_axes(kAcceptAxes, ds, cfg), false);
      if (run.step) add_au_check(r, ds, cfg, res, opt_.target_au);
      verified += res.samples;
      if (res.bad_samples > 0 && bad == 0) first_bad = res.first_bad;
      bad += res.bad_samples;
      Json d = run_data(ds, cfg, res, mount);
      d.erase("dataset");
      d["run"] = name;
      runs.push_back(d);
      if (!res.error.empty()) {
        failure = "read " + name + " failed: " + res.error;
        break;
      }
      if (run.layout == Layout::kShards && run.method == Method::kPread && run.cache == CacheMode::kCold &&
          res.elapsed_s > 0)
        cold_mb_s = static_cast<double>(res.bytes) / res.elapsed_s / 1e6;
    }
    add_integrity_check(r, verified, bad, first_bad, "all runs");

    char obs[160], exp[64];
    std::snprintf(exp, sizeof exp, ">= %.0f MB/s (EBS gp3 baseline)", opt_.min_cold_mb_s);
    if (in_memory) {
      add_check(r, "io.cold_read_throughput", Status::kSkip, base + " is on " + mount.fs_type, exp).detail =
          "memory-backed: cold reads cannot be measured; pass --data-dir on the data volume";
    } else if (cold_mb_s >= 0) {
      std::snprintf(obs, sizeof obs, "%.0f MB/s: cold random reads of ~110 kB records from shards, %zu workers",
                    cold_mb_s, workers);
      const bool ok = cold_mb_s >= opt_.min_cold_mb_s;
      add_check(r, "io.cold_read_throughput", ok ? Status::kPass : Status::kWarn, obs, exp,
                ok ? "" : "check the instance's EBS bandwidth cap, raise gp3 throughput, RAID0 several volumes, "
                          "or stage the dataset on instance-store NVMe",
                "storage.slow");
    }
    if (!skipped.empty())
      add_check(r, "io.complete", Status::kWarn, "runs left out at the deadline: " + skipped, "every run of the profile",
                "raise the deadline or use --profile quick");
    const std::string area_path = area.path();
    const std::string left = area.remove();
    if (!left.empty()) ctx.log << "nodeprobe-io: cleanup: " << left << "\n";
    r.data = Json{{"data_dir", base}, {"mount", mount_json(mount)}, {"runs", runs}, {"cleanup", left.empty() ? "ok" : left}};
    if (!left.empty())
      add_check(r, "io.cleanup", Status::kWarn, left, "the temporary dataset removed",
                "nodeprobe-io clean --dir " + area_path + "/files (and /shards)");
    if (!failure.empty()) throw std::runtime_error(failure);
  });
}

}  // namespace nodeprobe::io
