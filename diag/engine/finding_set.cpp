#include "finding_set.h"

#include <algorithm>
#include <cmath>

#include "nodeprobe/finding_ids.h"
#include "text_util.h"

namespace nodeprobe::diag {
namespace {

const std::set<std::string> kMultiFacts = {"pci", "denial", "peer", "device", "proc", "gpu",
                                           "segment", "comm", "port", "symbol", "check"};

void merge_facts(Json& into, const Json& from) {
  if (!from.is_object()) return;
  for (const auto& kv : from.items()) {
    const std::string& k = kv.key();
    if (is_multi_fact(k)) {
      Json& arr = into[k];
      if (!arr.is_array()) arr = Json::array();
      auto add = [&](const Json& v) {
        if (arr.size() >= FindingSet::kMaxMulti) return;
        if (std::find(arr.begin(), arr.end(), v) == arr.end()) arr.push_back(v);
      };
      if (kv.value().is_array())
        for (const auto& v : kv.value()) add(v);
      else
        add(kv.value());
    } else if (!into.contains(k)) {
      into[k] = kv.value();
    }
  }
}

void keep_evidence(Accum& a, const Evidence& e) {
  if (a.first.size() < FindingSet::kKeepFirst) {
    for (const auto& x : a.first)
      if (x.source == e.source && x.line == e.line && x.text == e.text) return;
    a.first.push_back(e);
  } else {
    a.last = e;
  }
}

void keep_time(Accum& a, std::optional<double> t) {
  if (!t) return;
  if (!a.first_time || *t < *a.first_time) a.first_time = t;
  if (!a.last_time || *t > *a.last_time) a.last_time = t;
}

Severity effective(const Accum& a, const Playbook& pb) {
  if (a.severity != Severity::kUnknown) return a.severity;
  if (const PlaybookCause* c = pb.cause(a.key.id, a.key.cause); c && c->severity != Severity::kUnknown)
    return c->severity;
  if (const PlaybookEntry* e = pb.entry(a.key.id)) return e->severity;
  return Severity::kWarn;
}

}  // namespace

bool is_multi_fact(const std::string& name) { return kMultiFacts.count(name) > 0; }

int severity_rank(Severity s) {
  switch (s) {
    case Severity::kInfo: return 1;
    case Severity::kWarn: return 2;
    case Severity::kError: return 3;
    default: return 0;
  }
}

namespace {

// Is `rec` (already held) the same occurrence as a new line of the same source?
bool same_source_event(const EventRec& rec, const EventRef& ev, const std::optional<double>& wall,
                       const std::string& source, long line) {
  if (rec.source != source) return false;
  if (wall && rec.wall) return std::abs(*wall - *rec.wall) <= ev.window_s;
  if (ev.mono && rec.mono) return std::abs(*ev.mono - *rec.mono) <= ev.window_s;
  // Untimed: only the parts of one report (keyed rules) join, by distance.
  if ((ev.keyed || ev.attach) && !wall && !rec.wall) return std::abs(line - rec.line) <= ev.line_window;
  return false;
}

// Does a new line belong to an event already counted? Returns true when it does
// (and updates that event); otherwise records a new event and returns false.
bool fold_event(Accum& a, const EventRef& ev, const std::optional<double>& wall, const std::string& source, long line) {
  const std::size_t look = std::min<std::size_t>(a.events.size(), 64);
  for (std::size_t k = 0; k < look; ++k) {
    EventRec& rec = a.events[a.events.size() - 1 - k];
    if (!same_source_event(rec, ev, wall, source, line)) continue;
    if (ev.keyed) {
      if (rec.key == ev.key) return true;
      if (rec.provisional) {  // the keyless header of this very report
        rec.key = ev.key;
        rec.provisional = false;
        return true;
      }
    } else if (ev.attach) {
      return true;  // a keyless part of a nearby report
    } else if (rec.key == ev.key) {
      return true;  // the same message again within the window
    }
  }
  if (a.events.size() < FindingSet::kMaxEvents)
    a.events.push_back({ev.key, wall, ev.mono, source, line, ev.window_s, ev.attach});
  return false;
}

// Same event read through two sources (dmesg and syslog, kmsg and journald),
// or named by two rules of one source (a fatal AER line is pcie.aer's and
// pcie.aer_fatal's): as one source's lines fold, same key within the window.
bool cross_source_same(const EventRec& a, const EventRec& b) {
  if (a.key != b.key || a.provisional || b.provisional) return false;
  if (a.source == b.source) {
    const double w = std::max(a.window_s, b.window_s);
    if (a.wall && b.wall) return std::abs(*a.wall - *b.wall) <= w;
    if (a.mono && b.mono) return std::abs(*a.mono - *b.mono) <= w;
    return false;
  }
  if (a.wall && b.wall) return std::abs(*a.wall - *b.wall) <= std::max({a.window_s, b.window_s, 2.0});
  return true;  // one of them has no wall time (dmesg without -T): the key decides
}

}  // namespace

void FindingSet::add(const FindingKey& key, Severity severity, const Evidence& evidence,
                     std::optional<double> time, const Json& facts, const EventRef* event) {
  Accum& a = acc_[key];
  a.key = key;
  if (severity_rank(severity) > severity_rank(a.severity)) a.severity = severity;
  ++a.lines;
  const bool repeat = event && fold_event(a, *event, time, evidence.source, evidence.line);
  if (!repeat) ++a.count;
  keep_time(a, time);
  if (event && event->keyed && !a.keyed_evidence) {
    // The line that names the event (the OOM kill line) leads its report's header.
    a.keyed_evidence = true;
    a.first.insert(a.first.begin(), evidence);
    if (a.first.size() > kKeepFirst) a.first.pop_back();
  } else {
    keep_evidence(a, evidence);
  }
  merge_facts(a.facts, facts);
}

void FindingSet::merge(const Accum& in) {
  auto [it, fresh] = acc_.emplace(in.key, in);
  if (fresh) return;
  Accum& a = it->second;
  if (in.from_report != a.from_report) {  // the report's copy of what a log says
    if (a.from_report) a = in;
    return;
  }
  if (severity_rank(in.severity) > severity_rank(a.severity)) a.severity = in.severity;
  long dup = 0;
  const std::size_t held = a.events.size();
  std::vector<char> used(held, 0);
  for (const auto& e : in.events) {
    bool found = false;
    for (std::size_t i = 0; i < held && !found; ++i)
      if (!used[i] && cross_source_same(a.events[i], e)) used[i] = 1, found = true;
    if (found) ++dup;
    else if (a.events.size() < kMaxEvents) a.events.push_back(e);
  }
  a.count += std::max(0L, in.count - dup);
  a.lines += in.lines;
  keep_time(a, in.first_time);
  keep_time(a, in.last_time);
  for (const auto& e : in.first) keep_evidence(a, e);
  if (in.last) keep_evidence(a, *in.last);
  merge_facts(a.facts, in.facts);
  for (const auto& r : in.remedy)
    if (std::find(a.remedy.begin(), a.remedy.end(), r) == a.remedy.end()) a.remedy.push_back(r);
  if (a.probe.empty()) a.probe = in.probe;
}

void FindingSet::merge(const FindingSet& other) {
  for (const auto& kv : other.acc_) merge(kv.second);
}

void FindingSet::drop_report_duplicates() {
  std::set<std::pair<std::string, bool>> read;
  for (const auto& kv : acc_)
    if (!kv.second.from_report) read.insert({kv.first.id, kv.first.past});
  for (auto it = acc_.begin(); it != acc_.end();)
    it = it->second.from_report && read.count({it->first.id, it->first.past}) ? acc_.erase(it) : std::next(it);
}

void FindingSet::rekey(const std::string& id, const std::string& cause, const std::string& new_id,
                       const std::string& new_cause) {
  std::vector<Accum> moved;
  for (auto it = acc_.begin(); it != acc_.end();) {
    if (it->first.id == id && it->first.cause == cause) {
      moved.push_back(it->second);
      it = acc_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& a : moved) {
    a.key = {new_id, new_cause, a.key.fold, a.key.past};
    a.severity = Severity::kUnknown;  // the new cause's severity applies
    merge(a);
  }
}

void FindingSet::erase_id(const std::string& id) {
  for (auto it = acc_.begin(); it != acc_.end();) it = it->first.id == id ? acc_.erase(it) : std::next(it);
}

void FindingSet::erase_cause(const std::string& id, const std::string& cause) {
  for (auto it = acc_.begin(); it != acc_.end();)
    it = it->first.id == id && it->first.cause == cause ? acc_.erase(it) : std::next(it);
}

bool FindingSet::has(const std::string& id) const {
  return std::any_of(acc_.begin(), acc_.end(), [&](const auto& kv) { return kv.first.id == id; });
}

bool FindingSet::has(const std::string& id, const std::string& cause) const {
  return std::any_of(acc_.begin(), acc_.end(),
                     [&](const auto& kv) { return kv.first.id == id && kv.first.cause == cause; });
}

bool FindingSet::has_prefix(const std::vector<std::string>& prefixes) const {
  for (const auto& kv : acc_)
    for (const auto& p : prefixes)
      if (kv.first.id.rfind(p, 0) == 0) return true;
  return false;
}

Accum* FindingSet::find(const std::string& id, const std::string& cause) {
  for (auto& kv : acc_)
    if (kv.first.id == id && kv.first.cause == cause) return &kv.second;
  return nullptr;
}

void FindingSet::set_severity(const std::string& id, Severity severity, const std::string& fact,
                              const std::string& why) {
  for (auto& kv : acc_) {
    if (kv.first.id != id) continue;
    kv.second.severity = severity;
    kv.second.facts[fact] = why;
  }
}

void FindingSet::set_past(const std::string& id) {
  std::vector<Accum> moved;
  for (auto it = acc_.begin(); it != acc_.end();) {
    if (it->first.id == id && !it->first.past) {
      moved.push_back(it->second);
      it = acc_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& a : moved) {
    a.key.past = true;
    merge(a);
  }
}

namespace {

std::string age_text(double seconds) {
  const long s = static_cast<long>(seconds);
  if (s < 120) return std::to_string(std::max(0L, s)) + " s";
  if (s < 7200) return std::to_string(s / 60) + " min";
  if (s < 172800) return std::to_string(s / 3600) + " h " + std::to_string((s % 3600) / 60) + " min";
  return std::to_string(s / 86400) + " days";
}

// A finding that is a consequence of another one in the same diagnosis
// (a collective timeout after a rank was OOM-killed) folds under it: its
// evidence is shown with the root cause, and it stays as info.
void fold_consequences(std::vector<Finding>& out, const Playbook& pb) {
  for (auto& f : out) {
    if (f.facts.value("past", std::string()) != "" || f.severity == Severity::kInfo) continue;
    const PlaybookEntry* e = pb.entry(f.id);
    if (!e) continue;
    const PlaybookCause* pc = pb.cause(f.id, f.facts.value("cause", std::string()));
    const std::vector<std::string>& parents =
        pc && pc->own_consequence_of ? pc->consequence_of : e->consequence_of;
    if (parents.empty()) continue;
    Finding* root = nullptr;
    for (auto& g : out) {
      if (&g == &f || g.facts.value("past", std::string()) != "") continue;
      // Warnings lead only where they are a cause by nature (a limit, GPU
      // memory): a warn-level Xid 31 does not explain an AER error.
      const bool warn_root = g.severity == Severity::kWarn && (g.id == "gpu.oom" || g.id.rfind("limits.", 0) == 0);
      if (g.severity != Severity::kError && !warn_root) continue;
      for (const auto& p : parents)
        if (g.id == p || (p.back() == '.' && g.id.rfind(p, 0) == 0)) root = &g;
      if (root) break;
    }
    if (!root) continue;
    // A limit that demonstrably broke the job is as serious as the break.
    if (severity_rank(f.severity) > severity_rank(root->severity)) root->severity = f.severity;
    for (std::size_t k = 0; k < f.evidence.size() && k < 2; ++k) {
      Evidence ev = f.evidence[k];
      ev.text = "then " + f.id + ": " + ev.text;
      root->evidence.push_back(ev);
    }
    Json& c = root->facts["consequences"];
    if (!c.is_array()) c = Json::array();
    c.push_back(f.id);
    f.title += " (a consequence of " + root->id + ", see there)";
    f.severity = Severity::kInfo;
    f.action = "none";
    f.facts["consequence_of"] = root->id;
  }
}

// Did two accumulators read one report: events keyed by their facts (the
// killed pid), not by a message body, in one source and, where both carry a
// time, within the event window? A cgroup OOM report names the cgroup on its
// header and the victim on the kill line (often another pid, a child).
bool same_report(const Accum& a, const Accum& b) {
  auto keyed = [](const EventRec& e) { return !e.key.empty() && !e.provisional && e.key.rfind("body:", 0) != 0; };
  for (const auto& x : a.events) {
    if (!keyed(x)) continue;
    for (const auto& y : b.events) {
      if (!keyed(y) || x.source != y.source) continue;
      if (x.wall && y.wall && std::abs(*x.wall - *y.wall) > std::max(x.window_s, y.window_s)) continue;
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<Finding> FindingSet::render(const Playbook& pb, double now) const {
  // Group by (id, fold, past); inside a group the worst cause leads.
  std::map<std::tuple<std::string, std::string, bool>, std::vector<const Accum*>> groups;
  for (const auto& kv : acc_) groups[{kv.first.id, kv.first.fold, kv.first.past}].push_back(&kv.second);
  std::vector<Finding> out;
  for (auto& [gk, members] : groups) {
    std::stable_sort(members.begin(), members.end(), [&](const Accum* a, const Accum* b) {
      const int ra = severity_rank(effective(*a, pb)), rb = severity_rank(effective(*b, pb));
      if (ra != rb) return ra > rb;
      // Check-derived accumulators (exact fixes) lead among equals.
      return !a->remedy.empty() && b->remedy.empty();
    });
    // A named cause that read the same report as the entry's default (the
    // header "Memory cgroup out of memory: Kill process" is the cgroup rule's,
    // the kill line after it the default host.oom rule's) says what that
    // report was: it leads. A named cause from other lines (a pod's
    // OOMKilled, Slurm's oom_kill count, beside a global kill) does not.
    if (members.front()->key.cause.empty() && members.front()->remedy.empty()) {
      const Severity lead_sev = effective(*members.front(), pb);
      for (std::size_t i = 1; i < members.size(); ++i) {
        if (effective(*members[i], pb) != lead_sev) break;
        if (!members[i]->key.cause.empty() && same_report(*members.front(), *members[i])) {
          std::rotate(members.begin(), members.begin() + static_cast<long>(i), members.begin() + static_cast<long>(i) + 1);
          break;
        }
      }
    }
    const Accum& lead = *members.front();
    Finding f;
    f.id = std::get<0>(gk);
    f.probe = lead.probe;
    Severity worst = Severity::kUnknown;
    std::optional<double> t0, t1;
    long lines = 0;
    for (const Accum* a : members) {
      merge_facts(f.facts, a->facts);
      f.count += a->count;
      lines += a->lines;
      if (a->first_time && (!t0 || *a->first_time < *t0)) t0 = a->first_time;
      if (a->last_time && (!t1 || *a->last_time > *t1)) t1 = a->last_time;
      if (severity_rank(effective(*a, pb)) > severity_rank(worst)) worst = effective(*a, pb);
      for (const auto& r : a->remedy)
        if (std::find(f.remedy.begin(), f.remedy.end(), r) == f.remedy.end()) f.remedy.push_back(r);
      if (f.probe.empty()) f.probe = a->probe;
    }
    f.count -= 1;  // Finding::count starts at 1
    if (f.count < 1) f.count = 1;
    if (lines > f.count) f.facts["lines"] = std::to_string(lines);
    for (const Accum* a : members) {
      std::vector<Evidence> ev = a->first;
      if (a->last) ev.push_back(*a->last);
      for (const auto& e : ev) {
        if (f.evidence.size() >= 6) break;
        f.evidence.push_back(e);
      }
    }
    pb.render(f, lead.key.cause, lead.severity);
    f.severity = worst;
    for (std::size_t i = 1; i < members.size(); ++i) {  // other causes' steps after the lead's
      const PlaybookCause* c = pb.cause(f.id, members[i]->key.cause);
      if (!c) continue;
      for (const auto& s : c->remedy) {
        const std::string step = fill_step(s, f.facts);
        if (std::find(f.remedy.begin(), f.remedy.end(), step) == f.remedy.end()) f.remedy.push_back(step);
      }
      if (action_rank(c->action) > action_rank(f.action) && effective(*members[i], pb) == worst) f.action = c->action;
    }
    if (t0) f.first_seen = iso8601(*t0);
    if (t1) f.last_seen = iso8601(*t1);
    if (std::get<2>(gk)) {  // before the window that judges the node now
      f.severity = Severity::kInfo;
      f.action = "none";
      f.facts["past"] = "yes";
      std::string when = "earlier";
      if (t1 && now > 0) {
        f.facts["age_s"] = static_cast<long>(now - *t1);
        when = age_text(now - *t1) + " ago";
      }
      f.title = "Earlier (" + when + ", " + f.facts.value("window", std::string("before the window judged")) +
                "): " + f.title;
    }
    if (f.severity == Severity::kInfo) f.action = "none";
    out.push_back(std::move(f));
  }
  fold_consequences(out, pb);
  // Worst first; among equals the vocabulary's order (driver and hardware
  // before the collective and network symptoms they cause), then by id.
  auto order = [](const std::string& id) {
    const auto& v = finding_vocabulary();
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i].id == id) return static_cast<int>(i);
    return static_cast<int>(v.size());
  };
  std::stable_sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    if (severity_rank(a.severity) != severity_rank(b.severity))
      return severity_rank(a.severity) > severity_rank(b.severity);
    if (order(a.id) != order(b.id)) return order(a.id) < order(b.id);
    return a.id < b.id;
  });
  return out;
}

}  // namespace nodeprobe::diag
