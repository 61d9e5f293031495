#include "html_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/metric_select.h"
#include "nodeprobe/size.h"
#include "svg.h"

namespace nodeprobe::html {
namespace {

constexpr std::size_t kMaxSeries = 12;

/// One charted value: its series (probe, metric, remaining axes), x or group, y as shown.
struct Point {
  std::string probe, metric;
  Labels rest;        // axes other than x and best_of
  std::string x_text; // the x / group axis value
  double x = 0, y = 0;
  const MetricDescriptor* d = nullptr;
};

struct ChartData {
  MetricChart spec;
  std::vector<std::string> metrics;  // names drawn, first-seen order
  std::vector<Point> after, before;
  const MetricDescriptor* first = nullptr;
};

std::string series_key(const Point& p) { return p.probe + "|" + p.metric + "|" + labels_key(p.rest); }

void collect(const Report& r, std::map<std::string, ChartData>& charts, std::vector<std::string>& order,
             bool is_before) {
  for (const auto& p : r.probes)
    for (const auto& m : p.metrics) {
      const MetricDescriptor* d = find_descriptor(p, m.name);
      if (!d || d->chart.id.empty() || d->chart.x.empty() || !std::isfinite(m.value)) continue;
      auto xi = m.labels.find(d->chart.x);
      if (xi == m.labels.end()) continue;
      Point pt;
      pt.probe = p.name;
      pt.metric = m.name;
      pt.x_text = xi->second;
      if (d->chart.kind == "line") {
        std::optional<double> x;
        if (!d->chart.x_bytes) x = parse_number(xi->second);
        else if (const auto bytes = parse_size(xi->second)) x = static_cast<double>(*bytes);
        if (!x) continue;
        pt.x = *x;
      }
      pt.rest = axes_of(m, *d);
      pt.rest.erase(d->chart.x);
      if (!d->chart.best_of.empty()) pt.rest.erase(d->chart.best_of);
      pt.y = shown_value(*d, m.value);
      pt.d = d;
      auto [it, fresh] = charts.emplace(d->chart.id, ChartData{});
      ChartData& c = it->second;
      if (fresh) {
        c.spec = d->chart;
        c.first = d;
        order.push_back(d->chart.id);
      }
      if (std::find(c.metrics.begin(), c.metrics.end(), m.name) == c.metrics.end()) c.metrics.push_back(m.name);
      (is_before ? c.before : c.after).push_back(std::move(pt));
    }
}

/// Legend names: the metric (when a chart draws several) and the axes whose
/// values differ between series, all of them, so no two names coincide; the
/// probe is added only when that still leaves two alike.
std::map<std::string, std::string> legend_names(const std::vector<const Point*>& reps, bool several_metrics) {
  std::map<std::string, std::set<std::string>> values;
  for (const Point* p : reps)
    for (const auto& [k, v] : p->rest) values[k].insert(v);
  std::map<std::string, std::string> out;
  std::map<std::string, int> uses;
  for (const Point* p : reps) {
    std::string name = several_metrics ? metric_title(*p->d) : "";
    for (const auto& [k, v] : p->rest)
      if (values[k].size() > 1) name += (name.empty() ? "" : " ") + k + "=" + v;
    out[series_key(*p)] = name;
    ++uses[name];
  }
  for (const Point* p : reps) {
    std::string& name = out[series_key(*p)];
    if (name.empty() || uses[name] > 1) name = p->probe + (name.empty() ? "" : " " + name);
  }
  return out;
}

/// The best y per (series, x): repeats and best_of axes fold into one point.
std::map<std::string, std::map<std::string, std::pair<double, double>>> fold(const std::vector<Point>& pts) {
  std::map<std::string, std::map<std::string, std::pair<double, double>>> out;  // series -> x text -> (x, y)
  for (const auto& p : pts) {
    auto& slot = out[series_key(p)];
    auto [it, fresh] = slot.emplace(p.x_text, std::make_pair(p.x, p.y));
    if (!fresh && (p.d->better == Better::kLower ? p.y < it->second.second : p.y > it->second.second))
      it->second.second = p.y;
  }
  return out;
}

std::string y_label(const ChartData& c) {
  return c.metrics.size() == 1 ? metric_title(*c.first) : c.spec.title;
}

std::optional<Chart> line_chart(const ChartData& c, bool compare) {
  std::vector<std::string> order;
  std::map<std::string, const Point*> rep;
  for (const auto* v : {&c.after, &c.before})
    for (const auto& p : *v)
      if (rep.emplace(series_key(p), &p).second) order.push_back(series_key(p));
  std::vector<const Point*> reps;
  for (const auto& k : order) reps.push_back(rep[k]);
  const auto names = legend_names(reps, c.metrics.size() > 1);

  svg::LineChart lc;
  lc.title = c.spec.title;
  lc.x_label = c.spec.x_label.empty() ? c.spec.x : c.spec.x_label;
  lc.y_label = y_label(c);
  lc.log2_x = c.spec.x_log2;
  lc.x_bytes = c.spec.x_bytes;
  lc.y_max_hint = c.first->display.max;
  lc.y_unit = shown_unit(*c.first);
  std::size_t dropped = 0;
  auto add = [&](const std::vector<Point>& pts, bool dashed) {
    const auto folded = fold(pts);
    for (std::size_t i = 0; i < order.size(); ++i) {
      auto it = folded.find(order[i]);
      if (it == folded.end()) continue;
      if (i >= kMaxSeries) {
        ++dropped;
        continue;
      }
      svg::Series s;
      s.name = names.at(order[i]) + (compare ? (dashed ? " (before)" : " (after)") : "");
      s.dashed = dashed;
      s.color = static_cast<int>(i);
      for (const auto& [x_text, xy] : it->second) s.points.push_back(xy);
      lc.series.push_back(std::move(s));
    }
  };
  add(c.after, false);
  add(c.before, true);
  Chart out{c.spec.id, c.spec.title, svg::line_chart(lc), ""};
  if (out.svg.empty()) return std::nullopt;
  if (dropped) out.note = std::to_string(dropped) + " more series are in the metrics table";
  return out;
}

/// Bars per group (the x axis), one per series; the reference metric (same
/// probe, same group value) drawn as a marker across the group.
std::optional<Chart> bar_chart(const ChartData& c, const Report& r, bool compare) {
  std::vector<std::string> groups, series;
  for (const auto* v : {&c.after, &c.before})
    for (const auto& p : *v) {
      if (std::find(groups.begin(), groups.end(), p.x_text) == groups.end()) groups.push_back(p.x_text);
      if (std::find(series.begin(), series.end(), series_key(p)) == series.end()) series.push_back(series_key(p));
    }
  std::map<std::string, const Point*> rep;
  for (const auto* v : {&c.after, &c.before})
    for (const auto& p : *v) rep.emplace(series_key(p), &p);
  std::vector<const Point*> reps;
  for (const auto& k : series) reps.push_back(rep[k]);
  auto names = legend_names(reps, c.metrics.size() > 1);
  for (auto& [k, n] : names)
    if (n.empty()) n = "measured";
  std::map<std::string, double> reference;  // group -> value
  if (!c.spec.reference.empty())
    for (const auto& p : r.probes)
      for (const auto& m : p.metrics) {
        if (m.name != c.spec.reference || !std::isfinite(m.value)) continue;
        auto g = m.labels.find(c.spec.x);
        if (g == m.labels.end()) continue;
        const MetricDescriptor d = descriptor_of(p, m);
        auto [it, fresh] = reference.emplace(g->second, shown_value(d, m.value));
        if (!fresh) it->second = std::max(it->second, shown_value(d, m.value));
      }
  const auto fa = fold(c.after), fb = fold(c.before);
  svg::BarChart bc;
  bc.title = c.spec.title;
  bc.y_label = y_label(c);
  bc.y_unit = shown_unit(*c.first);
  for (const auto& g : groups) {
    svg::BarGroup bg;
    bg.label = g;
    for (std::size_t i = 0; i < series.size(); ++i) {
      for (const bool before : {true, false}) {
        if (before && !compare) continue;
        const auto& f = before ? fb : fa;
        auto si = f.find(series[i]);
        if (si == f.end()) continue;
        auto gi = si->second.find(g);
        if (gi == si->second.end()) continue;
        bg.bars.push_back({names.at(series[i]) + (compare ? (before ? " (before)" : " (after)") : ""),
                           gi->second.second, before, static_cast<int>(i)});
      }
    }
    if (auto it = reference.find(g); it != reference.end()) {
      bg.reference = it->second;
      bg.reference_label = "peak";
    }
    bc.groups.push_back(std::move(bg));
  }
  Chart out{c.spec.id, c.spec.title, svg::bar_chart(bc), ""};
  if (out.svg.empty()) return std::nullopt;
  if (!c.spec.reference.empty() && reference.empty()) out.note = "no " + c.spec.reference + " in the report";
  return out;
}

}  // namespace

std::vector<Chart> build_charts(const Report& r, const Report* before) {
  std::map<std::string, ChartData> charts;
  std::vector<std::string> order;
  collect(r, charts, order, false);
  if (before) collect(*before, charts, order, true);
  std::vector<Chart> out;
  for (const auto& id : order) {
    const ChartData& c = charts.at(id);
    auto chart = c.spec.kind == "bar" ? bar_chart(c, r, before != nullptr) : line_chart(c, before != nullptr);
    if (chart) out.push_back(std::move(*chart));
  }
  return out;
}

}  // namespace nodeprobe::html
