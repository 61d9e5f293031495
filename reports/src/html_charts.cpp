#include "html_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "nodeprobe/metric_select.h"
#include "svg.h"

namespace nodeprobe::html {
namespace {

constexpr std::size_t kMaxSeries = 12;

struct LineSpec {
  const char* id;
  const char* title;
  const char* probe;
  std::vector<std::string> metrics;  // first one present wins (one unit per chart)
  std::vector<std::string> x_keys;
  bool bytes;
  const char* x_label;
  std::optional<double> y_max;
};

const std::vector<LineSpec>& line_specs() {
  static const std::vector<LineSpec> s = {
      {"busbw", "Allreduce bus bandwidth vs message size", "allreduce", {"busbw"},
       {"size", "bytes", "size_bytes", "message_bytes"}, true, "message size (bytes)", std::nullopt},
      {"io-throughput", "IO throughput vs workers", "io",
       {"throughput", "mb_per_s", "samples_per_s"}, {"workers"}, false, "workers",
       std::nullopt},
      {"io-au", "Accelerator utilisation (AU) vs workers", "io", {"au", "au_pct"}, {"workers"}, false,
       "workers", 100.0},
  };
  return s;
}

struct Point {
  std::string probe;
  Labels rest;  // labels without the x key
  double x, y;
  std::string unit;
};

std::vector<Point> line_points(const Report& r, const LineSpec& spec, const std::string& metric) {
  std::vector<Point> out;
  for (const auto& ref : select_metrics(r, spec.probe, {metric})) {
    std::string key;
    auto x = label_number(ref.metric->labels, spec.x_keys, &key);
    if (!x || !std::isfinite(ref.metric->value)) continue;
    Labels rest = ref.metric->labels;
    rest.erase(key);
    out.push_back({ref.probe->name, rest, *x, ref.metric->value, ref.metric->unit});
  }
  return out;
}

std::string series_key(const Point& p) { return p.probe + "|" + labels_key(p.rest); }

/// Legend names: the labels that differ between series; the probe name is
/// added only when those labels alone do not tell the series apart.
std::map<std::string, std::string> legend_names(const std::vector<const Point*>& reps) {
  std::map<std::string, std::set<std::string>> values;
  for (const Point* p : reps)
    for (const auto& [k, v] : p->rest) values[k].insert(v);
  std::map<std::string, std::string> out;
  std::map<std::string, int> uses;
  for (const Point* p : reps) {
    std::string name;
    for (const auto& [k, v] : p->rest)
      if (values[k].size() > 1 || reps.size() == 1) name += (name.empty() ? "" : " ") + k + "=" + v;
    out[series_key(*p)] = name;
    ++uses[name];
  }
  for (const Point* p : reps) {
    std::string& name = out[series_key(*p)];
    if (name.empty() || uses[name] > 1) name = p->probe + (name.empty() ? "" : " " + name);
  }
  return out;
}

std::optional<Chart> line_chart(const Report& r, const Report* before, const LineSpec& spec) {
  std::string metric;
  for (const auto& m : spec.metrics)
    if (!line_points(r, spec, m).empty() || (before && !line_points(*before, spec, m).empty())) {
      metric = m;
      break;
    }
  if (metric.empty()) return std::nullopt;
  const auto after_pts = line_points(r, spec, metric);
  const auto before_pts = before ? line_points(*before, spec, metric) : std::vector<Point>{};

  std::vector<std::string> order;
  std::map<std::string, const Point*> rep;
  for (const auto* v : {&after_pts, &before_pts})
    for (const auto& p : *v)
      if (rep.emplace(series_key(p), &p).second) order.push_back(series_key(p));
  std::vector<const Point*> reps;
  for (const auto& k : order) reps.push_back(rep[k]);
  const auto names = legend_names(reps);

  svg::LineChart c;
  c.title = spec.title;
  c.x_label = spec.x_label;
  c.y_label = metric;
  c.log2_x = spec.bytes;
  c.x_bytes = spec.bytes;
  c.y_max_hint = spec.y_max;
  c.y_unit = !after_pts.empty() ? after_pts.front().unit : before_pts.front().unit;
  std::size_t dropped = 0;
  auto add = [&](const std::vector<Point>& pts, bool dashed) {
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::map<double, double> best;  // x -> max y (repeats and in-place/out-of-place fold)
      for (const auto& p : pts)
        if (series_key(p) == order[i]) {
          auto [it, fresh] = best.emplace(p.x, p.y);
          if (!fresh) it->second = std::max(it->second, p.y);
        }
      if (best.empty()) continue;
      if (i >= kMaxSeries) {
        ++dropped;
        continue;
      }
      svg::Series s;
      s.name = names.at(order[i]) + (before ? (dashed ? " (before)" : " (after)") : "");
      s.dashed = dashed;
      s.color = static_cast<int>(i);
      s.points.assign(best.begin(), best.end());
      c.series.push_back(std::move(s));
    }
  };
  add(after_pts, false);
  add(before_pts, true);
  Chart out{spec.id, spec.title, svg::line_chart(c), ""};
  if (out.svg.empty()) return std::nullopt;
  if (dropped) out.note = std::to_string(dropped) + " more series are in the metrics table";
  return out;
}

// GEMM TFLOP/s per precision, against the datasheet peak when the probe reports it.
const std::vector<std::string> kGemmMetrics = {"gemm.tflops"};
const std::vector<std::string> kPeakMetrics = {"gemm.peak_tflops"};
const std::vector<std::string> kPctMetrics = {"gemm.pct_of_peak"};
const std::vector<std::string> kPrecisionKeys = {"precision", "dtype"};
const std::vector<std::string> kDeviceKeys = {"gpu", "device"};

std::string first_label(const Labels& l, const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (auto it = l.find(k); it != l.end()) return it->second;
  return {};
}

struct GemmData {
  std::vector<std::string> precisions;
  std::map<std::pair<std::string, std::string>, double> best;  // (precision, device) -> max TFLOP/s
  std::map<std::string, double> peak;
  std::set<std::string> devices;
  std::string unit = "TFLOP/s";
};

GemmData gemm_data(const Report& r) {
  GemmData g;
  for (const auto& ref : select_metrics(r, "gemm", kGemmMetrics)) {
    const std::string prec = first_label(ref.metric->labels, kPrecisionKeys);
    if (prec.empty() || !std::isfinite(ref.metric->value)) continue;
    const std::string dev = first_label(ref.metric->labels, kDeviceKeys);
    if (std::find(g.precisions.begin(), g.precisions.end(), prec) == g.precisions.end())
      g.precisions.push_back(prec);
    g.devices.insert(dev);
    auto [it, fresh] = g.best.emplace(std::make_pair(prec, dev), ref.metric->value);
    if (!fresh) it->second = std::max(it->second, ref.metric->value);
    if (!ref.metric->unit.empty()) g.unit = ref.metric->unit;
  }
  for (const auto& ref : select_metrics(r, "gemm", kPeakMetrics)) {
    const std::string prec = first_label(ref.metric->labels, kPrecisionKeys);
    if (!prec.empty() && std::isfinite(ref.metric->value)) g.peak[prec] = ref.metric->value;
  }
  for (const auto& ref : select_metrics(r, "gemm", kPctMetrics)) {
    const std::string prec = first_label(ref.metric->labels, kPrecisionKeys);
    if (prec.empty() || g.peak.count(prec) || !(ref.metric->value > 0)) continue;
    // The % of peak of a measured point gives the peak back.
    for (const auto& m : select_metrics(r, "gemm", kGemmMetrics, ref.metric->labels))
      if (labels_key(m.metric->labels) == labels_key(ref.metric->labels))
        g.peak[prec] = m.metric->value / (ref.metric->value / 100);
  }
  return g;
}

std::optional<Chart> gemm_chart(const Report& r, const Report* before) {
  const GemmData a = gemm_data(r);
  const GemmData b = before ? gemm_data(*before) : GemmData{};
  std::vector<std::string> precisions = a.precisions;
  for (const auto& p : b.precisions)
    if (std::find(precisions.begin(), precisions.end(), p) == precisions.end()) precisions.push_back(p);
  if (precisions.empty()) return std::nullopt;
  std::set<std::string> devices = a.devices;
  devices.insert(b.devices.begin(), b.devices.end());
  svg::BarChart c;
  c.title = "GEMM throughput per precision (best size)";
  c.y_label = "GEMM throughput";
  c.y_unit = a.unit;
  for (const auto& prec : precisions) {
    svg::BarGroup g;
    g.label = prec;
    int col = 0;
    for (const auto& dev : devices) {
      const std::string name = dev.empty() ? "measured" : "GPU " + dev;
      if (before) {
        auto ib = b.best.find({prec, dev});
        if (ib != b.best.end()) g.bars.push_back({name + " (before)", ib->second, true, col});
      }
      auto ia = a.best.find({prec, dev});
      if (ia != a.best.end()) g.bars.push_back({name + (before ? " (after)" : ""), ia->second, false, col});
      ++col;
    }
    if (auto it = a.peak.find(prec); it != a.peak.end()) {
      g.reference = it->second;
      g.reference_label = "peak";
    }
    c.groups.push_back(std::move(g));
  }
  Chart out{"gemm", c.title, svg::bar_chart(c), a.peak.empty() ? "no datasheet peak in the report" : ""};
  if (out.svg.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::vector<Chart> build_charts(const Report& r, const Report* before) {
  std::vector<Chart> out;
  const auto& specs = line_specs();
  if (auto c = line_chart(r, before, specs[0])) out.push_back(std::move(*c));
  if (auto c = gemm_chart(r, before)) out.push_back(std::move(*c));
  for (std::size_t i = 1; i < specs.size(); ++i)
    if (auto c = line_chart(r, before, specs[i])) out.push_back(std::move(*c));
  return out;
}

}  // namespace nodeprobe::html
