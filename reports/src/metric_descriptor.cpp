#include "nodeprobe/metric_descriptor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "nodeprobe/render_text.h"

namespace nodeprobe {

const MetricDescriptor* find_descriptor(const ProbeResult& p, const std::string& name) {
  for (const auto& d : p.descriptors)
    if (d.name == name) return &d;
  return nullptr;
}

MetricDescriptor descriptor_of(const ProbeResult& p, const Metric& m) {
  if (const MetricDescriptor* d = find_descriptor(p, m.name)) return *d;
  MetricDescriptor d;
  d.name = m.name;
  d.unit = m.unit;
  d.better = m.better;
  d.kind = m.stats ? MetricKind::kMeasured : MetricKind::kUnknown;
  for (const auto& [k, v] : m.labels) d.axes.push_back(k);
  return d;
}

Labels axes_of(const Metric& m, const MetricDescriptor& d) {
  Labels out;
  for (const auto& a : d.axes)
    if (auto it = m.labels.find(a); it != m.labels.end()) out.insert(*it);
  return out;
}

double shown_value(const MetricDescriptor& d, double v) { return v * d.display.scale; }

std::string shown_unit(const MetricDescriptor& d) {
  return d.display.unit.empty() ? d.unit : d.display.unit;
}

std::string format_metric(const MetricDescriptor& d, double v) {
  const double s = shown_value(d, v);
  std::string text;
  if (d.display.decimals >= 0 && std::isfinite(s)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", std::min(d.display.decimals, 9), s);
    text = buf;
  } else {
    text = format_number(s);
  }
  const std::string u = shown_unit(d);
  return u.empty() || text == "n/a" ? text : text + " " + u;
}

std::string metric_title(const MetricDescriptor& d) { return d.title.empty() ? d.name : d.title; }

std::vector<std::string> descriptor_problems(const ProbeResult& p) {
  std::vector<std::string> out;
  for (const auto& m : p.metrics) {
    const std::string where = p.name + "/" + m.name;
    const MetricDescriptor* d = find_descriptor(p, m.name);
    if (!d) {
      out.push_back(where + ": no descriptor");
      continue;
    }
    for (const auto& [k, v] : m.labels)
      if (std::find(d->axes.begin(), d->axes.end(), k) == d->axes.end())
        out.push_back(where + ": label " + k + " is not an axis (a setting belongs in config)");
    for (const auto& a : d->axes)
      if (!m.labels.count(a)) out.push_back(where + ": axis " + a + " missing");
    if (d->kind == MetricKind::kMeasured && (!m.stats || m.stats->n == 0))
      out.push_back(where + ": measured but no stats");
    if (m.unit != d->unit) out.push_back(where + ": unit " + m.unit + " but declared " + d->unit);
    if (m.better != d->better) out.push_back(where + ": direction differs from the descriptor");
  }
  for (std::size_t i = 0; i < p.descriptors.size(); ++i)
    for (std::size_t j = i + 1; j < p.descriptors.size(); ++j)
      if (p.descriptors[i].name == p.descriptors[j].name)
        out.push_back(p.name + "/" + p.descriptors[i].name + ": declared twice");
  return out;
}

}  // namespace nodeprobe

namespace nodeprobe {

DescriptorBuilder::DescriptorBuilder(MetricKind kind, std::string name, std::string unit, Better better,
                                     std::string description) {
  d_.kind = kind;
  d_.name = std::move(name);
  d_.unit = std::move(unit);
  d_.better = better;
  d_.description = std::move(description);
}
DescriptorBuilder& DescriptorBuilder::titled(std::string title) {
  d_.title = std::move(title);
  return *this;
}
DescriptorBuilder& DescriptorBuilder::axes(std::vector<std::string> axes) {
  d_.axes = std::move(axes);
  return *this;
}
DescriptorBuilder& DescriptorBuilder::shown(double scale, std::string unit, int decimals) {
  d_.display.scale = scale;
  d_.display.unit = std::move(unit);
  d_.display.decimals = decimals;
  return *this;
}
DescriptorBuilder& DescriptorBuilder::percent(int decimals) {
  shown(100, "%", decimals);
  return range(0, 100);
}
DescriptorBuilder& DescriptorBuilder::range(double min, double max) {
  d_.display.min = min;
  d_.display.max = max;
  return *this;
}
DescriptorBuilder& DescriptorBuilder::line_chart(std::string id, std::string title, std::string x,
                                                 std::string x_label, bool bytes_log2) {
  d_.chart.id = std::move(id);
  d_.chart.title = std::move(title);
  d_.chart.kind = "line";
  d_.chart.x = std::move(x);
  d_.chart.x_label = std::move(x_label);
  d_.chart.x_log2 = bytes_log2;
  d_.chart.x_bytes = bytes_log2;
  return *this;
}
DescriptorBuilder& DescriptorBuilder::bar_chart(std::string id, std::string title, std::string group,
                                                std::string reference) {
  d_.chart.id = std::move(id);
  d_.chart.title = std::move(title);
  d_.chart.kind = "bar";
  d_.chart.x = std::move(group);
  d_.chart.x_label = d_.chart.x;
  d_.chart.reference = std::move(reference);
  return *this;
}
DescriptorBuilder& DescriptorBuilder::best_of(std::string axis) {
  d_.chart.best_of = std::move(axis);
  return *this;
}
DescriptorBuilder& DescriptorBuilder::key(int rank, std::string caption, std::string per) {
  d_.key.rank = rank;
  d_.key.caption = std::move(caption);
  d_.key.per = std::move(per);
  return *this;
}

DescriptorBuilder& DescriptorBuilder::run_to_run(double factor) {
  d_.run_to_run = factor;
  return *this;
}

DescriptorBuilder& DescriptorBuilder::run_to_run_where(const std::string& axis, const std::string& value,
                                                       double factor) {
  d_.run_to_run_where[axis + "=" + value] = factor;
  return *this;
}

DescriptorBuilder measured(std::string name, std::string unit, Better better, std::string description) {
  return {MetricKind::kMeasured, std::move(name), std::move(unit), better, std::move(description)};
}
DescriptorBuilder counted(std::string name, std::string unit, Better better, std::string description) {
  return {MetricKind::kCount, std::move(name), std::move(unit), better, std::move(description)};
}
DescriptorBuilder derived(std::string name, std::string unit, Better better, std::string description) {
  return {MetricKind::kDerived, std::move(name), std::move(unit), better, std::move(description)};
}
DescriptorBuilder modelled(std::string name, std::string unit, Better better, std::string description) {
  return {MetricKind::kModel, std::move(name), std::move(unit), better, std::move(description)};
}

}  // namespace nodeprobe

namespace nodeprobe {

double run_to_run_for(const MetricDescriptor& d, const std::map<std::string, std::string>& labels) {
  double f = d.run_to_run;
  for (const auto& [axis, value] : labels)
    if (auto it = d.run_to_run_where.find(axis + "=" + value); it != d.run_to_run_where.end())
      f = std::max(f, it->second);
  return f;
}

}  // namespace nodeprobe
