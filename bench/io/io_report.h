#pragma once
/// Turning loader runs into report content: labelled metrics, checks and the
/// probe's `data` rows. Shared by read, sweep and accept, so a metric means
/// the same thing wherever it appears.

#include <map>
#include <ostream>
#include <string>

#include "cache.h"
#include "loader.h"
#include "prepare.h"
#include "io_metrics.h"
#include "nodeprobe/probe.h"

namespace nodeprobe::io {

using Labels = std::map<std::string, std::string>;

/// The values of `axes` for a run (layout, method, cache as requested,
/// workers, prefetch); io_metrics.h names which axes each probe uses.
Labels run_axes(const std::vector<std::string>& axes, const Dataset& ds, const LoaderConfig& cfg);

/// The stats of `samples`, or of the single `value` when there are none.
Stats sample_stats(const std::vector<double>& samples, double value);

/// samples/s, MB/s, data-wait fraction and AU (when there is a step time),
/// batch latency p50/p99, first-batch wait, CPU per sample, peak RSS, H2D
/// bandwidth (with a GPU), each measured one with its spread: over windows of
/// batches (windows.h), over batches for p50, over epochs for first-batch wait. `full`: also p50 latency, first-batch wait, peak RSS
/// and one samples/s metric per worker; accept keeps the brief set.
void add_run_metrics(ProbeResult& r, const LoaderConfig& cfg, const LoaderResult& res,
                     const Labels& axes, bool full);

/// Samples/s of a run (samples delivered over its measured time) as metric
/// `name`, its spread over the run's windows; returns the value.
double add_rate_metric(ProbeResult& r, const std::string& name, const LoaderResult& res, const Labels& labels);

/// write_throughput of a prepared dataset (spread: its windows, each written and synced).
void add_write_metric(ProbeResult& r, const PrepareResult& p, const Labels& axes);

/// The data directory's mount (environment of the measurement).
std::map<std::string, std::string> mount_environment(const MountInfo& m);

/// io.data_integrity: fail when any record was not the sample the index names.
void add_integrity_check(ProbeResult& r, std::uint64_t samples, std::uint64_t bad, const std::string& first_bad,
                         const std::string& what);
/// io.cache_state: warn when cold reads were asked for and nothing could be evicted.
void add_cache_check(ProbeResult& r, const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res,
                     const MountInfo& mount);
/// io.starved: AU against the target (only with a step time and two batches or more).
void add_au_check(ProbeResult& r, const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res,
                  double target_au);
/// "files/pread/cold".
std::string run_name(const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res);

/// The run's structured details for `data`.
Json run_data(const Dataset& ds, const LoaderConfig& cfg, const LoaderResult& res, const MountInfo& mount);
/// The loader configuration for `config`.
Json config_json(const LoaderConfig& cfg);
Json mount_json(const MountInfo& m);

/// Runs `fn` at the probe boundary: DeadlineError becomes status timeout;
/// DatasetError / InputError / ApiError / anything else become status error with the message as reason (and one
/// line on `log`); MethodUnavailable becomes skip. Results added before the
/// failure stay in the report.
template <typename Fn>
void guarded(ProbeContext& ctx, ProbeResult& r, Fn fn) {
  try {
    fn();
  } catch (const MethodUnavailable& e) {
    r.status = Status::kSkip;
    r.reason = e.what();
    ctx.log << "nodeprobe-io: skipped: " << e.what() << "\n";
  } catch (const DeadlineError& e) {
    r.status = Status::kTimeout;
    r.reason = e.what();
    ctx.log << "nodeprobe-io: " << e.what() << "\n";
  } catch (const std::exception& e) {
    r.status = Status::kError;
    r.reason = e.what();
    ctx.log << "nodeprobe-io: " << e.what() << "\n";
  }
}

}  // namespace nodeprobe::io
