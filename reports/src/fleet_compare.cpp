#include "nodeprobe/fleet_compare.h"

#include "nodeprobe/metric_descriptor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "nodeprobe/metric_select.h"
#include "nodeprobe/render_compare.h"

namespace nodeprobe {
namespace {

Metric as_metric(const std::string& name, double value, const Stats& st, const std::string& unit) {
  Metric m;
  m.name = name;
  m.value = value;
  m.unit = unit;
  m.better = Better::kHigher;
  if (st.n > 0) m.stats = st;
  return m;
}

void add_diff(FleetComparison& c, const std::string& probe, const Metric& b, const Metric& a, const Labels& labels) {
  MetricDiff d;
  d.probe = probe;
  d.name = a.name;
  d.unit = a.unit;
  d.labels = labels;
  d.better = a.better;
  // The fleet report keeps metrics, not their probes' descriptors: one built from the metric (kind from its stats).
  d.descriptor = descriptor_of(ProbeResult{}, a);
  d.before = side_of(b);
  d.after = side_of(a);
  d.judgement = judge(d.before, d.after, d.better, d.descriptor, c.options);
  c.metrics.push_back(std::move(d));
}

std::string pair_key(const std::string& a, const std::string& b) { return a < b ? a + "|" + b : b + "|" + a; }

std::string setting_text(const Json& j) {
  if (j.is_null()) return "(not recorded)";
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

std::vector<std::string> settings_changed(const Json& before, const Json& after) {
  std::vector<std::string> out;
  if (!before.is_object() || !after.is_object()) return out;
  for (const char* k : kFleetMeasurementKeys) {
    const Json b = before.contains(k) ? before[k] : Json();
    const Json a = after.contains(k) ? after[k] : Json();
    // A report from before the setting existed says nothing about it.
    if (b.is_null() || a.is_null() || b == a) continue;
    out.push_back(std::string(k) + " " + setting_text(b) + " -> " + setting_text(a));
  }
  return out;
}

}  // namespace

std::size_t FleetComparison::count(Verdict v) const {
  return static_cast<std::size_t>(
      std::count_if(metrics.begin(), metrics.end(), [&](const MetricDiff& d) { return d.judgement.verdict == v; }));
}

FleetComparison compare_fleets(const FleetReport& before, const FleetReport& after, const CompareOptions& opt,
                               const std::string& origin_before, const std::string& origin_after) {
  FleetComparison c;
  c.options = opt;
  c.origin_before = origin_before;
  c.origin_after = origin_after;
  c.verdict_before = before.verdict;
  c.verdict_after = after.verdict;
  c.settings = settings_changed(before.config, after.config);
  std::set<std::string> after_hosts;
  for (const auto& n : after.nodes) after_hosts.insert(n.host);
  for (const auto& b : before.nodes)
    if (!after_hosts.count(b.host)) c.only_before.push_back(b.host);
  for (const auto& a : after.nodes) {
    const FleetNode* b = find_fleet_node(before, a.host);
    if (!b) {
      c.only_after.push_back(a.host);
      continue;
    }
    if (b->verdict != a.verdict || b->action != a.action)
      c.changes.push_back({a.host, b->verdict, a.verdict, b->action, a.action});
    std::map<std::string, int> seen;
    for (const auto& m : a.metrics) {
      const std::string key = m.name + labels_key(m.labels);
      const int occ = seen[key]++;
      int k = 0;
      for (const auto& bm : b->metrics) {
        if (bm.name != m.name || bm.labels != m.labels) continue;
        if (k++ == occ) {
          Labels l = m.labels;
          l.erase("key");
          add_diff(c, "node:" + a.host, bm, m, l);
          break;
        }
      }
    }
  }
  std::map<std::string, const FleetPair*> before_pairs;
  for (const auto& p : before.pairs)
    if (p.status == Status::kPass) before_pairs[pair_key(p.a, p.b)] = &p;
  for (const auto& p : after.pairs) {
    if (p.status != Status::kPass) continue;
    auto it = before_pairs.find(pair_key(p.a, p.b));
    if (it == before_pairs.end()) continue;
    const std::string lo = std::min(p.a, p.b), hi = std::max(p.a, p.b);
    add_diff(c, "pair", as_metric("busbw", it->second->busbw, it->second->stats, "GB/s"),
             as_metric("busbw", p.busbw, p.stats, "GB/s"), {{"a", lo}, {"b", hi}});
  }
  for (const auto& p : after.ring) {
    if (p.status != Status::kPass) continue;
    for (const auto& q : before.ring)
      if (q.nodes == p.nodes && q.status == Status::kPass)
        add_diff(c, "ring", as_metric("busbw", q.busbw, q.stats, "GB/s"), as_metric("busbw", p.busbw, p.stats, "GB/s"),
                 {{"nodes", std::to_string(p.nodes)}});
  }
  return c;
}

void render_fleet_compare_text(const FleetComparison& c, std::ostream& o) {
  o << "fleet compare: " << c.origin_before << " (" << to_string(c.verdict_before) << ") -> " << c.origin_after
    << " (" << to_string(c.verdict_after) << "), threshold " << c.options.threshold_pct << " %\n";
  for (const auto& s : c.settings) o << "setting changed (the likely cause of what moved): " << s << "\n";
  o << "metrics: " << c.count(Verdict::kWorse) << " worse, " << c.count(Verdict::kBetter) << " better, "
    << c.count(Verdict::kAmbiguous) << " ambiguous, " << c.count(Verdict::kSame) << " same\n";
  std::vector<const MetricDiff*> v;
  for (const auto& d : c.metrics) v.push_back(&d);
  std::stable_sort(v.begin(), v.end(), [](const MetricDiff* a, const MetricDiff* b) {
    return verdict_order(a->judgement.verdict) < verdict_order(b->judgement.verdict);
  });
  char line[512];
  for (const MetricDiff* d : v) {
    std::snprintf(line, sizeof line, "  %-9s %-50s %22s -> %-22s %9s %s\n",
                  std::string(to_string(d->judgement.verdict)).c_str(),
                  (d->probe + " " + d->name + labels_text(d->labels)).substr(0, 50).c_str(), format_side(d->before, d->descriptor).c_str(),
                  format_side(d->after, d->descriptor).c_str(), format_delta(d->judgement.delta_pct).c_str(), d->unit.c_str());
    o << line;
  }
  for (const auto& ch : c.changes)
    o << "  node " << ch.host << ": " << to_string(ch.before) << " (" << ch.action_before << ") -> "
      << to_string(ch.after) << " (" << ch.action_after << ")\n";
  for (const auto& h : c.only_before) o << "  only in before: " << h << "\n";
  for (const auto& h : c.only_after) o << "  only in after: " << h << "\n";
}

void render_fleet_compare_markdown(const FleetComparison& c, std::ostream& o) {
  o << "## Fleet compare: `" << c.origin_before << "` -> `" << c.origin_after << "`\n\n"
    << "Verdict " << to_string(c.verdict_before) << " -> " << to_string(c.verdict_after) << "; "
    << c.count(Verdict::kWorse) << " worse, " << c.count(Verdict::kBetter) << " better.\n\n";
  for (const auto& s : c.settings) o << "Setting changed (the likely cause of what moved): `" << s << "`\n\n";
  o << "| verdict | what | before | after | delta |\n|---|---|---|---|---|\n";
  for (const auto& d : c.metrics)
    o << "| " << to_string(d.judgement.verdict) << " | " << d.probe << " " << d.name << labels_text(d.labels) << " | "
      << format_side(d.before, d.descriptor) << " | " << format_side(d.after, d.descriptor) << " | " << format_delta(d.judgement.delta_pct)
      << " |\n";
  if (!c.changes.empty()) {
    o << "\n| node | before | after |\n|---|---|---|\n";
    for (const auto& ch : c.changes)
      o << "| " << ch.host << " | " << to_string(ch.before) << " (" << ch.action_before << ") | " << to_string(ch.after)
        << " (" << ch.action_after << ") |\n";
  }
}

Json fleet_compare_to_json(const FleetComparison& c) {
  Json j;
  j["schema"] = "nodeprobe.fleet-compare/1";
  j["before"] = {{"origin", c.origin_before}, {"verdict", to_string(c.verdict_before)}};
  j["after"] = {{"origin", c.origin_after}, {"verdict", to_string(c.verdict_after)}};
  j["threshold_pct"] = c.options.threshold_pct;
  Json m = Json::array();
  for (const auto& d : c.metrics)
    m.push_back({{"what", d.probe},
                 {"name", d.name},
                 {"labels", d.labels},
                 {"unit", d.unit},
                 {"before", d.before.center},
                 {"after", d.after.center},
                 {"delta_pct", std::isfinite(d.judgement.delta_pct) ? Json(d.judgement.delta_pct) : Json(nullptr)},
                 {"verdict", to_string(d.judgement.verdict)},
                 {"reason", d.judgement.reason}});
  j["metrics"] = m;
  Json ch = Json::array();
  for (const auto& x : c.changes)
    ch.push_back({{"host", x.host},
                  {"before", to_string(x.before)},
                  {"after", to_string(x.after)},
                  {"action_before", x.action_before},
                  {"action_after", x.action_after}});
  j["changes"] = ch;
  j["only_before"] = c.only_before;
  j["only_after"] = c.only_after;
  j["settings_changed"] = c.settings;
  return j;
}

}  // namespace nodeprobe
