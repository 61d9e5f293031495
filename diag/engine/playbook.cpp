#include "playbook.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "nodeprobe/finding_ids.h"
#include "nodeprobe/instance_table.h"
#include "nodeprobe/share_dir.h"

extern const char* const kNodeprobePlaybookJson;
extern const char* const kNodeprobeXidJson;

namespace nodeprobe::diag {
namespace {

using nlohmann::json;

const std::set<std::string> kCategories = {"gpu", "driver", "cuda", "nccl", "network", "efa", "selinux",
                                           "limits", "cpu", "io", "storage", "probe", "memory", "job"};

[[noreturn]] void fail(const std::string& doc, const std::string& what) {
  throw PlaybookError(doc + ": " + what);
}

void only_keys(const json& j, const std::set<std::string>& allowed, const std::string& doc,
               const std::string& where) {
  if (!j.is_object()) fail(doc, where + " must be an object");
  for (const auto& kv : j.items())
    if (!allowed.count(kv.key())) fail(doc, "unknown key '" + kv.key() + "' in " + where);
}

std::string need_string(const json& j, const char* key, const std::string& doc, const std::string& where,
                        bool required = true) {
  if (!j.contains(key)) {
    if (required) fail(doc, where + " lacks '" + key + "'");
    return {};
  }
  if (!j.at(key).is_string() || j.at(key).get<std::string>().empty())
    fail(doc, where + "." + key + " must be a non-empty string");
  return j.at(key).get<std::string>();
}

std::vector<std::string> string_list(const json& j, const char* key, const std::string& doc,
                                     const std::string& where, bool required, bool non_empty) {
  std::vector<std::string> out;
  if (!j.contains(key)) {
    if (required) fail(doc, where + " lacks '" + key + "'");
    return out;
  }
  if (!j.at(key).is_array()) fail(doc, where + "." + key + " must be an array");
  for (const auto& v : j.at(key)) {
    if (!v.is_string() || v.get<std::string>().empty())
      fail(doc, where + "." + key + " holds a non-string or empty item");
    out.push_back(v.get<std::string>());
  }
  if (non_empty && out.empty()) fail(doc, where + "." + key + " is empty");
  return out;
}

Severity need_severity(const json& j, const std::string& doc, const std::string& where, bool required) {
  if (!j.contains("severity")) {
    if (required) fail(doc, where + " lacks 'severity'");
    return Severity::kUnknown;
  }
  const Severity s = j.at("severity").is_string()
                         ? severity_from_string(j.at("severity").get<std::string>())
                         : Severity::kUnknown;
  if (s == Severity::kUnknown) fail(doc, where + ".severity must be info, warn or error");
  return s;
}

// Placeholders are {lower_snake}; [optional segments] are not nested; any
// other brace or bracket is an error. Remedy steps (segments = false) are
// commands: their brackets are literal.
void check_template(const std::string& t, const std::string& doc, const std::string& where, bool segments = true) {
  bool in_segment = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!segments && (t[i] == '[' || t[i] == ']')) continue;
    if (t[i] == '[') {
      if (in_segment) fail(doc, where + ": nested [ in \"" + t + "\"");
      in_segment = true;
      continue;
    }
    if (t[i] == ']') {
      if (!in_segment) fail(doc, where + ": stray ] in \"" + t + "\"");
      in_segment = false;
      continue;
    }
    if (t[i] == '}') fail(doc, where + ": stray '}' in \"" + t + "\"");
    if (t[i] != '{') continue;
    const std::size_t e = t.find('}', i);
    if (e == std::string::npos || e == i + 1) fail(doc, where + ": unterminated or empty {} in \"" + t + "\"");
    for (std::size_t k = i + 1; k < e; ++k)
      if (!(std::islower(static_cast<unsigned char>(t[k])) || t[k] == '_' ||
            std::isdigit(static_cast<unsigned char>(t[k]))))
        fail(doc, where + ": bad placeholder in \"" + t + "\"");
    i = e;
  }
  if (in_segment) fail(doc, where + ": unterminated [ in \"" + t + "\"");
}

json parse_doc(const std::string& text, const std::string& doc) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail(doc, std::string("not valid JSON: ") + e.what());
  }
}

std::string fact_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    std::size_t n = 0;
    for (const auto& x : v) {
      if (n == 6) {
        out += ", ... (" + std::to_string(v.size()) + " in all)";
        break;
      }
      out += (n++ ? ", " : "") + fact_text(x);
    }
    return out;
  }
  if (v.is_null()) return {};
  return v.dump();
}

}  // namespace

namespace {

// Fills one run of text without brackets; false when a fact was missing.
bool fill_plain(const std::string& t, const Json& facts, std::string* out) {
  bool ok = true;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::size_t e = t[i] == '{' ? t.find('}', i) : std::string::npos;
    if (e == std::string::npos) {
      *out += t[i];
      continue;
    }
    const std::string name = t.substr(i + 1, e - i - 1);
    const std::string value = facts.is_object() && facts.contains(name) ? fact_text(facts.at(name)) : "";
    if (value.empty()) {
      *out += "<" + name + ">";
      ok = false;
    } else {
      *out += value;
    }
    i = e;
  }
  return ok;
}

}  // namespace

std::string fill_template(const std::string& tmpl, const Json& facts, bool* complete) {
  std::string out;
  std::size_t pos = 0;
  while (pos < tmpl.size()) {
    const std::size_t open = tmpl.find('[', pos);
    const std::size_t close = open == std::string::npos ? std::string::npos : tmpl.find(']', open);
    if (close == std::string::npos) {
      if (!fill_plain(tmpl.substr(pos), facts, &out) && complete) *complete = false;
      break;
    }
    if (!fill_plain(tmpl.substr(pos, open - pos), facts, &out) && complete) *complete = false;
    std::string segment;
    if (fill_plain(tmpl.substr(open + 1, close - open - 1), facts, &segment)) out += segment;
    pos = close + 1;
  }
  return out;
}

std::string fill_step(const std::string& step, const Json& facts) {
  std::string out;
  fill_plain(step, facts, &out);
  return out;
}

Playbook Playbook::parse(const std::string& playbook_json, const std::string& xid_json,
                         const std::string& instances_json) {
  Playbook pb;
  // ---- playbook.json ---------------------------------------------------------------
  const std::string doc = "playbook.json";
  const json root = parse_doc(playbook_json, doc);
  only_keys(root, {"schema", "description", "entries"}, doc, "the document");
  if (root.value("schema", "") != "nodeprobe.playbook/1") fail(doc, "schema must be nodeprobe.playbook/1");
  if (!root.contains("entries") || !root.at("entries").is_array()) fail(doc, "'entries' must be an array");
  std::set<std::string> seen;
  for (const auto& e : root.at("entries")) {
    const std::string where = "entry " + (e.is_object() ? e.value("id", std::string("?")) : "?");
    only_keys(e, {"id", "title", "severity", "category", "message", "remedy", "refs", "causes", "replaced_by_check_fix",
                  "action", "consequence_of"},
              doc, where);
    PlaybookEntry pe;
    pe.id = need_string(e, "id", doc, where);
    if (!find_finding_kind(pe.id)) fail(doc, "unknown finding id '" + pe.id + "' (not in finding_ids.cpp)");
    if (!seen.insert(pe.id).second) fail(doc, "duplicate entry for '" + pe.id + "'");
    pe.title = need_string(e, "title", doc, where);
    pe.severity = need_severity(e, doc, where, true);
    pe.category = need_string(e, "category", doc, where);
    if (!kCategories.count(pe.category)) fail(doc, where + ": unknown category '" + pe.category + "'");
    pe.message = need_string(e, "message", doc, where);
    check_template(pe.message, doc, where + ".message");
    pe.remedy = string_list(e, "remedy", doc, where, true, true);
    for (const auto& r : pe.remedy) check_template(r, doc, where + ".remedy", false);
    pe.refs = string_list(e, "refs", doc, where, true, false);
    pe.action = need_string(e, "action", doc, where);
    if (action_rank(pe.action) < 0) fail(doc, where + ": unknown action '" + pe.action + "'");
    pe.consequence_of = string_list(e, "consequence_of", doc, where, false, false);
    for (const auto& c : pe.consequence_of)
      if (c.back() != '.' && !find_finding_kind(c)) fail(doc, where + ".consequence_of: unknown finding id '" + c + "'");
    if (e.contains("replaced_by_check_fix")) {
      const json& v = e.at("replaced_by_check_fix");
      if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > static_cast<int>(pe.remedy.size()))
        fail(doc, where + ".replaced_by_check_fix must be an integer from 0 to the number of remedy steps");
      pe.replaced_by_check_fix = v.get<int>();
    }
    if (e.contains("causes")) {
      if (!e.at("causes").is_object()) fail(doc, where + ".causes must be an object");
      for (const auto& c : e.at("causes").items()) {
        const std::string cw = where + ".causes." + c.key();
        if (c.key().empty() || !std::all_of(c.key().begin(), c.key().end(), [](char ch) {
              return std::islower(static_cast<unsigned char>(ch)) || ch == '_';
            }))
          fail(doc, cw + ": cause keys are lower_snake");
        only_keys(c.value(), {"message", "severity", "remedy", "refs", "remedy_only", "action", "consequence_of"}, doc, cw);
        PlaybookCause pc;
        pc.message = need_string(c.value(), "message", doc, cw);
        check_template(pc.message, doc, cw + ".message");
        pc.severity = need_severity(c.value(), doc, cw, false);
        pc.remedy = string_list(c.value(), "remedy", doc, cw, false, false);
        for (const auto& r : pc.remedy) check_template(r, doc, cw + ".remedy", false);
        pc.refs = string_list(c.value(), "refs", doc, cw, false, false);
        pc.action = need_string(c.value(), "action", doc, cw, false);
        if (!pc.action.empty() && action_rank(pc.action) < 0) fail(doc, cw + ": unknown action '" + pc.action + "'");
        pc.consequence_of = string_list(c.value(), "consequence_of", doc, cw, false, false);
        pc.own_consequence_of = c.value().contains("consequence_of");
        for (const auto& q : pc.consequence_of)
          if (q.back() != '.' && !find_finding_kind(q)) fail(doc, cw + ".consequence_of: unknown finding id '" + q + "'");
        if (c.value().contains("remedy_only")) {
          if (!c.value().at("remedy_only").is_boolean()) fail(doc, cw + ".remedy_only must be true or false");
          pc.remedy_only = c.value().at("remedy_only").get<bool>();
          if (pc.remedy_only && pc.remedy.empty()) fail(doc, cw + ": remedy_only needs remedy steps");
        }
        pe.causes.emplace(c.key(), std::move(pc));
      }
    }
    pb.entries_.push_back(std::move(pe));
  }
  for (const auto& k : finding_vocabulary())
    if (!seen.count(std::string(k.id))) fail(doc, "no entry for finding id '" + std::string(k.id) + "'");

  // ---- xid.json -------------------------------------------------------------------------
  const std::string xdoc = "xid.json";
  const json xr = parse_doc(xid_json, xdoc);
  only_keys(xr, {"schema", "description", "unknown", "codes"}, xdoc, "the document");
  if (xr.value("schema", "") != "nodeprobe.xid/1") fail(xdoc, "schema must be nodeprobe.xid/1");
  auto read_xid = [&](const json& x, const std::string& where) {
    only_keys(x, {"name", "meaning", "action", "severity", "node_action", "cause"}, xdoc, where);
    XidInfo xi;
    xi.name = need_string(x, "name", xdoc, where);
    xi.meaning = need_string(x, "meaning", xdoc, where);
    xi.action = need_string(x, "action", xdoc, where);
    xi.severity = need_severity(x, xdoc, where, true);
    xi.node_action = need_string(x, "node_action", xdoc, where);
    if (action_rank(xi.node_action) < 0) fail(xdoc, where + ": unknown node_action '" + xi.node_action + "'");
    if (x.contains("cause")) {
      xi.cause = need_string(x, "cause", xdoc, where);
      if (!pb.cause("gpu.xid", xi.cause)) fail(xdoc, where + ": the playbook has no cause '" + xi.cause + "' for gpu.xid");
    }
    return xi;
  };
  if (!xr.contains("unknown")) fail(xdoc, "lacks 'unknown'");
  pb.unknown_xid_ = read_xid(xr.at("unknown"), "unknown");
  if (!xr.contains("codes") || !xr.at("codes").is_object()) fail(xdoc, "'codes' must be an object");
  for (const auto& c : xr.at("codes").items()) {
    const std::string& k = c.key();
    if (k.empty() || k.size() > 4 || !std::all_of(k.begin(), k.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      fail(xdoc, "code '" + k + "' is not a number");
    XidInfo xi = read_xid(c.value(), "code " + k);
    xi.code = std::stoi(k);
    xi.known = true;
    pb.xids_[xi.code] = xi;
  }

  // ---- instance_types.json --------------------------------------------------------------
  // The one instance table (nodeprobe/instance_table.h), not a copy of its own.
  try {
    for (const auto& [type, spec] : parse_instance_table(instances_json, "instance_types.json").types)
      pb.instances_.emplace(type, InstanceInfo{spec.gpu_count.value_or(0), spec.gpu_model, spec.efa, spec.nvswitch});
  } catch (const InstanceTableError& e) {
    throw PlaybookError(e.what());
  }
  return pb;
}

const PlaybookEntry* Playbook::entry(std::string_view id) const {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const PlaybookEntry& e) { return e.id == id; });
  return it == entries_.end() ? nullptr : &*it;
}

const PlaybookCause* Playbook::cause(std::string_view id, std::string_view cause) const {
  const PlaybookEntry* e = entry(id);
  if (!e) return nullptr;
  auto it = e->causes.find(std::string(cause));
  return it == e->causes.end() ? nullptr : &it->second;
}

Json Playbook::xid_facts(const XidInfo& x) {
  return {{"code", std::to_string(x.code)}, {"xid_name", x.name},         {"xid_meaning", x.meaning},
          {"xid_action", x.action},          {"xid_node_action", x.node_action}};
}

std::string recovery_node_action(std::string_view text) {
  if (text.find("Reboot") != std::string_view::npos || text.find("reboot") != std::string_view::npos) return "reboot";
  if (text.find("Reset") != std::string_view::npos || text.find("Drain") != std::string_view::npos) return "reset-gpu";
  return "";
}

XidInfo Playbook::xid(int code) const {
  auto it = xids_.find(code);
  if (it != xids_.end()) return it->second;
  XidInfo x = unknown_xid_;
  x.code = code;
  x.known = false;
  return x;
}

const InstanceInfo* Playbook::instance(std::string_view type) const {
  auto it = instances_.find(type);
  return it == instances_.end() ? nullptr : &it->second;
}

void Playbook::render(Finding& f, const std::string& cause_key, Severity override) const {
  const PlaybookEntry* e = entry(f.id);
  if (!e) {  // an id the playbook lacks: impossible after validation, kept safe anyway
    if (f.title.empty()) f.title = f.id;
    return;
  }
  const PlaybookCause* c = cause_key.empty() ? nullptr : cause(f.id, cause_key);
  bool complete = true;
  const std::string& tmpl = c ? c->message : e->message;
  const std::string message = fill_template(tmpl, f.facts, &complete);
  f.title = complete ? message : e->title;  // required facts missing: the plain title reads better
  f.severity = override != Severity::kUnknown ? override
               : (c && c->severity != Severity::kUnknown) ? c->severity
                                                          : e->severity;
  std::vector<std::string> steps = f.remedy;
  auto add = [&](const std::string& s) {
    const std::string filled = fill_step(s, f.facts);
    if (std::find(steps.begin(), steps.end(), filled) == steps.end()) steps.push_back(filled);
  };
  const bool exact_fix = !f.remedy.empty();
  if (c)
    for (const auto& s : c->remedy) add(s);
  if (!c || !c->remedy_only)
    for (std::size_t i = 0; i < e->remedy.size(); ++i)
      if (!exact_fix || static_cast<int>(i) >= e->replaced_by_check_fix) add(e->remedy[i]);
  f.remedy = std::move(steps);
  std::vector<std::string> refs = f.refs;
  auto add_ref = [&](const std::string& r) {
    if (std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(r);
  };
  if (c)
    for (const auto& r : c->refs) add_ref(r);
  for (const auto& r : e->refs) add_ref(r);
  f.refs = std::move(refs);
  f.facts["category"] = e->category;
  if (!cause_key.empty()) f.facts["cause"] = cause_key;
  f.action = c && !c->action.empty() ? c->action : e->action;
  if (f.facts.contains("xid_node_action") && f.facts.at("xid_node_action").is_string())
    f.action = f.facts.at("xid_node_action").get<std::string>();
  if (f.severity == Severity::kInfo) f.action = "none";
}

const char* embedded_playbook_json() { return kNodeprobePlaybookJson; }
const char* embedded_xid_json() { return kNodeprobeXidJson; }

const Playbook& default_playbook() {
  // The installed data files win (a site may adapt them; NODEPROBE_SHARE_DIR
  // points elsewhere); the copy built in serves a binary copied on its own.
  auto doc = [](const char* rel, const char* built_in) { return read_share_file(rel).value_or(built_in); };
  static const Playbook pb = Playbook::parse(doc("playbook/playbook.json", kNodeprobePlaybookJson),
                                             doc("playbook/xid.json", kNodeprobeXidJson),
                                             instance_table_text());
  return pb;
}

}  // namespace nodeprobe::diag
