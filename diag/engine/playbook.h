#pragma once
/// The troubleshooting playbook as data (diag/playbook/*.json, embedded in
/// the binary at build time): for every finding id a title, severity,
/// category, message template with named facts, ordered remedy steps and
/// references, optionally refined per cause; the Xid catalogue; and what each
/// instance type should show. Validated at load: unknown keys, unknown ids,
/// missing ids and malformed templates are errors (after DCGM's error table).

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::diag {

class PlaybookError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PlaybookCause {
  std::string message;
  Severity severity = Severity::kUnknown;  ///< kUnknown: the entry's
  std::vector<std::string> remedy;         ///< steps before the entry's
  std::vector<std::string> refs;
  bool remedy_only = false;                ///< these steps replace the entry's
  std::string action;                      ///< "" = the entry's
  std::vector<std::string> consequence_of; ///< what it follows from when own_consequence_of
  bool own_consequence_of = false;         ///< the cause says (an empty list: nothing); else the entry's
};

struct PlaybookEntry {
  std::string id, title, category, message;
  Severity severity = Severity::kWarn;
  std::vector<std::string> remedy, refs;
  std::map<std::string, PlaybookCause> causes;
  /// Leading remedy steps a probe check's exact fix replaces (the generic
  /// "set it to N" step when the check already printed the exact line).
  int replaced_by_check_fix = 0;
  /// What the node needs when this is found (node_actions()).
  std::string action;
  /// Finding ids (or "prefix." families) this one usually follows from: with
  /// one of them in the same diagnosis it is folded under it as info.
  std::vector<std::string> consequence_of;
};

struct XidInfo {
  int code = 0;
  std::string name, meaning, action;
  Severity severity = Severity::kWarn;
  std::string node_action;  ///< action class (node_actions()) after NVIDIA's catalogue
  std::string cause;        ///< the gpu.xid cause it always is ("gsp" for 119 and 120), wherever it was read
  bool known = false;
};

struct InstanceInfo {
  int gpus = 0;
  std::string gpu_model;
  bool efa = false;
  bool nvswitch = false;  ///< NVSwitch fabric: Fabric Manager must run
};

class Playbook {
 public:
  /// Parses and validates the three documents (`instances_json`: the one
  /// instance table, instance_types.json); throws PlaybookError with a
  /// one-line reason naming the document and the offending key or id.
  static Playbook parse(const std::string& playbook_json, const std::string& xid_json,
                        const std::string& instances_json);

  const PlaybookEntry* entry(std::string_view id) const;
  /// nullptr when the entry or the cause does not exist.
  const PlaybookCause* cause(std::string_view id, std::string_view cause) const;
  const std::vector<PlaybookEntry>& entries() const { return entries_; }

  /// Catalogue entry for an Xid (a generic one, known = false, when unlisted).
  XidInfo xid(int code) const;
  /// The facts a gpu.xid finding carries for the Xid `x` (xid(code)): code,
  /// xid_name, xid_meaning, xid_action, xid_node_action, wherever it was read.
  static Json xid_facts(const XidInfo& x);
  /// Expectations for an instance type ("p4d.24xlarge"), or nullptr.
  const InstanceInfo* instance(std::string_view type) const;

  /// Fills title, severity, remedy, refs and action of `f` from its id,
  /// `cause` and `f.facts` (gpu.xid: the Xid's own action class). Severity: `override` when known, else the cause's, else the
  /// entry's. Steps already in f.remedy (exact fixes from checks) stay first
  /// and replace the entry's first `replaced_by_check_fix` steps.
  void render(Finding& f, const std::string& cause, Severity override = Severity::kUnknown) const;

 private:
  std::vector<PlaybookEntry> entries_;
  std::map<int, XidInfo> xids_;
  XidInfo unknown_xid_;
  std::map<std::string, InstanceInfo, std::less<>> instances_;
};

/// The playbook built into this binary (validated on first use).
const Playbook& default_playbook();

/// The node action an Xid 154 (GPU recovery action changed) or a GPU's
/// recovery action names: "reboot", "reset-gpu" (Reset, Drain P2P, Drain and
/// Reset), or "" when the text names none.
std::string recovery_node_action(std::string_view text);

/// Replaces {name} with the fact's value (arrays joined by ", "). Missing
/// facts become <name> and clear *complete. A [segment] is kept, without its
/// brackets, only when its facts are all known (messages).
std::string fill_template(const std::string& tmpl, const Json& facts, bool* complete = nullptr);

/// A remedy step: {name} filled as fill_template does, every other character,
/// brackets included, kept as written ('SecurityGroups[].[IpPermissions]',
/// "tensorflow[and-cuda]", /dev/nvidia[0-7] are commands, not segments).
std::string fill_step(const std::string& step, const Json& facts);

/// The embedded JSON documents (for tests and `nodeprobe diag --playbook`).
const char* embedded_playbook_json();
const char* embedded_xid_json();

}  // namespace nodeprobe::diag
