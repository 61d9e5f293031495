#include "rules.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "nodeprobe/finding_ids.h"
#include "nodeprobe/share_dir.h"
#include "playbook.h"

#if NODEPROBE_HAVE_RE2
#include <re2/re2.h>
#endif

extern const char* const kNodeprobeRulesJson;

namespace nodeprobe::diag {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& doc, const std::string& what) { throw RulesError(doc + ": " + what); }

void only_keys(const json& j, const std::set<std::string>& allowed, const std::string& doc, const std::string& where) {
  if (!j.is_object()) fail(doc, where + " must be an object");
  for (const auto& kv : j.items())
    if (!allowed.count(kv.key())) fail(doc, "unknown key '" + kv.key() + "' in " + where);
}

std::string opt_string(const json& j, const char* key, const std::string& doc, const std::string& where) {
  if (!j.contains(key)) return {};
  if (!j.at(key).is_string()) fail(doc, where + "." + key + " must be a string");
  return j.at(key).get<std::string>();
}

std::vector<std::string> opt_strings(const json& j, const char* key, const std::string& doc, const std::string& where) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j.at(key).is_array()) fail(doc, where + "." + key + " must be an array of strings");
  for (const auto& v : j.at(key)) {
    if (!v.is_string() || v.get<std::string>().empty()) fail(doc, where + "." + key + " holds a non-string or empty item");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Severity opt_severity(const json& j, const char* key, const std::string& doc, const std::string& where) {
  if (!j.contains(key)) return Severity::kUnknown;
  const Severity s = j.at(key).is_string() ? severity_from_string(j.at(key).get<std::string>()) : Severity::kUnknown;
  if (s == Severity::kUnknown) fail(doc, where + "." + key + " must be info, warn or error");
  return s;
}

// "rule nvrm.xid": names an item of a keyed list in errors, "?" when it has no key.
std::string item_where(const char* kind, const json& j) {
  return std::string(kind) + " " + (j.is_object() ? j.value("key", std::string("?")) : std::string("?"));
}

bool good_key(const std::string& k) {
  if (k.empty() || k.size() > 64) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' ||
           c == '.';
  });
}

// A single lower_snake word (fact names, define keys): a key without dots.
bool good_name(const std::string& n) { return good_key(n) && n.find('.') == std::string::npos; }

// The dialect RE2 and grep -E read alike (see rules.h); the benchmark
// compares the scanner with grep on these very patterns.
void check_dialect(const std::string& p, const std::string& doc, const std::string& where) {
  const std::string body = p.rfind("(?i)", 0) == 0 ? p.substr(4) : p;
  auto bad = [&](const std::string& why) { fail(doc, where + ": pattern '" + p + "' " + why); };
  if (body.empty()) bad("is empty");
  if (body.find("(?") != std::string::npos) bad("uses (?...) groups or flags (only a leading (?i) is allowed)");
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\\' && i + 1 < body.size()) {
      const char e = body[i + 1];
      if (e == 'd' || e == 'D' || e == 'A' || e == 'z' || e == 'Q' || e == 'E' || e == 'p' || e == 'P')
        bad(std::string("uses \\") + e + " (not in grep -E)");
      ++i;
      continue;
    }
    if ((c == '*' || c == '+' || c == '?' || c == '}') && i + 1 < body.size() && body[i + 1] == '?')
      bad("uses a lazy quantifier");
  }
}

#if NODEPROBE_HAVE_RE2
void check_regex(const std::string& p, bool need_names, const std::string& doc, const std::string& where) {
  RE2::Options o;
  o.set_log_errors(false);
  RE2 re(p, o);
  if (!re.ok()) fail(doc, where + ": '" + p + "' does not compile: " + re.error());
  if (need_names && re.NamedCapturingGroups().empty()) fail(doc, where + ": extract '" + p + "' has no named group");
  for (const auto& [n, i] : re.NamedCapturingGroups()) {
    (void)i;
    if (!good_name(n)) fail(doc, where + ": fact name '" + n + "' is not lower_snake");
  }
}
#else
void check_regex(const std::string&, bool, const std::string&, const std::string&) {}
#endif

// Named fragments of a rules document ("defines"): one place for a grammar
// several rules share (how CUDA or NVML print an error number), used in
// patterns, unless and extract as {{key}}, {{key:ARG}} (ARG fills the
// define's {arg} as a group) or {{key:a=X;b=Y}} (a define whose "args" name
// its parameters: each {a}, {b} of its re filled as a group).
struct Define {
  std::string re;
  std::vector<std::string> params;  // "arg" alone, or the names "args" declares
  bool used = false;
  // Declared with "args" (which may not name a parameter "arg").
  bool named() const { return !params.empty() && params.front() != "arg"; }
};
using Defines = std::map<std::string, Define>;

// `re` with every {name} replaced by `group`.
std::string fill_param(std::string re, const std::string& name, const std::string& group) {
  const std::string ph = "{" + name + "}";
  for (std::size_t at = 0; (at = re.find(ph, at)) != std::string::npos; at += group.size()) re.replace(at, ph.size(), group);
  return re;
}

// The {lower_snake} placeholders of a define's re (a regex repetition such
// as {2,5} has digits, so it is never one).
std::set<std::string> placeholders(const std::string& re) {
  std::set<std::string> out;
  for (std::size_t open = re.find('{'); open != std::string::npos; open = re.find('{', open + 1)) {
    if (open > 0 && re[open - 1] == '\\') continue;
    const std::size_t close = re.find('}', open);
    if (close == std::string::npos) break;
    const std::string name = re.substr(open + 1, close - open - 1);
    if (!name.empty() && good_name(name) && !std::isdigit(static_cast<unsigned char>(name[0]))) out.insert(name);
  }
  return out;
}

Defines parse_defines(const json& root, const std::string& doc) {
  Defines out;
  if (!root.contains("defines")) return out;
  if (!root.at("defines").is_array()) fail(doc, "'defines' must be an array");
  for (const auto& j : root.at("defines")) {
    const std::string where = item_where("define", j);
    only_keys(j, {"key", "re", "arg", "args", "src"}, doc, where);
    const std::string key = opt_string(j, "key", doc, where);
    if (!good_name(key)) fail(doc, where + ": key must be lower_snake");
    Define d;
    d.re = opt_string(j, "re", doc, where);
    if (d.re.empty()) fail(doc, where + ": 're' is required");
    if (d.re.find("{{") != std::string::npos) fail(doc, where + ": a define cannot use another");
    if (opt_string(j, "src", doc, where).empty()) fail(doc, where + ": lacks 'src' (the grammar's source)");
    const std::set<std::string> used_names = placeholders(d.re);
    if (j.contains("args")) {
      if (j.contains("arg")) fail(doc, where + ": 'arg' or 'args', not both");
      const json& a = j.at("args");
      if (!a.is_object() || a.empty()) fail(doc, where + ": 'args' must be an object naming each parameter");
      for (const auto& [name, what] : a.items()) {
        if (!good_name(name) || name == "arg") fail(doc, where + ": parameter '" + name + "' must be lower_snake (and not 'arg')");
        if (!what.is_string() || what.get<std::string>().empty()) fail(doc, where + ": 'args." + name + "' must say what it is");
        if (!used_names.count(name)) fail(doc, where + ": parameter '" + name + "' is not used as {" + name + "} in its re");
        d.params.push_back(name);
      }
      for (const auto& n : used_names)
        if (!a.contains(n)) fail(doc, where + ": {" + n + "} in its re is not a parameter 'args' declares");
    } else {
      const bool takes_arg = used_names.count("arg") > 0;
      if (takes_arg != j.contains("arg")) fail(doc, where + ": 'arg' describes the {arg} its re uses (both or neither)");
      if (takes_arg && opt_string(j, "arg", doc, where).empty()) fail(doc, where + ": 'arg' must say what the argument is");
      if (takes_arg) d.params.push_back("arg");
      for (const auto& n : used_names)
        if (n != "arg") fail(doc, where + ": {" + n + "} in its re needs 'args' to declare it");
    }
    // Checked once filled in, as the patterns that use it are.
    std::string sample = d.re;
    for (const auto& n : d.params) sample = fill_param(sample, n, "(0)");
    check_dialect(sample, doc, where);
    check_regex(sample, false, doc, where);
    if (!out.emplace(key, d).second) fail(doc, "duplicate define key '" + key + "'");
  }
  return out;
}

// One use of a define, filled in: ARG for {arg}, or NAME=VALUE;... for
// each parameter of a define with "args" (every one, once).
std::string fill_define(const std::string& name, const Define& d, const std::string& ref_arg, const std::string& doc,
                        const std::string& where) {
  if (!d.named()) return d.params.empty() ? d.re : fill_param(d.re, "arg", "(" + ref_arg + ")");
  std::map<std::string, std::string> given;
  std::size_t pos = 0;
  while (pos <= ref_arg.size()) {
    std::size_t end = ref_arg.find(';', pos);
    if (end == std::string::npos) end = ref_arg.size();
    const std::string item = ref_arg.substr(pos, end - pos);
    const std::size_t eq = item.find('=');
    const std::string p = item.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == item.size() ||
        std::find(d.params.begin(), d.params.end(), p) == d.params.end())
      fail(doc, where + ": define '" + name + "' takes NAME=VALUE;... for its parameters, not '" + item + "'");
    if (!given.emplace(p, item.substr(eq + 1)).second) fail(doc, where + ": define '" + name + "' is given '" + p + "' twice");
    pos = end + 1;
  }
  std::string re = d.re;
  for (const auto& p : d.params) {
    auto it = given.find(p);
    if (it == given.end()) fail(doc, where + ": define '" + name + "' needs its parameter '" + p + "'");
    re = fill_param(re, p, "(" + it->second + ")");
  }
  return re;
}

std::string expand_defines(const std::string& re, Defines& defs, const std::string& doc, const std::string& where) {
  std::string out;
  std::size_t pos = 0;
  for (std::size_t open; (open = re.find("{{", pos)) != std::string::npos;) {
    const std::size_t close = re.find("}}", open + 2);
    if (close == std::string::npos) fail(doc, where + ": '{{' without '}}' in '" + re + "'");
    const std::string ref = re.substr(open + 2, close - open - 2);
    const std::size_t colon = ref.find(':');
    const std::string name = ref.substr(0, colon);
    auto it = defs.find(name);
    if (it == defs.end()) fail(doc, where + ": unknown define '" + name + "'");
    Define& d = it->second;
    const bool takes = !d.params.empty();
    if (takes != (colon != std::string::npos) || (colon != std::string::npos && colon + 1 == ref.size()))
      fail(doc, where + ": define '" + name +
                    (!takes ? "' takes no argument"
                            : d.named() ? "' needs its parameters ({{" + name + ":NAME=VALUE;...}})"
                                      : "' needs an argument ({{" + name + ":ARG}})"));
    d.used = true;
    out += re.substr(pos, open - pos) + fill_define(name, d, takes ? ref.substr(colon + 1) : "", doc, where);
    pos = close + 2;
  }
  return out + re.substr(pos);
}

Rule parse_rule(const json& j, const std::string& doc, const Playbook& pb, Defines& defs) {
  const std::string where = item_where("rule", j);
  only_keys(j,
            {"key", "finding", "cause", "severity", "judge", "patterns", "unless", "extract", "suppressed_by", "yields_to",
             "follow_lines", "fold", "event", "event_window_s", "needs", "explained_by", "otherwise_cause", "otherwise_severity",
             "escalate", "lookalikes", "note"},
            doc, where);
  Rule r;
  r.key = opt_string(j, "key", doc, where);
  if (!good_key(r.key)) fail(doc, where + ": key must be lower_snake words joined by dots");
  r.finding = opt_string(j, "finding", doc, where);
  r.cause = opt_string(j, "cause", doc, where);
  if (!r.finding.empty()) {
    if (!find_finding_kind(r.finding)) fail(doc, where + ": unknown finding id '" + r.finding + "'");
    if (!r.cause.empty() && !pb.cause(r.finding, r.cause))
      fail(doc, where + ": the playbook has no cause '" + r.cause + "' for " + r.finding);
  } else if (!r.cause.empty()) {
    fail(doc, where + ": a cause needs a finding");
  }
  r.severity = opt_severity(j, "severity", doc, where);
  r.judge = opt_string(j, "judge", doc, where);
  if (!r.judge.empty() && std::find(known_judges().begin(), known_judges().end(), r.judge) == known_judges().end())
    fail(doc, where + ": unknown judge '" + r.judge + "'");
  if (!j.contains("patterns") || !j.at("patterns").is_array() || j.at("patterns").empty())
    fail(doc, where + ": 'patterns' must be a non-empty array");
  for (const auto& p : j.at("patterns")) {
    only_keys(p, {"re", "src"}, doc, where + ".patterns[]");
    RulePattern rp{expand_defines(opt_string(p, "re", doc, where), defs, doc, where), opt_string(p, "src", doc, where)};
    if (rp.src.empty()) fail(doc, where + ": pattern '" + rp.re + "' lacks 'src' (where the message is emitted)");
    check_dialect(rp.re, doc, where);
    check_regex(rp.re, false, doc, where);
    r.patterns.push_back(std::move(rp));
  }
  r.unless = opt_strings(j, "unless", doc, where);
  for (auto& u : r.unless) {
    u = expand_defines(u, defs, doc, where + ".unless");
    check_dialect(u, doc, where + ".unless");
    check_regex(u, false, doc, where + ".unless");
  }
  r.extract = opt_strings(j, "extract", doc, where);
  for (auto& x : r.extract) {
    x = expand_defines(x, defs, doc, where + ".extract");
    check_regex(x, true, doc, where + ".extract");
  }
  r.suppressed_by = opt_strings(j, "suppressed_by", doc, where);
  r.yields_to = opt_strings(j, "yields_to", doc, where);
  for (const auto& id : r.yields_to)
    if (id == "*") {
      if (r.yields_to.size() != 1) fail(doc, where + ".yields_to: \"*\" (every other finding) stands alone");
    } else if (!find_finding_kind(id)) {
      fail(doc, where + ".yields_to: unknown finding id '" + id + "'");
    }
  if (j.contains("follow_lines")) {
    const json& v = j.at("follow_lines");
    if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > 8) fail(doc, where + ".follow_lines must be 0..8");
    r.follow_lines = v.get<int>();
  }
  r.fold = opt_string(j, "fold", doc, where);
  r.event = opt_strings(j, "event", doc, where);
  if (j.contains("event_window_s")) {
    const json& v = j.at("event_window_s");
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 3600)
      fail(doc, where + ".event_window_s must be 0..3600 seconds");
    r.event_window_s = v.get<double>();
  }
  r.needs = opt_strings(j, "needs", doc, where);
  r.explained_by = opt_strings(j, "explained_by", doc, where);
  r.otherwise_cause = opt_string(j, "otherwise_cause", doc, where);
  r.otherwise_severity = opt_severity(j, "otherwise_severity", doc, where);
  if (r.has_fallback() && !r.context_gated())
    fail(doc, where + ": otherwise_cause/otherwise_severity without needs or explained_by");
  if (!r.otherwise_cause.empty()) {
    if (r.finding.empty() || !pb.cause(r.finding, r.otherwise_cause))
      fail(doc, where + ": the playbook has no cause '" + r.otherwise_cause + "' for " + r.finding);
  }
  if (j.contains("escalate")) {
    const json& e = j.at("escalate");
    const std::string ew = where + ".escalate";
    if (!e.is_object()) fail(doc, ew + " must be an object {when, unless, severity}");
    only_keys(e, {"when", "unless", "severity"}, doc, ew);
    r.escalate_when = opt_strings(e, "when", doc, ew);
    r.escalate_unless = opt_strings(e, "unless", doc, ew);
    r.escalate_severity = opt_severity(e, "severity", doc, ew);
    if (r.escalate_when.empty() || r.escalate_severity == Severity::kUnknown)
      fail(doc, ew + " needs when (rule keys) and a severity");
    if (r.finding.empty()) fail(doc, ew + ": a signal has no severity to raise");
  }
  r.lookalikes = opt_strings(j, "lookalikes", doc, where);
  return r;
}

FindingRef parse_ref(const std::string& s, bool allow_any, const Playbook& pb, const std::string& doc,
                     const std::string& where) {
  FindingRef r;
  const auto slash = s.find('/');
  r.id = s.substr(0, slash);
  r.any_cause = slash == std::string::npos;
  if (!r.any_cause) r.cause = s.substr(slash + 1);
  if (!find_finding_kind(r.id)) fail(doc, where + ": unknown finding id '" + r.id + "'");
  if (r.any_cause && !allow_any) fail(doc, where + ": '" + s + "' must name a cause (\"id/cause\", or \"id/\" for the default)");
  if (!r.cause.empty() && !pb.cause(r.id, r.cause))
    fail(doc, where + ": the playbook has no cause '" + r.cause + "' for " + r.id);
  return r;
}

Fold parse_fold(const json& j, const std::string& doc, const Playbook& pb) {
  const std::string where = item_where("fold", j);
  only_keys(j, {"key", "finding", "when", "when_severity", "into", "why"}, doc, where);
  Fold f;
  f.key = opt_string(j, "key", doc, where);
  if (!good_key(f.key)) fail(doc, where + ": key must be lower_snake words joined by dots");
  const std::string finding = opt_string(j, "finding", doc, where);
  if (finding.empty()) fail(doc, where + ": 'finding' is required");
  f.finding = parse_ref(finding, true, pb, doc, where + ".finding");
  for (const auto& w : opt_strings(j, "when", doc, where)) f.when.push_back(parse_ref(w, true, pb, doc, where + ".when"));
  if (j.contains("when_severity")) {
    f.when_severity = opt_severity(j, "when_severity", doc, where);
    if (!f.when.empty() || j.contains("into"))
      fail(doc, where + ": a fold with 'when_severity' drops its finding: no 'when', no 'into'");
  } else if (f.when.empty()) {
    fail(doc, where + ": 'when' must name at least one finding");
  }
  const std::string into = opt_string(j, "into", doc, where);
  if (!into.empty()) {
    f.into = parse_ref(into, false, pb, doc, where + ".into");
    if (!f.finding.any_cause && f.into.id == f.finding.id && f.into.cause == f.finding.cause)
      fail(doc, where + ": 'into' is the finding itself");
  }
  f.why = opt_string(j, "why", doc, where);
  if (f.why.empty()) fail(doc, where + ": 'why' is required (the reasoning, for readers of the data)");
  return f;
}

// One keyed list of a rules document (rules[], folds[]): each item parsed,
// its origin set, its key unique in the document.
template <typename T, typename Parse>
std::vector<T> parse_keyed(const json& root, const char* list, const char* what, const std::string& doc, Parse parse) {
  std::vector<T> out;
  if (!root.contains(list)) return out;
  if (!root.at(list).is_array()) fail(doc, std::string("'") + list + "' must be an array");
  std::set<std::string> keys;
  for (const auto& j : root.at(list)) {
    T item = parse(j);
    item.origin = doc;
    if (!keys.insert(item.key).second) fail(doc, std::string("duplicate ") + what + " key '" + item.key + "'");
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& known_judges() {
  static const std::vector<std::string> j = {"xid", "selinux",  "cuda_version", "governor",
                                              "aer", "nccl_net", "data_time",    "answer_false"};
  return j;
}

RuleSet RuleSet::parse(const std::string& json_text, const std::string& name, const Playbook& pb) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    fail(name, std::string("not valid JSON: ") + e.what());
  }
  only_keys(root, {"schema", "description", "defines", "rules", "folds"}, name, "the document");
  if (root.value("schema", "") != "nodeprobe.rules/1") fail(name, "schema must be nodeprobe.rules/1");
  if (!root.contains("rules")) fail(name, "'rules' must be an array");
  RuleSet set;
  Defines defs = parse_defines(root, name);
  set.rules_ = parse_keyed<Rule>(root, "rules", "rule", name, [&](const json& j) { return parse_rule(j, name, pb, defs); });
  for (const auto& [key, d] : defs)
    if (!d.used) fail(name, "define '" + key + "' is not used");
  set.folds_ = parse_keyed<Fold>(root, "folds", "fold", name, [&](const json& j) { return parse_fold(j, name, pb); });
  set.check_references(name);
  set.expand_yields();
  set.check_explained_rings();
  return set;
}

void RuleSet::expand_yields() {
  // A rule that may say nothing (its context is required or can explain it
  // away, with no fallback) is no sure winner: it does not silence the rules
  // that yield, or a line it matches without its context would name nothing.
  const auto may_stay_silent = [](const Rule& o) { return o.context_gated() && !o.has_fallback(); };
  // Does a rule give way to a finding id? "*": every finding but its own.
  const auto gives_way = [](const Rule& x, const std::string& id) {
    if (x.yields_to.empty()) return false;
    if (x.yields_to.front() == "*") return id != x.finding;
    return std::find(x.yields_to.begin(), x.yields_to.end(), id) != x.yields_to.end();
  };
  for (auto& r : rules_) {
    if (r.yields_to.empty()) continue;
    for (const auto& o : rules_) {
      // A rule that yields too wins over r unless it would give way to r's
      // finding in turn (two generic tiers that yield to each other both speak).
      if (&o == &r || o.finding.empty() || may_stay_silent(o) || gives_way(o, r.finding)) continue;
      if (!gives_way(r, o.finding)) continue;
      if (std::find(r.suppressed_by.begin(), r.suppressed_by.end(), o.key) == r.suppressed_by.end())
        r.suppressed_by.push_back(o.key);
    }
  }
}

void RuleSet::check_explained_rings() const {
  // Rules that explain each other away in a ring (a by b, b by a; or a by
  // b by c by a), none with a fallback, would all stay silent on a log that
  // matches them all: refused, naming the ring.
  std::map<std::string, const Rule*> silent;
  for (const auto& r : rules_)
    if (!r.explained_by.empty() && !r.has_fallback()) silent[r.key] = &r;
  std::map<std::string, int> state;  // 1: on the path, 2: done
  std::vector<std::string> path;
  std::function<void(const Rule&)> visit = [&](const Rule& r) {
    state[r.key] = 1;
    path.push_back(r.key);
    for (const auto& k : r.explained_by) {
      const auto it = silent.find(k);
      if (it == silent.end()) continue;
      if (state[k] == 1) {
        std::string ring;
        for (auto p = std::find(path.begin(), path.end(), k); p != path.end(); ++p) ring += *p + " -> ";
        throw RulesError(it->second->origin + ": rules explain each other away in a ring with no fallback (" + ring + k +
                         "): a log with them all would name none");
      }
      if (state[k] == 0) visit(*it->second);
    }
    path.pop_back();
    state[r.key] = 2;
  };
  for (const auto& [key, r] : silent)
    if (state[key] == 0) visit(*r);
}

void RuleSet::check_references(const std::string& name) const {
  for (const auto& r : rules_) {
    for (const auto& s : r.suppressed_by)
      if (!find(s)) fail(name, "rule " + r.key + ": suppressed_by names unknown rule '" + s + "'");
    for (const auto& s : r.needs)
      if (!find(s)) fail(name, "rule " + r.key + ": needs names unknown rule '" + s + "'");
    for (const auto& s : r.explained_by)
      if (!find(s)) fail(name, "rule " + r.key + ": explained_by names unknown rule '" + s + "'");
    for (const auto* list : {&r.escalate_when, &r.escalate_unless})
      for (const auto& s : *list)
        if (!find(s)) fail(name, "rule " + r.key + ": escalate names unknown rule '" + s + "'");
  }
}

void RuleSet::add(const RuleSet& site) {
  for (const auto& r : site.rules_) {
    if (find(r.key)) throw RulesError(r.origin + ": rule key '" + r.key + "' is already defined (" + find(r.key)->origin + ")");
    rules_.push_back(r);
  }
  for (const auto& f : site.folds_) {
    for (const auto& o : folds_)
      if (o.key == f.key) throw RulesError(f.origin + ": fold key '" + f.key + "' is already defined (" + o.origin + ")");
    folds_.push_back(f);
  }
  check_references(site.rules_.empty() ? std::string("rules") : site.rules_.front().origin);
  expand_yields();
  check_explained_rings();
}

const Rule* RuleSet::find(const std::string& key) const {
  for (const auto& r : rules_)
    if (r.key == key) return &r;
  return nullptr;
}

std::size_t RuleSet::pattern_count() const {
  std::size_t n = 0;
  for (const auto& r : rules_) n += r.patterns.size();
  return n;
}

const char* embedded_rules_json() { return kNodeprobeRulesJson; }

const RuleSet& default_rules() {
  // Like the playbook: the installed (or --share-dir / NODEPROBE_SHARE_DIR)
  // copy wins, so a site can adapt its rules without a rebuild; the copy
  // built in serves a binary copied on its own.
  static const RuleSet rules = [] {
    if (auto text = read_share_file("playbook/rules.json"))
      return RuleSet::parse(*text, *share_dir() + "playbook/rules.json", default_playbook());
    return RuleSet::parse(kNodeprobeRulesJson, "rules.json", default_playbook());
  }();
  return rules;
}

std::string to_posix_ere(const std::string& pattern) {
  if (pattern.rfind("(?i)", 0) != 0) return pattern;
  const std::string p = pattern.substr(4);
  auto other = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return static_cast<char>(std::islower(u) ? std::toupper(u) : std::tolower(u));
  };
  auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {  // escapes (\s, \., ...) stay as they are
      out += c;
      out += p[++i];
    } else if (c == '[') {
      // A bracket expression: keep it, then add the other case of its
      // letters and letter ranges ([a-f] -> [a-fA-F]).
      std::size_t j = i + 1;
      std::string head = "[";
      if (j < p.size() && p[j] == '^') head += p[j++];
      std::string body, extra;
      bool first = true;
      while (j < p.size() && (p[j] != ']' || first)) {
        first = false;
        if (p[j] == '\\' && j + 1 < p.size()) {
          body += p.substr(j, 2);
          j += 2;
        } else if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
          body += p.substr(j, 3);
          if (letter(p[j]) && letter(p[j + 2])) extra += std::string(1, other(p[j])) + "-" + other(p[j + 2]);
          j += 3;
        } else {
          body += p[j];
          if (letter(p[j])) extra += other(p[j]);
          ++j;
        }
      }
      // A trailing '-' is a literal only in last place: keep it there.
      const bool dash = body.size() > 1 && body.back() == '-' && body[body.size() - 2] != '\\';
      if (dash) body.pop_back();
      out += head + body + extra + (dash ? "-" : "") + "]";
      i = j;
    } else if (letter(c)) {
      out += '[';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> anchored_alternatives(const std::string& pattern) {
  const bool fold = pattern.rfind("(?i)", 0) == 0;
  const std::string body = fold ? pattern.substr(4) : pattern;
  if (body.rfind('^', 0) == 0) return {pattern};
  // Split at the top level only: skip escapes, bracket expressions (where
  // | and ^ are literal or negate) and groups.
  std::vector<std::string> out;
  int depth = 0;
  bool in_class = false;
  std::size_t start = 0;
  auto take = [&](std::size_t end) {
    if (start < body.size() && body[start] == '^') out.push_back((fold ? "(?i)" : "") + body.substr(start, end - start));
  };
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      // ']' first in a bracket expression (after an optional ^) is literal.
      if (c == ']' && !(i > 0 && (body[i - 1] == '[' || (body[i - 1] == '^' && i > 1 && body[i - 2] == '['))))
        in_class = false;
    } else if (c == '[') {
      in_class = true;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == '|' && depth == 0) {
      take(i);
      start = i + 1;
    }
  }
  take(body.size());
  return out;
}

}  // namespace nodeprobe::diag
