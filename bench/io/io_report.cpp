#include "io_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "nodeprobe/stats.h"
#include "windows.h"

namespace nodeprobe::io {
namespace {

double finite(double v) { return std::isfinite(v) ? v : 0.0; }

std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * f);
  return buf;
}

}  // namespace

Labels run_axes(const std::vector<std::string>& axes, const Dataset& ds, const LoaderConfig& cfg) {
  Labels out;
  for (const auto& a : axes) {
    if (a == "layout") out[a] = to_string(ds.layout());
    else if (a == "method") out[a] = to_string(cfg.method);
    else if (a == "cache") out[a] = to_string(cfg.cache);  // as requested: what was observed is in data
    else if (a == "workers") out[a] = std::to_string(cfg.workers);
    else if (a == "prefetch") out[a] = std::to_string(cfg.prefetch);
    else throw std::logic_error("io: no axis " + a);
  }
  return out;
}

Stats sample_stats(const std::vector<double>& samples, double value) {
  Stats st = compute_stats(samples);
  return st.n > 0 ? st : compute_stats({value});
}

void add_run_metrics(ProbeResult& r, const LoaderConfig& cfg, const LoaderResult& res, const Labels& axes,
                     bool full) {
  const double t = res.elapsed_s > 0 ? res.elapsed_s : 1e-9;
  const double n = static_cast<double>(res.samples);
  const bool step = cfg.step_s > 0 && res.consumer.batches > 1;
  const WindowSamples win = window_samples(res, step);
  const double sps = finite(n / t), mbs = finite(static_cast<double>(res.bytes) / t / 1e6);
  add_metric(r, "samples_per_s", sps, sample_stats(win.samples_per_s, sps), axes);
  add_metric(r, "throughput", mbs, sample_stats(win.mb_per_s, mbs), axes);
  if (step) {
    const WaitSummary w = summarize(res.consumer);
    add_metric(r, "data_wait_fraction", finite(w.wait_fraction), sample_stats(win.wait_fraction, w.wait_fraction),
               axes);
    add_metric(r, "au", finite(w.au), sample_stats(win.au, w.au), axes);
  }
  if (!res.batch_latency_s.empty()) {
    std::vector<double> ms;
    ms.reserve(res.batch_latency_s.size());
    for (double v : res.batch_latency_s) ms.push_back(v * 1e3);
    if (full) add_sampled_metric(r, "batch_latency_p50", ms, axes);
    std::sort(ms.begin(), ms.end());
    const double p99 = percentile_sorted(ms, 0.99);
    add_metric(r, "batch_latency_p99", p99, sample_stats(win.latency_p99_ms, p99), axes);
  }
  if (res.samples > 0) {
    const double cpu = finite(res.cpu_s / n * 1e6);
    add_metric(r, "cpu_per_sample", cpu, sample_stats(win.cpu_us_per_sample, cpu), axes);
  }
  if (full) {
    std::vector<double> first_ms;
    for (double s : res.epoch_first_wait_s) first_ms.push_back(finite(s * 1e3));
    const Stats first = sample_stats(first_ms, finite(res.consumer.first_wait_s * 1e3));
    add_metric(r, "first_batch_wait", first.median, first, axes);
    add_metric(r, "peak_rss", static_cast<double>(res.peak_rss_kb) * 1024 / 1e6, axes);
  }
  if (res.pin.device && res.h2d_s > 0) {
    const double gbs = static_cast<double>(res.h2d_bytes) / res.h2d_s / 1e9;
    add_metric(r, "h2d_throughput", gbs, sample_stats(win.h2d_gb_s, gbs), axes);
  }
  if (!full) return;
  for (std::size_t w = 0; w < res.workers.size(); ++w) {
    Labels l = axes;
    l["worker"] = std::to_string(w);
    const double v = finite(static_cast<double>(res.workers[w].samples) / t);
    add_metric(r, "worker_samples_per_s", v,
               sample_stats(w < win.worker_samples_per_s.size() ? win.worker_samples_per_s[w] : std::vector<double>{}, v),
               l);
  }
}

double add_rate_metric(ProbeResult& r, const std::string& name, const LoaderResult& res, const Labels& labels) {
  const double sps = res.elapsed_s > 0 ? static_cast<double>(res.samples) / res.elapsed_s : 0.0;
  add_metric(r, name, sps, sample_stats(window_samples(res, false).samples_per_s, sps), labels);
  return sps;
}

void add_write_metric(ProbeResult& r, const PrepareResult& p, const Labels& axes) {
  const double mbs = p.seconds > 0 ? static_cast<double>(p.bytes) / p.seconds / 1e6 : 0;
  add_metric(r, "write_throughput", mbs, sample_stats(p.window_mb_per_s, mbs), axes);
}

std::map<std::string, std::string> mount_environment(const MountInfo& m) {
  if (m.mount_point.empty()) return {};
  return {{"data.mount_point", m.mount_point}, {"data.fs_type", m.fs_type}, {"data.mount_options", m.options}};
}

std::string run_name(const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res) {
  return std::string(to_string(ds.layout())) + "/" + to_string(cfg.method) + "/" +
         (res.cache_label.empty() ? to_string(cfg.cache) : res.cache_label);
}

void add_integrity_check(ProbeResult& r, std::uint64_t samples, std::uint64_t bad, const std::string& first_bad,
                         const std::string& what) {
  const char* expected = "every record is the sample the index names, complete";
  if (bad == 0) {
    add_check(r, "io.data_integrity", Status::kPass, std::to_string(samples) + " records verified (" + what + ")",
              expected);
    return;
  }
  Check& c = add_check(r, "io.data_integrity", Status::kFail,
                       std::to_string(bad) + " of " + std::to_string(samples) + " records wrong (" + what + ")",
                       expected, "check the storage (dmesg for IO errors); then nodeprobe-io clean and prepare again");
  c.detail = "first: " + first_bad;
}

void add_cache_check(ProbeResult& r, const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res,
                     const MountInfo& mount) {
  if (cfg.cache != CacheMode::kCold || res.cache_label != "cold-unevictable") return;
  Check& c = add_check(r, "io.cache_state", Status::kWarn,
                       pct(res.resident_fraction) + " of the dataset stayed in memory after eviction",
                       "cold reads come from storage",
                       "put --dir on the storage under test (not tmpfs); dirty pages need a sync first");
  c.detail = memory_backed(mount.fs_type) ? ds.dir() + " is on " + mount.fs_type + " (memory-backed): nothing to evict"
                                          : "posix_fadvise(DONTNEED) left the pages cached";
}

void add_au_check(ProbeResult& r, const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res,
                  double target_au) {
  if (cfg.step_s <= 0 || res.consumer.batches < 2) return;
  const WaitSummary w = summarize(res.consumer);
  char obs[160], exp[64];
  std::snprintf(obs, sizeof obs, "AU %.1f %% (data wait %.1f %%) at %.0f ms per batch of %zu (%s, %zu workers)",
                100 * w.au, 100 * w.wait_fraction, cfg.step_s * 1e3, cfg.batch, run_name(ds, cfg, res).c_str(),
                cfg.workers);
  std::snprintf(exp, sizeof exp, "AU >= %.0f %%", 100 * target_au);
  const bool ok = w.au >= target_au;
  add_check(r, "io.starved", ok ? Status::kPass : Status::kWarn, obs, exp,
            ok ? "" : "raise num_workers / prefetch_factor, pin_memory=True, pack small files into shards "
                      "(find the smallest setting: nodeprobe-io sweep --dir " + ds.dir() + ")",
            "io.starved");
}

Json mount_json(const MountInfo& m) {
  return Json{{"mount_point", m.mount_point}, {"fs_type", m.fs_type}, {"source", m.source}, {"options", m.options}};
}

Json config_json(const LoaderConfig& c) {
  return Json{{"workers", c.workers},       {"batch", c.batch},
              {"prefetch", c.prefetch},     {"epochs", c.epochs},
              {"seed", c.seed},             {"shuffle", c.shuffle},
              {"drop_last", c.drop_last},   {"method", to_string(c.method)},
              {"cache", to_string(c.cache)}, {"drop_caches", c.drop_caches},
              {"step_ms", c.step_s * 1e3},  {"max_seconds", c.max_seconds},
              {"pin", to_string(c.pin)},       {"dispatch", to_string(c.dispatch)}};
}

Json run_data(const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res, const MountInfo& mount) {
  const Marker& m = ds.marker();
  Json workers = Json::array();
  for (std::size_t w = 0; w < res.workers.size(); ++w) {
    const auto& s = res.workers[w];
    workers.push_back(Json{{"worker", w},
                           {"samples", s.samples},
                           {"batches", s.batches},
                           {"bytes", s.bytes},
                           {"busy_s", s.busy_s},
                           {"cpu_s", s.cpu_s},
                           {"samples_per_s", res.elapsed_s > 0 ? static_cast<double>(s.samples) / res.elapsed_s : 0.0}});
  }
  const WaitSummary w = summarize(res.consumer);
  return Json{
      {"dataset", Json{{"dir", ds.dir()},
                       {"layout", to_string(ds.layout())},
                       {"samples", m.samples},
                       {"shards", m.shards},
                       {"bytes", m.bytes},
                       {"size_mean", m.size_mean},
                       {"size_spread_pct", m.size_spread_pct},
                       {"align", m.align},
                       {"mount", mount_json(mount)}}},
      {"cache", Json{{"requested", to_string(cfg.cache)},
                     {"observed", res.cache_label},
                     {"resident_fraction", res.resident_fraction},
                     {"prep_s", res.prep_s}}},
      {"pin", Json{{"kind", res.pin.kind}, {"note", res.pin.note}, {"device", res.pin.device},
                   {"device_name", res.pin.device_name}}},
      {"staging_bytes", res.staging_bytes},
      {"staging_bytes_per_sample", res.slot_sample_bytes},
      {"epochs_requested", cfg.epochs},
      {"epochs_done", res.epochs_done},
      {"stop_reason", res.stop_reason},
      {"error", res.error},
      {"samples", res.samples},
      {"bytes", res.bytes},
      {"elapsed_s", res.elapsed_s},
      {"cpu_s", res.cpu_s},
      {"consumer", Json{{"batches", res.consumer.batches},
                        {"wait_s", res.consumer.wait_s},
                        {"compute_s", res.consumer.compute_s},
                        {"first_wait_s", res.consumer.first_wait_s},
                        {"wait_fraction", w.wait_fraction},
                        {"au", w.au}}},
      {"workers", workers},
      {"bad_samples", res.bad_samples},
      {"first_bad", res.first_bad},
      {"peak_rss_bytes", res.peak_rss_kb * 1024L},
      {"h2d_bytes", res.h2d_bytes},
      {"h2d_s", res.h2d_s}};
}

}  // namespace nodeprobe::io
