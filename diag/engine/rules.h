#pragma once
/// Line rules as data (diag/playbook/rules.json; like the playbook, the copy in
/// the data directory (share_dir.h) wins over the one built into the binary;
/// `nodeprobe diag --rules FILE` adds a site's own). Each rule
/// names the finding it raises (or, without one, a *signal* that context
/// rules consume: "NCCL used sockets", "this log talks about an NVIDIA GPU"),
/// the playbook cause that explains it, detection patterns each with the
/// source that emits the message, look-alike guards, the regexes that pull
/// named facts out of a matching line, what identifies one event, and the
/// context it needs. Validated at load: a bad rule is a one-line error
/// naming the document and the rule.
///
/// Detection patterns use a subset that RE2 and POSIX ERE (GNU grep -E) read
/// alike: literals, . [] () | ? * + {m,n}, \s \S \b, escaped punctuation, and
/// an optional leading (?i). No \d, no (?:), no anchors other than a leading
/// ^, no lazy quantifiers. Extraction regexes are full RE2.

#include <stdexcept>
#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::diag {

class Playbook;

class RulesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RulePattern {
  std::string re;   ///< detection pattern (grep -E compatible subset)
  std::string src;  ///< where the message comes from: "repo path: format string"
};

struct Rule {
  std::string key;                    ///< stable rule key ("nvrm.xid")
  std::string finding;                ///< finding id; "" for a signal
  std::string cause;                  ///< playbook cause key; "" for the entry's default
  std::vector<RulePattern> patterns;  ///< detection; any one matching fires the rule
  std::vector<std::string> unless;    ///< look-alike guards: a line matching one does not fire
  Severity severity = Severity::kUnknown;  ///< kUnknown: the playbook's severity
  std::string judge;                  ///< named judgement of the facts ("xid", "selinux", ...)
  std::vector<std::string> extract;   ///< RE2 with named groups, tried in order on the line
  std::vector<std::string> suppressed_by;  ///< rule keys that take precedence on the same line
  /// Finding ids whose rules take precedence on the same line: at load, every
  /// rule raising one of them that does not itself yield is added to
  /// suppressed_by (the generic tier gives way to the emitter-specific rules,
  /// those added later and a site's included).
  std::vector<std::string> yields_to;
  int follow_lines = 0;               ///< following lines appended before extraction
  std::string fold;                   ///< fact whose value splits findings ("code" for Xids)
  /// Facts that name one event (the killed pid of an OOM report): lines
  /// with the same values within event_window_s are one occurrence.
  std::vector<std::string> event;
  double event_window_s = 2;          ///< lines of one report this close in time are one event
  /// Required context: the rule raises its finding only when one of these
  /// rule keys (signals or findings) also matched in the same source;
  /// otherwise it raises `otherwise_cause` at `otherwise_severity`, or
  /// nothing when no otherwise_cause is given.
  std::vector<std::string> needs;
  /// Context that explains the finding away: when one of these rule keys
  /// also matched in the same source (a rank's own application error beside
  /// the peers' lost connections), the rule raises `otherwise_cause` at
  /// `otherwise_severity` instead (the same cause at that severity when only
  /// a severity is given), or nothing. Rules that explain each other away in
  /// a ring with no fallback are refused at load.
  std::vector<std::string> explained_by;
  std::string otherwise_cause;
  Severity otherwise_severity = Severity::kUnknown;
  /// Context that makes the finding graver: when the finding stands (its
  /// needs met, nothing explains it away) and one of `escalate_when` also
  /// matched in the same source while none of `escalate_unless` did, it is
  /// raised at `escalate_severity` (IPoIB sockets without libibverbs are
  /// info on one node and a warning when the communicator spans nodes).
  std::vector<std::string> escalate_when;
  std::vector<std::string> escalate_unless;
  Severity escalate_severity = Severity::kUnknown;
  std::vector<std::string> lookalikes;  ///< lines (as emitted) this rule must not fire on; tested
  std::string origin;                 ///< "built-in" or the site file it came from

  /// Its context can withhold or change the finding (needs, explained_by).
  bool context_gated() const { return !needs.empty() || !explained_by.empty(); }
  /// What it says where its context turns it away (otherwise_cause/severity).
  bool has_fallback() const { return !otherwise_cause.empty() || otherwise_severity != Severity::kUnknown; }
  /// Its findings wait for the whole source before they stand (gated or escalated).
  bool waits_for_context() const { return context_gated() || !escalate_when.empty(); }
};

/// A finding by id and cause, as folds name it: "id" is every cause of the
/// id, "id/cause" one cause and "id/" the entry's default cause.
struct FindingRef {
  std::string id;
  std::string cause;
  bool any_cause = false;
  bool matches(const std::string& i, const std::string& c) const { return id == i && (any_cause || cause == c); }
};

/// A finding that another finding of the same source explains: folded into
/// the cause that names the root (`into`), or dropped (no `into`). Every
/// fold is judged on the findings the source raised before any fold is
/// applied; they are applied in order. A `when` entry never matches the
/// folded finding itself ("host.oom" beside "host.oom/killed_signal" means
/// any other host.oom cause).
struct Fold {
  std::string key;
  FindingRef finding;
  std::vector<FindingRef> when;  ///< any one present folds `finding`
  /// Instead of `when`: any other finding of the whole run (every source,
  /// the probes too) at least this severe drops `finding` (a run-level fold,
  /// applied after the findings are rendered; kUnknown: a source-level fold).
  Severity when_severity = Severity::kUnknown;
  bool run_level() const { return when_severity != Severity::kUnknown; }
  FindingRef into;               ///< empty id: the finding is dropped
  std::string why;               ///< the reasoning, for readers of the data
  std::string origin;
};

/// The validated rules, in a stable order.
class RuleSet {
 public:
  /// Parses and validates one rules document (schema nodeprobe.rules/1:
  /// `rules`, and optional `defines` and `folds`; a define is filled in where
  /// a pattern, unless or extract names it) against the playbook (finding ids, causes). `name` names the document
  /// in errors. Throws RulesError with a one-line reason.
  static RuleSet parse(const std::string& json_text, const std::string& name, const Playbook& pb);

  /// Adds a site's rules and folds after these; a key already present is an error.
  void add(const RuleSet& site);

  const std::vector<Rule>& rules() const { return rules_; }
  const Rule* find(const std::string& key) const;
  std::size_t pattern_count() const;
  /// Finding-level folds, built-in first, then a site's.
  const std::vector<Fold>& folds() const { return folds_; }

 private:
  void check_references(const std::string& name) const;
  void expand_yields();
  void check_explained_rings() const;
  std::vector<Rule> rules_;
  std::vector<Fold> folds_;
};

/// The rules built into this binary (validated on first use against the
/// built-in playbook). One seam for where rule data comes from.
const RuleSet& default_rules();
const char* embedded_rules_json();

/// Judges a rule may name, each implemented in rule_engine.cpp.
const std::vector<std::string>& known_judges();

/// Rewrites one detection pattern for GNU grep -E (case folding of a leading
/// (?i) spelled out as [xX] classes). Used by the benchmark and its test.
std::string to_posix_ere(const std::string& pattern);

/// The top-level alternatives of a pattern that start with ^, each a pattern
/// of its own (a leading (?i) carried over): what the engine matches on the
/// message behind a line's wrappers (timestamps, hosts, launcher prefixes).
/// A pattern that starts with ^ is returned whole; ^ inside a group or a
/// bracket expression, or escaped, anchors nothing here.
std::vector<std::string> anchored_alternatives(const std::string& pattern);

}  // namespace nodeprobe::diag
