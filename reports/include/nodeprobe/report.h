#pragma once
/// The report model: plain aggregates mirroring the JSON contract of
/// ../shared/DESIGN.md ("Report contract"). JSON conversion lives in
/// report_json.h; the JSON Schema is reports/schema/report.schema.json.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nodeprobe/status.h"

namespace nodeprobe {

/// Ordered keys so reports read in contract order and diff cleanly.
using Json = nlohmann::ordered_json;

/// A metric's labels: axis name -> value.
using Labels = std::map<std::string, std::string>;

/// Schema identifier written into every report. Readers accept majors
/// kReportSchemaOldestMajor..kReportSchemaMajor (a /1 report has no metric
/// descriptors: see descriptor_of in metric_descriptor.h).
inline constexpr const char* kReportSchema = "nodeprobe.report/2";
inline constexpr int kReportSchemaMajor = 2;
inline constexpr int kReportSchemaOldestMajor = 1;

enum class Better { kHigher, kLower, kUnknown };
enum class Severity { kInfo, kWarn, kError, kUnknown };

/// Sample statistics of repeated measurements.
struct Stats {
  std::size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0, p5 = 0, p95 = 0, stddev = 0;
};

/// What a metric is: measured from repeated samples (carries stats), a count
/// (exact, no spread), derived from measured metrics (a ratio, a percentage of
/// a datasheet figure) or the output of a model (a prediction, never judged).
enum class MetricKind { kMeasured, kCount, kDerived, kModel, kUnknown };

/// How people see a metric: shown value = value x scale in `unit`.
struct MetricDisplay {
  double scale = 1;
  std::string unit;               ///< empty: the metric's own unit
  int decimals = -1;              ///< fixed decimals; -1: three significant digits
  std::optional<double> min, max; ///< axis range in shown units (AU: 0..100 %)
};

/// The chart a metric belongs to. Metrics with the same chart id (from any
/// probe) share one figure; series are the remaining axes.
struct MetricChart {
  std::string id;        ///< "" = not charted
  std::string title;
  std::string kind = "line";  ///< "line" (x = an axis) or "bar" (groups = an axis)
  std::string x;         ///< the axis on x (line) or the grouping axis (bar)
  std::string x_label;
  bool x_log2 = false;   ///< message sizes
  bool x_bytes = false;  ///< tick labels 1K, 64K, 1M
  std::string reference; ///< bar: metric whose value marks each group (datasheet peak)
  std::string best_of;   ///< an axis folded into its best value (GEMM: the best size)
};

/// Whether a metric sums its probe up in one line (verdict table, HTML summary).
struct MetricKey {
  int rank = 0;          ///< 0: not a key number; lower ranks come first
  std::string caption;   ///< "busbw max"
  std::string per;       ///< one key number per value of this axis ("precision")
};

/// A metric's meaning, declared once by its probe (probes[].descriptors).
/// Identity of a metric is (probe, name, axes): axes are the labels a probe
/// varies within one run; settings the user chose live in the probe's config.
struct MetricDescriptor {
  std::string name;
  std::string unit;
  Better better = Better::kHigher;
  MetricKind kind = MetricKind::kMeasured;
  std::vector<std::string> axes;
  std::string title;        ///< short name for people ("AU"); empty: the name
  std::string description;  ///< one line (Prometheus HELP, the HTML table)
  MetricDisplay display;
  MetricChart chart;
  MetricKey key;
  /// Two runs of an unchanged node differ by up to this factor (measured with
  /// bench/compare/run_to_run.sh, cited where it is declared): for metrics
  /// whose samples repeat within one run and share its state, so their spread
  /// is narrower than the run-to-run one. compare judges a change within it
  /// ambiguous. 1: the samples' own spread is the whole story.
  double run_to_run = 1;
  /// The same for metrics with one label value ("cache=warm" -> 1.5): a
  /// factor that holds for one kind of run of the metric only.
  std::map<std::string, double> run_to_run_where;
};

/// The run-to-run factor for a metric with these labels: the larger of the
/// descriptor's own and those of run_to_run_where that the labels match.
double run_to_run_for(const MetricDescriptor& d, const std::map<std::string, std::string>& labels);

/// One measured number. Labels are its axes only (DESIGN.md "Report contract").
struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
  Better better = Better::kHigher;
  std::map<std::string, std::string> labels;
  std::optional<Stats> stats;
};

/// One judged item: observed vs expected, a status and the exact fix.
struct Check {
  std::string id;
  Status status = Status::kPass;
  std::string observed;
  std::string expected;
  std::string fix;      ///< exact remedy (sysctl.d / limits.d line, command); empty when passing
  std::string finding;  ///< finding id this check raises when not passing (may be empty)
  std::string detail;   ///< e.g. the active verification's result
};

/// One probe's result.
/// How busy the host was with other work while a probe ran (host_activity.h).
struct HostActivity {
  double seconds = 0;     ///< the stretch measured
  int cpus = 0;           ///< online CPUs
  double other_cpus = 0;  ///< CPUs' worth of time other processes (and the kernel) used, on average
  double steal_cpus = 0;  ///< CPUs' worth of time the hypervisor gave to other guests
};

struct ProbeResult {
  std::string name;
  Status status = Status::kSkip;
  std::string reason;  ///< required for skip / error / timeout
  double duration_s = 0;
  Json config = Json::object();
  std::vector<MetricDescriptor> descriptors;  ///< one per metric name this probe reports
  std::vector<Metric> metrics;
  std::vector<Check> checks;
  /// Node settings this probe observed (sysctls, limits, mount options,
  /// transports): what compare shows as the environment next to the numbers.
  std::map<std::string, std::string> environment;
  Json data = Json::object();  ///< probe-specific structured data (matrices, per-rank rows, ...)
  /// Other work on the host during the run; none when not measured (several
  /// ranks of one job on the node, no /proc/stat, a report of schema /1).
  std::optional<HostActivity> host_activity;
};

struct Evidence {
  std::string source;  ///< file, command or probe the text came from
  long line = 0;       ///< 1-based line number, 0 when not applicable
  std::string text;
};

/// A diagnosis: a stable id from the finding vocabulary plus evidence and remedy.
struct Finding {
  std::string id;
  Severity severity = Severity::kWarn;
  std::string title;
  std::vector<Evidence> evidence;
  std::vector<std::string> remedy;
  std::vector<std::string> refs;
  std::string probe;  ///< probe that raised it (empty for log-derived findings)
  long count = 1;     ///< repeats folded into this finding
  std::string first_seen, last_seen;
  Json facts = Json::object();
  /// What the node needs (DESIGN.md): none, tune, restart-job, reset-gpu,
  /// reboot, replace, contact-support; "" when not judged.
  std::string action;
};

struct ToolInfo {
  std::string name, version, git;
};

struct RunInfo {
  std::string id, label;
  std::vector<std::string> argv;
  std::string started, finished;  ///< ISO 8601 UTC
};

struct HostInfo {
  std::string hostname, kernel, os, instance_type, cpu_model;
  int cpus = 0;
  long long memory_bytes = 0;
  Json gpus = Json::array();
  std::string driver, cuda_runtime, nccl, libfabric, mpi;
  std::map<std::string, std::string> env;  ///< allowlisted prefixes only
};

struct Report {
  std::string schema = kReportSchema;
  ToolInfo tool;
  RunInfo run;
  HostInfo host;
  std::vector<ProbeResult> probes;
  std::vector<Finding> findings;
  Status verdict = Status::kSkip;
  std::string action;  ///< the most severe action of the findings (node_action); "" when not judged
};

std::string_view to_string(Better b);
Better better_from_string(std::string_view s);
std::string_view to_string(MetricKind k);
MetricKind metric_kind_from_string(std::string_view s);
std::string_view to_string(Severity s);
Severity severity_from_string(std::string_view s);

/// The verdict of a report: aggregate of probe statuses, raised by findings of
/// severity error (-> fail) or warn (-> warn at least).
Status compute_verdict(const Report& r);

}  // namespace nodeprobe
