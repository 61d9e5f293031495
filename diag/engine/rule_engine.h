#pragma once
/// Runs the line rules (rules.h) over a stream: the multi-pattern scanner
/// finds matching lines, lines that need it are normalised (normalise.h) and
/// matched again, facts are extracted, and events fold into findings and
/// signals (one occurrence per event, not per line). The start of each source (kDocBytes) is
/// also kept for the structured parsers (nvidia-smi tables, sysctl output,
/// reports...), and the per-source context rules run at the end.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "line_reader.h"
#include "observations.h"
#include "playbook.h"
#include "rules.h"
#include "scanner.h"
#include "text_util.h"

namespace nodeprobe::diag {

struct AnalysisOptions {
  std::optional<double> since;  ///< epoch seconds; earlier events are dropped
  /// Epoch seconds: earlier events are kept as info with their age ("past"),
  /// not judged against the node as it is now (accept: the boot or --since).
  std::optional<double> current_from;
  std::string window;           ///< how current_from was chosen ("before the current boot")
  TimeContext time;             ///< "now" and the zone of year/zone-less timestamps
  bool efa_expected = false;    ///< the node should have EFA (instance type, --expect)
  bool nvswitch_expected = false;  ///< the node has NVSwitches (Fabric Manager needed)
};

class RuleEngine {
 public:
  static constexpr std::size_t kDocBytes = 8u << 20;

  /// Compiles the rules. Without RE2 the engine still parses structured
  /// sections but scans no lines (available() is false).
  explicit RuleEngine(const Playbook& pb, const RuleSet& rules = default_rules());
  ~RuleEngine();
  RuleEngine(const RuleEngine&) = delete;
  RuleEngine& operator=(const RuleEngine&) = delete;

  SourceResult analyze(LineBlockReader& reader, const std::string& name, const AnalysisOptions& opt);

  bool available() const { return scanner_ != nullptr; }
  const MultiPatternScanner* scanner() const { return scanner_.get(); }
  const Playbook& playbook() const { return pb_; }
  const RuleSet& rules() const { return rules_; }

 private:
  struct Compiled;
  struct LineCtx;
  void on_physical(std::string_view block, std::size_t offset, std::string_view line, long line_no,
                   const std::vector<int>* ids, const AnalysisOptions& opt, SourceResult& r,
                   std::vector<std::pair<long, std::size_t>>* matched);
  void on_logical(const LineCtx& c, std::string_view text, const std::vector<int>& ids,
                  const AnalysisOptions& opt, SourceResult& r, std::vector<std::pair<long, std::size_t>>* matched);
  /// Patterns anchored at the start ("^") that match the message behind its
  /// wrappers (message_starts: each point where a wrapper may end); `body`
  /// receives the earliest start that matched. Empty when the line has no
  /// wrapper.
  std::vector<int> body_matches(std::string_view line, std::string_view* body) const;
  /// Adds to `ids` the anchored patterns body_matches finds in `text` that
  /// are not there yet; `body` is set as body_matches sets it.
  void add_body_matches(std::string_view text, std::vector<int>* ids, std::string_view* body) const;

  const Playbook& pb_;
  RuleSet rules_;
  std::unique_ptr<MultiPatternScanner> scanner_;
  std::unique_ptr<Compiled> compiled_;
  std::vector<std::size_t> pattern_rule_;  // pattern index -> rule index
  // Anchored patterns again, matched on a wrapped line's message: an
  // unanchored pattern that matches the message matches the raw line too.
  std::unique_ptr<MultiPatternScanner> anchored_;
  std::vector<int> anchored_ids_;  // anchored_ pattern index -> pattern index
};

/// Kind of a text from its first bytes ("kernel-log", "syslog", "audit",
/// "nccl", "nvidia-smi", "nvidia-smi-q", "fi_info", "sysctl", "report",
/// "binary", "text"...). A label for people: every rule runs on every kind.
std::string detect_kind(std::string_view head);

/// Structured sections found anywhere in `doc` (a source's first bytes).
void parse_sections(std::string_view doc, const std::string& source, const Playbook& pb,
                    SourceResult& r);

/// Context rules inside one source (look-alikes, fallbacks, root causes,
/// rules that need context).
void resolve_source(SourceResult& r, const AnalysisOptions& opt, const RuleSet& rules);

/// The run-level folds (Fold::run_level) on the rendered findings of a whole
/// run, every source and probe together: a fold's finding is dropped where
/// any other finding is at least its `when_severity`.
void apply_run_folds(std::vector<Finding>& findings, const std::vector<Fold>& folds);

}  // namespace nodeprobe::diag
