#pragma once
/// The probe interface (after nvbandwidth's testcase.h): a key, a description,
/// a "can I run here?" filter whose negative answer is a first-class skip, and
/// a run that fills a ProbeResult.

#include <iosfwd>
#include <string>
#include <vector>

#include "nodeprobe/clock.h"
#include "nodeprobe/fs_root.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/report.h"

namespace nodeprobe {

/// What a probe may use while it runs. Everything hardware-facing goes
/// through these seams so tests can substitute fixtures and fakes.
struct ProbeContext {
  const FsRoot& fs;
  Clock& clock;
  std::ostream& log;        ///< human diagnostics (stderr)
  bool verbose = false;
  double deadline_s = 0;    ///< clock time by which the probe must finish (0: none)
  const HostInfo* host = nullptr;

  /// Seconds left before the deadline (a large number when there is none).
  double remaining_s() const;
  /// Writes a line to `log` when verbose.
  void debug(const std::string& line) const;
};

class Probe {
 public:
  virtual ~Probe() = default;
  /// Stable name used in reports and on the command line ("limits", "gemm", ...).
  virtual std::string key() const = 0;
  /// One line for --list.
  virtual std::string description() const = 0;
  /// "" when the probe applies here; otherwise why not (the probe is then skipped).
  virtual std::string waive_reason(const ProbeContext& /*ctx*/) const { return {}; }
  /// Measures and judges. May set result.status; when left kUnknown the harness
  /// derives it from the checks. Exceptions become status error with their message.
  virtual void run(ProbeContext& ctx, ProbeResult& result) = 0;
  /// Host facts this probe knows (library versions, GPUs); called after run.
  virtual void fill_host(HostInfo& /*host*/) const {}
};

/// Status derived from checks: their aggregate, or pass when there are none.
Status status_from_checks(const ProbeResult& r);

/// Declares the metrics a probe reports: its descriptor table, written once
/// next to the probe (metric_descriptor.h). Names already declared are kept.
void declare_metrics(ProbeResult& r, const std::vector<MetricDescriptor>& table);

/// Adds metric `name`, declared before: unit and direction come from its
/// descriptor, and `axes` must be exactly the descriptor's axes; a measured
/// metric needs stats (the overload below). Anything else is a programming
/// error: std::logic_error, which the probe boundary reports as `error`.
Metric& add_metric(ProbeResult& r, const std::string& name, double value, Labels axes = {});
/// Adds a metric with the stats of its samples.
Metric& add_metric(ProbeResult& r, const std::string& name, double value, const Stats& stats,
                   Labels axes = {});
/// Adds a measured metric from its samples: value = their median.
Metric& add_sampled_metric(ProbeResult& r, const std::string& name, std::vector<double> samples,
                           Labels axes = {});

/// Adds a check.
Check& add_check(ProbeResult& r, std::string id, Status status, std::string observed,
                 std::string expected, std::string fix = {}, std::string finding = {});

}  // namespace nodeprobe
