#include "expectations.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "inventory.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/json_input.h"
#include "nodeprobe/probe.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/share_dir.h"

namespace nodeprobe::diag {

namespace {

void only_keys(const Json& j, const std::set<std::string>& allowed, const std::string& where) {
  if (!j.is_object()) throw ExpectationsError(where + ": expected an object");
  for (const auto& [k, v] : j.items())
    if (!allowed.count(k)) throw ExpectationsError(where + ": unknown key \"" + k + "\"");
}

std::string str(const Json& j, const char* key, const std::string& where, bool required = false) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) throw ExpectationsError(where + ": missing \"" + key + "\"");
    return {};
  }
  if (!it->is_string()) throw ExpectationsError(where + ": \"" + key + "\" must be a string");
  return it->get<std::string>();
}

ExpectRule parse_rule(const std::string& id, const Json& j, const std::string& where) {
  only_keys(j, {"probe", "metric", "labels", "group_by", "within", "across", "unit", "status", "finding",
                "profiles", "what"},
            where);
  ExpectRule r;
  r.id = id;
  r.probe = str(j, "probe", where, true);
  r.metric = str(j, "metric", where, true);
  r.unit = str(j, "unit", where);
  r.what = str(j, "what", where);
  r.group_by = str(j, "group_by", where);
  if (auto w = str(j, "within", where); !w.empty()) r.within = w;
  if (auto a = str(j, "across", where); !a.empty()) r.across = a;
  for (const auto* agg : {&r.within, &r.across})
    if (!agg->empty() && *agg != "max" && *agg != "min")
      throw ExpectationsError(where + ": within/across must be max or min");
  if (auto it = j.find("labels"); it != j.end()) {
    if (!it->is_object()) throw ExpectationsError(where + ": labels must be an object");
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) throw ExpectationsError(where + ": label values must be strings");
      r.labels[k] = v.get<std::string>();
    }
  }
  const std::string st = str(j, "status", where);
  if (!st.empty()) {
    r.status = status_from_string(st);
    if (r.status != Status::kWarn && r.status != Status::kFail)
      throw ExpectationsError(where + ": status must be warn or fail");
  }
  r.finding = str(j, "finding", where);
  if (!r.finding.empty() && !find_finding_kind(r.finding))
    throw ExpectationsError(where + ": unknown finding id \"" + r.finding + "\"");
  if (auto it = j.find("profiles"); it != j.end()) {
    r.profiles.clear();
    if (!it->is_array()) throw ExpectationsError(where + ": profiles must be an array");
    for (const auto& p : *it) {
      if (!p.is_string() || (p != "quick" && p != "full"))
        throw ExpectationsError(where + ": profiles must be \"quick\" and/or \"full\"");
      r.profiles.push_back(p.get<std::string>());
    }
  }
  return r;
}

std::string num_unit(double v, const std::string& unit) {
  return format_number(v) + (unit.empty() ? "" : " " + unit);
}

}  // namespace

Expectations parse_expectations(const std::string& text, const std::string& origin) {
  Expectations e;
  try {  // the type facts: the one instance table's parser
    e.table = parse_instance_table(text, origin);
  } catch (const InstanceTableError& x) {
    throw ExpectationsError(x.what());
  }
  Json j;
  try {
    j = parse_json_text(text, origin);
  } catch (const InputError& x) {
    throw ExpectationsError(x.what());
  }
  e.origin = origin;
  if (auto it = j.find("rules"); it != j.end()) {
    if (!it->is_object()) throw ExpectationsError(origin + ": rules must be an object");
    for (const auto& [id, rule] : it->items())
      e.rules[id] = parse_rule(id, rule, origin + ": rule " + id);
  }
  auto it = j.find("instance_types");
  if (it == j.end() || !it->is_object()) throw ExpectationsError(origin + ": missing \"instance_types\" object");
  for (const auto& [type, t] : it->items()) {
    const std::string where = origin + ": " + type;
    const InstanceSpec& spec = *e.table.find(type);
    InstanceExpectation x;
    x.type = type;
    x.gpu_count = spec.gpu_count;
    x.gpu_model = spec.gpu_model;
    x.efa_devices = spec.efa_devices;
    if (auto m = t.find("min"); m != t.end()) {
      if (!m->is_object()) throw ExpectationsError(where + ": min must be an object");
      for (const auto& [rule, v] : m->items()) {
        if (!e.rules.count(rule)) throw ExpectationsError(where + ": min names unknown rule \"" + rule + "\"");
        if (v.is_null()) continue;
        if (!v.is_number() || v.get<double>() < 0)
          throw ExpectationsError(where + ": min." + rule + " must be a non-negative number");
        x.min[rule] = v.get<double>();
      }
    }
    e.types[type] = std::move(x);
  }
  return e;
}

const Expectations& builtin_expectations() {
  // Installed data file first (share_dir.h), else the copy built in.
  static const Expectations e = [] {
    std::string origin;
    const std::string text = instance_table_text(&origin);
    return parse_expectations(text, origin);
  }();
  return e;
}

Expectations load_expectations(const std::string& path, const InputOverrides& limits) {
  if (path.empty()) return builtin_expectations();
  try {  // typed and bounded: /dev/zero or a FIFO is refused, a huge file stops at the cap
    return parse_expectations(read_input(path, input_limits(InputKind::kConfig, limits)), path);
  } catch (const InputError& e) {
    throw ExpectationsError(e.what());
  }
}

std::optional<double> rule_value(const Report& r, const ExpectRule& rule, std::size_t* matched,
                                 MetricDescriptor* descriptor) {
  std::map<std::string, std::vector<double>> groups;
  std::size_t n = 0;
  MetricDescriptor d;
  for (const auto& ref : select_metrics(r, rule.probe, {rule.metric}, rule.labels)) {
    if (!std::isfinite(ref.metric->value)) continue;
    if (n == 0) d = descriptor_of(*ref.probe, *ref.metric);
    std::string g;
    if (!rule.group_by.empty())
      if (auto it = ref.metric->labels.find(rule.group_by); it != ref.metric->labels.end()) g = it->second;
    groups[ref.probe->name + "|" + g].push_back(ref.metric->value);
    ++n;
  }
  if (matched) *matched = n;
  if (descriptor) *descriptor = d;
  if (groups.empty()) return std::nullopt;
  // Best within a group, worst across groups, as the metric's direction says.
  const bool higher = d.better != Better::kLower;
  const std::string within = !rule.within.empty() ? rule.within : higher ? "max" : "min";
  const std::string across = !rule.across.empty() ? rule.across : higher ? "min" : "max";
  auto reduce = [](const std::vector<double>& v, const std::string& how) {
    return how == "min" ? *std::min_element(v.begin(), v.end()) : *std::max_element(v.begin(), v.end());
  };
  std::vector<double> per_group;
  for (const auto& [g, v] : groups) per_group.push_back(reduce(v, within));
  return reduce(per_group, across);
}

ProbeResult judge_expectations(const Report& r, const Expectations& e, const std::string& type,
                               const std::string& profile, const FsRoot& fs, const std::string& note) {
  ProbeResult p;
  p.name = "expect";
  p.config = Json{{"instance_type", type}, {"profile", profile}, {"data", e.origin}};
  auto it = type.empty() ? e.types.end() : e.types.find(type);
  if (it == e.types.end()) {
    p.status = Status::kSkip;
    p.reason = type.empty() ? "no expectations: instance type unknown (" + note + ")"
                            : "no expectations for instance type " + type + " in " + e.origin;
    return p;
  }
  const InstanceExpectation& x = it->second;
  const GpuInventory gpus = gpu_inventory(fs, r.host.gpus);
  if (x.gpu_count) {
    const bool ok = gpus.count == *x.gpu_count;
    Check& c = add_check(p, "expect.gpu_count", ok ? Status::kPass : Status::kFail,
                         std::to_string(gpus.count), std::to_string(*x.gpu_count),
                         ok ? "" : "nvidia-smi -L; lsmod | grep nvidia; check the instance type and the driver",
                         gpus.count == 0 ? "gpu.not_found" : "gpu.count_mismatch");
    c.detail = "GPUs seen via " + gpus.source;
  }
  if (!x.gpu_model.empty() && gpus.count > 0) {
    std::string seen;
    bool ok = true;
    for (const auto& m : gpus.models) {
      ok = ok && m.find(x.gpu_model) != std::string::npos;
      if (seen.find(m) == std::string::npos) seen += (seen.empty() ? "" : ", ") + m;
    }
    add_check(p, "expect.gpu_model", ok ? Status::kPass : Status::kFail, seen, "contains " + x.gpu_model,
              ok ? "" : "check the instance type: this node's GPUs are not the ones " + type + " has",
              "gpu.count_mismatch");
  }
  if (x.efa_devices) {
    const EfaInventory efa = efa_inventory(fs);
    const bool ok = efa.count >= *x.efa_devices;
    Check& c = add_check(p, "expect.efa_devices", ok ? Status::kPass : Status::kFail,
                         std::to_string(efa.count), ">= " + std::to_string(*x.efa_devices),
                         ok ? "" : "install the EFA driver (aws-efa-installer), attach EFA interfaces at launch; then fi_info -p efa",
                         "efa.missing");
    c.detail = "RDMA devices bound to the efa driver in " + efa.source;
  }
  for (const auto& [rule_id, minimum] : x.min) {
    const ExpectRule& rule = e.rules.at(rule_id);
    const std::string id = "expect." + rule_id;
    const std::string expected = ">= " + num_unit(minimum, rule.unit);
    if (std::find(rule.profiles.begin(), rule.profiles.end(), profile) == rule.profiles.end()) {
      add_check(p, id, Status::kSkip, "not judged", expected).detail =
          "judged in the " + rule.profiles.front() + " profile only";
      continue;
    }
    MetricDescriptor d;
    const auto v = rule_value(r, rule, nullptr, &d);
    if (v && d.better == Better::kLower) {
      add_check(p, id, Status::kSkip, "not judged", expected).detail =
          rule.metric + " is lower-is-better (its descriptor): a minimum does not apply";
      continue;
    }
    if (v && !rule.unit.empty() && !d.unit.empty() && d.unit != rule.unit) {
      add_check(p, id, Status::kSkip, "not judged", expected).detail =
          rule.metric + " is reported in " + d.unit + ", the rule expects " + rule.unit;
      continue;
    }
    if (!v) {
      std::string why = "no " + rule.metric + labels_text(rule.labels) + " from probe " + rule.probe;
      for (const auto& pr : r.probes)
        if (probe_matches(pr.name, rule.probe) && !pr.reason.empty())
          why += "; " + pr.name + ": " + pr.reason;
      add_check(p, id, Status::kSkip, "not measured", expected).detail = why;
      continue;
    }
    const bool ok = *v >= minimum;
    Check& c = add_check(p, id, ok ? Status::kPass : rule.status, num_unit(*v, d.unit.empty() ? rule.unit : d.unit),
                         expected,
                         ok ? "" : "run the " + rule.probe + " probe alone with --verbose and compare with the peer tool; check clocks, power and PCIe/NVLink state",
                         rule.finding);
    c.detail = rule.what;
  }
  p.status = status_from_checks(p);
  return p;
}

}  // namespace nodeprobe::diag
