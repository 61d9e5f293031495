#pragma once
/// Line rules: what practitioners grep for, as data. Each rule names the
/// finding it raises (or, with an empty finding, a *signal* that context
/// rules consume: "NCCL fell back to sockets", "EFA was expected", ...), the
/// playbook cause that explains it, detection patterns and the regexes that
/// pull named facts out of a matching line.
///
/// Detection patterns use a subset that RE2 and POSIX ERE (GNU grep -E) read
/// alike: literals, . [] () | ? * + {m,n}, \s \S \b, escaped punctuation, and
/// an optional leading (?i). No \d, no (?:), no anchors, no lazy quantifiers.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::diag {

struct LogRule {
  std::string key;                    ///< stable rule key ("nvrm.xid")
  std::string finding;                ///< finding id; "" for a signal
  std::string cause;                  ///< playbook cause key; "" for the entry's default
  std::vector<std::string> patterns;  ///< detection; any one matching fires the rule
  Severity severity = Severity::kUnknown;  ///< kUnknown: the playbook's severity
  std::vector<std::string> extract;   ///< RE2 with named groups, tried in order on the line
  std::vector<std::string> suppressed_by;  ///< rule keys that take precedence on the same line
  int follow_lines = 0;               ///< following lines appended before extraction
  std::string fold;                   ///< fact whose value splits findings ("code" for Xids)
};

/// Every line rule, in a stable order.
const std::vector<LogRule>& log_rules();

/// The rule with this key, or nullptr.
const LogRule* find_log_rule(const std::string& key);

/// Rewrites one detection pattern for GNU grep -E (case folding of a leading
/// (?i) spelled out as [xX] classes). Used by the benchmark and its test.
std::string to_posix_ere(const std::string& pattern);

}  // namespace nodeprobe::diag
