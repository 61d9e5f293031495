#include "finding_set.h"

#include <algorithm>

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

void FindingSet::add(const FindingKey& key, Severity severity, const Evidence& evidence,
                     std::optional<double> time, const Json& facts) {
  Accum& a = acc_[key];
  a.key = key;
  if (severity_rank(severity) > severity_rank(a.severity)) a.severity = severity;
  ++a.count;
  keep_time(a, time);
  keep_evidence(a, evidence);
  merge_facts(a.facts, facts);
}

void FindingSet::merge(const Accum& in) {
  auto [it, fresh] = acc_.emplace(in.key, in);
  if (fresh) return;
  Accum& a = it->second;
  if (severity_rank(in.severity) > severity_rank(a.severity)) a.severity = in.severity;
  a.count += in.count;
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
    a.key = {new_id, new_cause, a.key.fold};
    a.severity = Severity::kUnknown;  // the new cause's severity applies
    merge(a);
  }
}

void FindingSet::erase_id(const std::string& id) {
  for (auto it = acc_.begin(); it != acc_.end();) it = it->first.id == id ? acc_.erase(it) : std::next(it);
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

std::vector<Finding> FindingSet::render(const Playbook& pb) const {
  // Group by (id, fold); inside a group the worst cause leads.
  std::map<std::pair<std::string, std::string>, std::vector<const Accum*>> groups;
  for (const auto& kv : acc_) groups[{kv.first.id, kv.first.fold}].push_back(&kv.second);
  std::vector<Finding> out;
  for (auto& [gk, members] : groups) {
    std::stable_sort(members.begin(), members.end(), [&](const Accum* a, const Accum* b) {
      const int ra = severity_rank(effective(*a, pb)), rb = severity_rank(effective(*b, pb));
      if (ra != rb) return ra > rb;
      // Check-derived accumulators (exact fixes) lead among equals.
      return !a->remedy.empty() && b->remedy.empty();
    });
    const Accum& lead = *members.front();
    Finding f;
    f.id = gk.first;
    f.probe = lead.probe;
    Severity worst = Severity::kUnknown;
    std::optional<double> t0, t1;
    for (const Accum* a : members) {
      merge_facts(f.facts, a->facts);
      f.count += a->count;
      if (a->first_time && (!t0 || *a->first_time < *t0)) t0 = a->first_time;
      if (a->last_time && (!t1 || *a->last_time > *t1)) t1 = a->last_time;
      if (severity_rank(effective(*a, pb)) > severity_rank(worst)) worst = effective(*a, pb);
      for (const auto& r : a->remedy)
        if (std::find(f.remedy.begin(), f.remedy.end(), r) == f.remedy.end()) f.remedy.push_back(r);
      if (f.probe.empty()) f.probe = a->probe;
    }
    f.count -= 1;  // Finding::count starts at 1
    if (f.count < 1) f.count = 1;
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
        const std::string step = fill_template(s, f.facts);
        if (std::find(f.remedy.begin(), f.remedy.end(), step) == f.remedy.end()) f.remedy.push_back(step);
      }
    }
    if (t0) f.first_seen = iso8601(*t0);
    if (t1) f.last_seen = iso8601(*t1);
    out.push_back(std::move(f));
  }
  // Worst first, then by id: the report reads from the most urgent down.
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (severity_rank(a.severity) != severity_rank(b.severity))
      return severity_rank(a.severity) > severity_rank(b.severity);
    return a.id < b.id;
  });
  return out;
}

}  // namespace nodeprobe::diag
