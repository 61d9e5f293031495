#pragma once
/// Expectations per EC2 instance type (GPU count and model, EFA devices,
/// minimum GEMM TFLOP/s, minimum busbw) as data: diag/data/instance_types.json
/// is built into the binary; --expectations FILE replaces it. Rules match a
/// probe's metrics by probe, metric name and labels, so the names the probes
/// use can be adjusted in the file.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nodeprobe/fs_root.h"
#include "nodeprobe/input.h"
#include "nodeprobe/instance_table.h"
#include "nodeprobe/metric_select.h"
#include "nodeprobe/report.h"

namespace nodeprobe::diag {

/// Which metric a minimum applies to, and how several matches reduce to one number.
struct ExpectRule {
  std::string id;
  std::string probe, metric, unit, what, finding;
  Labels labels;
  std::string group_by;         ///< label whose values form groups (e.g. "device"); "" = one group
  /// How matches reduce: "max" or "min"; empty (the default) reads the
  /// metric's descriptor: the best value within a group (best size), the
  /// worst across groups (slowest GPU).
  std::string within;
  std::string across;
  Status status = Status::kWarn;  ///< status when below the minimum
  std::vector<std::string> profiles = {"quick", "full"};
};

struct InstanceExpectation {
  std::string type;
  std::optional<int> gpu_count;
  std::string gpu_model;  ///< substring of the GPU's name ("A100")
  std::optional<int> efa_devices;
  std::map<std::string, double> min;  ///< rule id -> minimum value
};

struct Expectations {
  std::string origin;
  InstanceTable table;  ///< the type facts (nodeprobe/instance_table.h) of the same document
  std::map<std::string, ExpectRule> rules;
  std::map<std::string, InstanceExpectation> types;
};

/// A data file that cannot be used; what() is one line.
class ExpectationsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses and validates (unknown keys, unknown rule ids, unknown finding ids
/// and bad values are errors).
Expectations parse_expectations(const std::string& text, const std::string& origin);

/// The data file built into this binary.
const Expectations& builtin_expectations();

/// Loads FILE (typed and bounded: nodeprobe/input.h), or the built-in data
/// when `path` is empty.
Expectations load_expectations(const std::string& path, const InputOverrides& limits = {});

/// The rule's number in `r`: matching metrics grouped by `group_by`, reduced
/// `within` each group and `across` groups (from the metric's descriptor
/// unless the rule says). nullopt when nothing matches. `descriptor`, when
/// given, receives the matched metric's descriptor.
std::optional<double> rule_value(const Report& r, const ExpectRule& rule, std::size_t* matched = nullptr,
                                 MetricDescriptor* descriptor = nullptr);

/// The "expect" pseudo-probe: one check per expectation of `type`, judged
/// against the probes already in `r` and the hardware visible under `fs`.
/// `note` explains an unknown type (status skip).
ProbeResult judge_expectations(const Report& r, const Expectations& e, const std::string& type,
                               const std::string& profile, const FsRoot& fs, const std::string& note);

}  // namespace nodeprobe::diag
