#pragma once
/// The probe interface (after nvbandwidth's testcase.h): a key, a description,
/// a "can I run here?" filter whose negative answer is a first-class skip, and
/// a run that fills a ProbeResult.

#include <iosfwd>
#include <string>

#include "nodeprobe/clock.h"
#include "nodeprobe/fs_root.h"
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

  /// Seconds left before the deadline (a large number when there is none);
  /// 0 once the run is told to stop (stop.h).
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

/// Adds a metric and returns it for further labelling.
Metric& add_metric(ProbeResult& r, std::string name, double value, std::string unit,
                   Better better = Better::kHigher,
                   std::map<std::string, std::string> labels = {});

/// Adds a check.
Check& add_check(ProbeResult& r, std::string id, Status status, std::string observed,
                 std::string expected, std::string fix = {}, std::string finding = {});

}  // namespace nodeprobe
