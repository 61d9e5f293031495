#pragma once
/// The one instance-type table (diag/data/instance_types.json, installed as
/// share/nodeprobe/instance_types.json): what each EC2 GPU instance type
/// carries. gemm (--expect), accept (--expect, expectations) and diag
/// (--expect, the playbook's host checks) all answer from it, so a type is
/// known or unknown alike everywhere (an unknown one is a usage error, exit
/// 64, listing the known ones). The data directory's copy (share_dir.h)
/// wins over the one built into the binary.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nodeprobe {

/// What one instance type carries.
struct InstanceSpec {
  std::string type;
  std::optional<int> gpu_count;
  std::string gpu_model;             ///< GPU family as the gemm specs name it ("A100", "L4")
  std::optional<int> efa_devices;    ///< EFA devices accept requires (absent: not judged)
  bool efa = false;                  ///< the type supports EFA (diag expects it)
  bool nvswitch = false;             ///< GPUs talk through NVSwitches (Fabric Manager must run)
};

struct InstanceTable {
  std::string origin;
  std::map<std::string, InstanceSpec, std::less<>> types;
  /// Instance families without a GPU ("c5"): known, expecting none.
  std::vector<std::string> gpu_less_families;

  /// The spec of `type` (exact, lower case), nullptr when not listed.
  const InstanceSpec* find(std::string_view type) const;
  /// Whether `type`'s family is listed as GPU-less.
  bool gpu_less(std::string_view type) const;
  /// Listed, or of a GPU-less family.
  bool known(std::string_view type) const { return find(type) || gpu_less(type); }
  /// "" when `type` is empty or known; else the one-line reason
  /// "unknown instance type 'X' (known: a, b, ...; families without GPUs: c5, ...)".
  std::string unknown_reason(std::string_view type) const;
  /// The --list lines of every command that takes --expect, one per type:
  /// "p4d.24xlarge\tinstance type (--expect): 8 x A100, EFA, NVSwitch", then
  /// one "c5.*\tinstance type (--expect): no GPU" per GPU-less family.
  std::string list_lines() const;
};

/// A table that cannot be used; what() is one line naming the document.
class InstanceTableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses the type facts of an instance_types.json text (schema
/// nodeprobe.instance_types/1): "instance_types" {TYPE: {gpu_count, gpu_model,
/// efa_devices, efa, nvswitch, min, notes}} and "gpu_less_families"; "rules"
/// and "min" belong to accept's expectations (diag/node/expectations.h) and
/// are left to it. Throws InstanceTableError.
InstanceTable parse_instance_table(const std::string& text, const std::string& origin);

/// The instance_types.json text in use: the data directory's copy, else the
/// one built in. `origin` receives where it came from.
std::string instance_table_text(std::string* origin = nullptr);

/// parse_instance_table(instance_table_text()), parsed once.
const InstanceTable& instance_table();

}  // namespace nodeprobe
