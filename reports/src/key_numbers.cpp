#include "nodeprobe/key_numbers.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/metric_select.h"
#include "nodeprobe/render_text.h"

namespace nodeprobe {
namespace {

bool better_than(const MetricDescriptor& d, double a, double b) {
  return d.better == Better::kLower ? a < b : a > b;
}

std::string checks_summary(const ProbeResult& p) {
  std::size_t pass = 0, warn = 0, fail = 0, skip = 0, other = 0;
  for (const auto& c : p.checks) {
    switch (c.status) {
      case Status::kPass: ++pass; break;
      case Status::kWarn: ++warn; break;
      case Status::kFail: ++fail; break;
      case Status::kSkip: ++skip; break;
      default: ++other;
    }
  }
  std::string s = std::to_string(p.checks.size()) + " checks: " + std::to_string(pass) + " pass";
  if (warn) s += ", " + std::to_string(warn) + " warn";
  if (fail) s += ", " + std::to_string(fail) + " fail";
  if (skip) s += ", " + std::to_string(skip) + " skip";
  if (other) s += ", " + std::to_string(other) + " error";
  return s;
}

}  // namespace

std::string key_numbers(const ProbeResult& p, std::size_t max_items) {
  std::vector<const MetricDescriptor*> keys;
  for (const auto& d : p.descriptors)
    if (d.key.rank > 0) keys.push_back(&d);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const MetricDescriptor* a, const MetricDescriptor* b) { return a->key.rank < b->key.rank; });
  std::vector<std::string> items;
  for (const MetricDescriptor* d : keys) {
    // The best value, per value of `per` when the key has one (in first-seen order).
    std::vector<std::string> order;
    std::map<std::string, double> best;
    for (const auto& m : p.metrics) {
      if (m.name != d->name || !std::isfinite(m.value)) continue;
      std::string group;
      if (!d->key.per.empty())
        if (auto it = m.labels.find(d->key.per); it != m.labels.end()) group = it->second;
      auto [it, fresh] = best.emplace(group, m.value);
      if (fresh) order.push_back(group);
      else if (better_than(*d, m.value, it->second)) it->second = m.value;
    }
    for (const auto& g : order) {
      std::string caption = d->key.caption;
      if (!g.empty()) caption += (caption.empty() ? "" : " ") + g;
      items.push_back((caption.empty() ? "" : caption + " ") + format_metric(*d, best[g]));
    }
  }
  if (items.empty() && p.checks.empty())  // nothing declared to sum it up: its first metrics
    for (const auto& m : p.metrics) {
      if (items.size() >= std::min<std::size_t>(max_items, 2)) break;
      items.push_back(m.name + labels_text(m.labels) + " " + format_metric(descriptor_of(p, m), m.value));
    }
  // Up to max_items numbers, then the check counts whenever there are checks.
  if (items.size() > max_items) items.resize(max_items);
  if (!p.checks.empty()) items.push_back(checks_summary(p));
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace nodeprobe
