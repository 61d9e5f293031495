#pragma once
/// Folding of evidence into findings with bounded memory: every event adds
/// to the accumulator of its (finding id, cause, fold value) key, which keeps
/// a count, the first and last time, the first few and the last evidence
/// line, and the facts. An Xid repeated 10,000 times is one accumulator.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
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
  bool past = false;  ///< events before the window that counts now (boot, --since): info
  bool operator<(const FindingKey& o) const {
    return std::tie(id, cause, fold, past) < std::tie(o.id, o.cause, o.fold, o.past);
  }
};

/// What makes one line one occurrence: the same kernel event read through
/// dmesg, journald and syslog, or the several lines of one report (the OOM
/// killer's header, task dump and kill line), is counted once.
struct EventRef {
  std::string key;              ///< event facts ("pid=1234"), or "body:" + the message
  bool keyed = false;           ///< key comes from the rule's event facts
  bool attach = false;          ///< the rule has event facts but this line lacks them: part of a nearby event
  std::optional<double> mono;   ///< seconds since boot (dmesg) when there is no wall time
  double window_s = 2;          ///< lines of one event are at most this far apart
  long line_window = 400;       ///< ... or this many lines apart in one untimed source
};

struct EventRec {
  std::string key;
  std::optional<double> wall, mono;
  std::string source;
  long line = 0;
  double window_s = 2;
  bool provisional = false;  ///< a keyless part waiting for its keyed line
};

struct Accum {
  FindingKey key;
  Severity severity = Severity::kUnknown;  ///< worst explicit severity seen
  long count = 0;               ///< distinct events
  long lines = 0;               ///< lines folded in (>= count)
  std::vector<EventRec> events; ///< the first kMaxEvents events, for de-duplication
  bool keyed_evidence = false;  ///< the evidence starts with a line naming its event (the kill line, not the header)
  std::optional<double> first_time, last_time;
  std::vector<Evidence> first;  ///< the first kKeepFirst lines
  std::optional<Evidence> last; ///< the latest line after those
  Json facts = Json::object();  ///< first value per fact; arrays for multi facts
  std::vector<std::string> remedy;  ///< exact fixes (from probe checks) to put first
  std::string probe;
  /// Re-read from a nodeprobe report's findings (a bundle carries the report
  /// beside the logs it was derived from): the logs, read again, win.
  bool from_report = false;
};

class FindingSet {
 public:
  static constexpr std::size_t kKeepFirst = 3;
  static constexpr std::size_t kMaxMulti = 16;
  static constexpr std::size_t kMaxEvents = 4096;

  /// Adds one line. Without `event` every line is its own event.
  void add(const FindingKey& key, Severity severity, const Evidence& evidence,
           std::optional<double> time, const Json& facts, const EventRef* event = nullptr);
  /// Adds a whole accumulator (merging sources): events another source
  /// already holds (same key, same time within their window) count once.
  void merge(const Accum& a);
  void merge(const FindingSet& other);
  /// Drops findings re-read from a report where another source names the
  /// same id in the same window (past or now): one event, one finding.
  void drop_report_duplicates();
  /// Moves every accumulator of (id, cause) into (new_id, new_cause).
  void rekey(const std::string& id, const std::string& cause, const std::string& new_id,
             const std::string& new_cause);
  void erase_id(const std::string& id);
  void erase_cause(const std::string& id, const std::string& cause);

  bool has(const std::string& id) const;
  bool has(const std::string& id, const std::string& cause) const;
  /// True when any accumulator's id starts with one of these prefixes.
  bool has_prefix(const std::vector<std::string>& prefixes) const;
  Accum* find(const std::string& id, const std::string& cause = "");
  const std::map<FindingKey, Accum>& all() const { return acc_; }
  bool empty() const { return acc_.empty(); }

  /// Marks every accumulator of `id` (any cause) as past (before the window).
  void set_past(const std::string& id);
  /// Sets the severity of every accumulator of `id` (any cause) and records
  /// why as fact `fact` = `why` (context that changes what the lines mean).
  void set_severity(const std::string& id, Severity severity, const std::string& fact, const std::string& why);

  /// One Finding per (id, fold, past): causes of one id fold into the worst
  /// one. Titles, remedies, refs and the node action come from the
  /// playbook; past findings are info with their age (`now` epoch seconds).
  std::vector<Finding> render(const Playbook& pb, double now = 0) const;

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
