#pragma once
/// Folding of evidence into findings with bounded memory: every event adds
/// to the accumulator of its (finding id, cause, fold value) key, which keeps
/// a count, the first and last time, the first few and the last evidence
/// line, and the facts. An Xid repeated 10,000 times is one accumulator.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nodeprobe/report.h"
#include "playbook.h"

namespace nodeprobe::diag {

/// Facts that collect every distinct value (GPUs, denials, peers...) instead
/// of keeping the first.
bool is_multi_fact(const std::string& name);

/// Severity order for "the worst one wins"; kUnknown ranks lowest.
int severity_rank(Severity s);

struct FindingKey {
  std::string id, cause, fold;
  bool operator<(const FindingKey& o) const {
    return std::tie(id, cause, fold) < std::tie(o.id, o.cause, o.fold);
  }
};

struct Accum {
  FindingKey key;
  Severity severity = Severity::kUnknown;  ///< worst explicit severity seen
  long count = 0;
  std::optional<double> first_time, last_time;
  std::vector<Evidence> first;  ///< the first kKeepFirst lines
  std::optional<Evidence> last; ///< the latest line after those
  Json facts = Json::object();  ///< first value per fact; arrays for multi facts
  std::vector<std::string> remedy;  ///< exact fixes (from probe checks) to put first
  std::string probe;
};

class FindingSet {
 public:
  static constexpr std::size_t kKeepFirst = 3;
  static constexpr std::size_t kMaxMulti = 16;

  /// Adds one event.
  void add(const FindingKey& key, Severity severity, const Evidence& evidence,
           std::optional<double> time, const Json& facts);
  /// Adds a whole accumulator (merging sources).
  void merge(const Accum& a);
  void merge(const FindingSet& other);
  /// Moves every accumulator of (id, cause) into (new_id, new_cause).
  void rekey(const std::string& id, const std::string& cause, const std::string& new_id,
             const std::string& new_cause);
  void erase_id(const std::string& id);

  bool has(const std::string& id) const;
  bool has(const std::string& id, const std::string& cause) const;
  /// True when any accumulator's id starts with one of these prefixes.
  bool has_prefix(const std::vector<std::string>& prefixes) const;
  Accum* find(const std::string& id, const std::string& cause = "");
  const std::map<FindingKey, Accum>& all() const { return acc_; }
  bool empty() const { return acc_.empty(); }

  /// One Finding per (id, fold): causes of one id fold into the worst one.
  /// Titles, remedies and refs come from the playbook.
  std::vector<Finding> render(const Playbook& pb) const;

 private:
  std::map<FindingKey, Accum> acc_;
};

/// Per-source signals: lines that matter only in context (NCCL used
/// sockets, an OFI provider failed, ...).
struct Signal {
  long count = 0;
  long last_line = 0;
  Evidence first;
  Json facts = Json::object();
};

}  // namespace nodeprobe::diag
