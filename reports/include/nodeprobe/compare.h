#pragma once
/// Before/after comparison of two reports (after nvbench's compare-robust and
/// google/benchmark's compare.py): metrics matched by (probe, name, labels),
/// each judged better / worse / same / ambiguous from both sides' spread and a
/// threshold, honouring the metric's direction; metrics present on one side
/// only; the environment diff that explains a change.

#include <map>
#include <string>
#include <vector>

#include "nodeprobe/metric_select.h"
#include "nodeprobe/report.h"

namespace nodeprobe {

enum class Verdict { kBetter, kWorse, kSame, kAmbiguous, kInvalid };

/// "better", "worse", "same", "ambiguous", "n/a".
std::string_view to_string(Verdict v);

/// One side of a comparison: a centre and the interval the measurement varied over.
struct Side {
  double center = 0;
  double lo = 0, hi = 0;     ///< equal to center when no spread is known
  bool has_spread = false;
  std::string spread;        ///< "p5..p95", "min..max", "+-stddev" or "none"
  std::size_t n = 1;         ///< samples behind the centre
};

/// The centre (stats median when present, else value) and the spread of a metric:
/// p5..p95 when there are at least 2 samples, else min..max, else +-stddev.
Side side_of(const Metric& m);

struct CompareOptions {
  double threshold_pct = 5;  ///< smallest change that counts
  /// "same" needs both sides' relative half-spread <= noise_factor x threshold;
  /// noisier pairs under the threshold are "ambiguous".
  double noise_factor = 2;
};

/// The decision for one matched metric.
struct Judgement {
  Verdict verdict = Verdict::kInvalid;
  double delta_pct = 0;  ///< (after - before) / |before| x 100; +-inf when before is 0
  std::string reason;
};

/// Judges one pair. `better` gives the direction (kUnknown: a change beyond the
/// threshold is ambiguous).
Judgement judge(const Side& before, const Side& after, Better better, const CompareOptions& opt);

struct MetricDiff {
  std::string probe, name, unit;
  Labels labels;
  Better better = Better::kHigher;
  int occurrence = 0;  ///< 0 for the first (probe, name, labels), 1 for a repeat ...
  Side before, after;
  Judgement judgement;
};

/// A metric present in one report only.
struct OneSided {
  std::string probe, name, unit;
  Labels labels;
  double value = 0;
};

/// One environment field that differs ("host", "env", "limits", "config:<probe>", "tool").
struct FieldDiff {
  std::string section, key, before, after;
};

/// A probe or check whose status changed.
struct StatusChange {
  std::string probe, check;  ///< check empty for the probe's own status
  Status before = Status::kUnknown, after = Status::kUnknown;
  bool regression = false;  ///< moved towards fail/error
};

struct RunSummary {
  std::string origin, label, run_id, started, hostname, instance_type;
  Status verdict = Status::kUnknown;
};

struct Comparison {
  CompareOptions options;
  RunSummary before, after;
  std::vector<MetricDiff> metrics;
  std::vector<OneSided> only_before, only_after;
  std::vector<FieldDiff> environment;
  std::vector<StatusChange> statuses;

  std::size_t count(Verdict v) const;
  bool any_worse() const { return count(Verdict::kWorse) > 0; }
};

/// Compares `after` against `before`. `origin_*` name the inputs in output.
Comparison compare_reports(const Report& before, const Report& after, const CompareOptions& opt,
                           const std::string& origin_before = "before",
                           const std::string& origin_after = "after");

/// The environment diff alone: host versions, instance type, allowlisted env,
/// the limits probe's observed values and each common probe's config.
std::vector<FieldDiff> environment_diff(const Report& before, const Report& after);

}  // namespace nodeprobe
