#pragma once
/// Before/after comparison of two reports (after nvbench's compare-robust and
/// google/benchmark's compare.py): metrics paired by (probe, name, axes) as
/// their descriptors declare them, each judged better / worse / same /
/// ambiguous from the change, a threshold and both sides' spread, honouring
/// the metric's direction; metrics present on one side only; the settings and
/// environment that changed, shown as the likely cause next to what moved.

#include <map>
#include <optional>
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

/// The centre (stats median when present, else value) and the interval the
/// samples span: p5..p95 from 20 samples up, min..max below (or when p5 and
/// p95 coincide). A side with fewer than 2 samples has no spread.
Side side_of(const Metric& m);

struct CompareOptions {
  double threshold_pct = 5;  ///< smallest change that counts (finite, >= 0)
};

/// "" when `opt` is usable, else why not (one line): a NaN, infinite or
/// negative threshold.
std::string check_options(const CompareOptions& opt);

/// The decision for one matched metric.
struct Judgement {
  Verdict verdict = Verdict::kInvalid;
  double delta_pct = 0;  ///< (after - before) / |before| x 100; +-inf when before is 0
  std::string reason;
};

/// Judges one pair:
/// - |change| <= threshold: same;
/// - a model's output (kind model): n/a, a prediction is not a measurement;
/// - no direction: ambiguous;
/// - a count (exact, no noise): better or worse by the threshold alone;
/// - otherwise better / worse only when both sides have a spread and their
///   intervals do not overlap, and the change exceeds the descriptor's
///   measured run-to-run factor; ambiguous when they overlap, a spread is
///   missing or the change is within what two unchanged runs differ by.
Judgement judge(const Side& before, const Side& after, Better better, const MetricDescriptor& d,
                const CompareOptions& opt);

struct MetricDiff {
  std::string probe, name, unit;
  Labels labels;  ///< the axes: the metric's identity within the probe
  MetricDescriptor descriptor;
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
  MetricDescriptor descriptor;
};

/// One environment field that differs. section: "host", "env", "tool",
/// "config:<probe>" (settings the user chose) or "environment:<probe>" (node
/// settings the probe observed).
struct FieldDiff {
  std::string section, key, before, after;
  std::string probe;  ///< the probe it belongs to ("" for host, env and tool: every probe)
};

/// The settings and environment that changed around one probe, and the
/// metrics of that probe that moved (better or worse): the likely cause next
/// to its effect.
struct Cause {
  std::string probe;
  std::vector<const FieldDiff*> changes;   ///< into Comparison::environment
  std::vector<const MetricDiff*> moved;    ///< into Comparison::metrics
  /// Other work on the host during each side's run of the probe (when measured).
  std::optional<HostActivity> before_activity, after_activity;
};

/// "other processes used 1.6 of 2 CPUs during the after run (0.1 before)"
/// when either side's host was busy (other work on a quarter of its CPUs or
/// more, or the hypervisor taking a tenth) or the two differ by that much;
/// empty otherwise. A probe slowed by a neighbour is no node that got worse.
std::string activity_text(const std::optional<HostActivity>& before, const std::optional<HostActivity>& after);

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
  /// Per probe in both reports: each side's host activity.
  std::map<std::string, std::pair<std::optional<HostActivity>, std::optional<HostActivity>>> activity;
  std::vector<StatusChange> statuses;

  std::size_t count(Verdict v) const;
  bool any_worse() const { return count(Verdict::kWorse) > 0; }
  /// Per probe with a moved metric or a changed setting: what changed and what moved.
  /// Host-wide changes (host, env, tool) are listed with every such probe.
  std::vector<Cause> causes() const;
};

/// Compares `after` against `before`. `origin_*` name the inputs in output.
Comparison compare_reports(const Report& before, const Report& after, const CompareOptions& opt,
                           const std::string& origin_before = "before",
                           const std::string& origin_after = "after");

/// The environment diff alone: host versions, instance type, allowlisted env,
/// each common probe's config (settings) and environment (what it observed).
/// Run-specific values are not in either (probes keep temporary paths and
/// deadlines in data), and the run's label, id and argv are never compared.
std::vector<FieldDiff> environment_diff(const Report& before, const Report& after);

}  // namespace nodeprobe
