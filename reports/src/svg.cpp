#include "svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "nodeprobe/exporters.h"
#include "nodeprobe/render_text.h"

namespace nodeprobe::svg {
namespace {

constexpr double kW = 720, kH = 360;
constexpr double kLeft = 70, kRight = 190, kTop = 36, kBottom = 56;
constexpr double kPlotW = kW - kLeft - kRight, kPlotH = kH - kTop - kBottom;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

/// "Nice" linear ticks from 0 (or min) to at least max.
std::vector<double> nice_ticks(double lo, double hi, int target = 5) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::floor(lo / step) * step; v <= hi + step * 0.999 && t.size() < 20; v += step)
    t.push_back(v);
  return t;
}

std::string svg_open(const std::string& title, double h = kH) {
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " << kW << " " << h
    << "\" role=\"img\" aria-label=\"" << esc(title) << "\">"
    << "<text x=\"" << kLeft << "\" y=\"20\" class=\"ct\">" << esc(title) << "</text>";
  return o.str();
}

/// Splits a legend name at spaces into lines of at most `width` characters;
/// never cuts a name short (two series that differ at the end stay apart),
/// at most 3 lines, the last one ending in an ellipsis when more was left.
std::vector<std::string> wrap(const std::string& name, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < name.size()) {
    std::size_t j = name.find(' ', i);
    if (j == std::string::npos) j = name.size();
    const std::string word = name.substr(i, j - i);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    i = j + 1;
  }
  if (!line.empty()) lines.push_back(line);
  if (lines.size() > 3) {
    lines.resize(3);
    lines.back() += "\xE2\x80\xA6";
  }
  return lines;
}

std::string legend(const std::vector<std::pair<std::string, std::pair<int, bool>>>& items) {
  std::ostringstream o;
  double y = kTop + 6;
  for (const auto& [name, style] : items) {
    o << "<line x1=\"" << kW - kRight + 14 << "\" y1=\"" << y << "\" x2=\"" << kW - kRight + 38
      << "\" y2=\"" << y << "\" stroke=\"" << color(style.first) << "\" stroke-width=\"3\""
      << (style.second ? " stroke-dasharray=\"5 3\"" : "") << "/>"
      << "<text x=\"" << kW - kRight + 44 << "\" y=\"" << y + 4 << "\" class=\"lg\">";
    const auto lines = wrap(name, 20);  // ~7 px a character in the 146 px beside the plot
    for (std::size_t i = 0; i < lines.size(); ++i)
      o << "<tspan x=\"" << kW - kRight + 44 << "\" dy=\"" << (i ? 12 : 0) << "\">" << esc(lines[i]) << "</tspan>";
    o << "<title>" << esc(name) << "</title></text>";
    y += 18 + 12 * static_cast<double>(lines.size() > 0 ? lines.size() - 1 : 0);
  }
  return o.str();
}

std::string y_axis(const std::vector<double>& ticks, double y0, double y1, const std::string& label) {
  std::ostringstream o;
  for (double t : ticks) {
    const double y = kTop + kPlotH - (t - y0) / (y1 - y0) * kPlotH;
    o << "<line x1=\"" << kLeft << "\" y1=\"" << num(y) << "\" x2=\"" << kLeft + kPlotW << "\" y2=\""
      << num(y) << "\" class=\"grid\"/>"
      << "<text x=\"" << kLeft - 6 << "\" y=\"" << num(y + 4) << "\" class=\"tk\" text-anchor=\"end\">"
      << esc(format_number(t)) << "</text>";
  }
  o << "<text class=\"al\" transform=\"translate(16," << kTop + kPlotH / 2
    << ") rotate(-90)\" text-anchor=\"middle\">" << esc(label) << "</text>";
  o << "<line x1=\"" << kLeft << "\" y1=\"" << kTop + kPlotH << "\" x2=\"" << kLeft + kPlotW << "\" y2=\""
    << kTop + kPlotH << "\" class=\"axis\"/>";
  return o.str();
}

}  // namespace

const char* color(int i) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  return kPalette[((i % 10) + 10) % 10];
}

std::string esc(const std::string& s) {
  std::string out;
  for (char ch : sanitize_utf8(s)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t') out += ch;
    }
  }
  return out;
}

std::string bytes_label(double b) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, b == std::floor(b) ? "%.0f%s" : "%.1f%s", b, units[u]);
  return buf;
}

std::string line_chart(const LineChart& c) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0, ymin = 0;
  for (const auto& s : c.series)
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y) || (c.log2_x && x <= 0)) continue;
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      ymax = std::max(ymax, y), ymin = std::min(ymin, y);
    }
  if (!(xmin <= xmax)) return {};
  if (c.y_max_hint) ymax = std::max(ymax, *c.y_max_hint);
  auto fx = [&](double x) {
    double a = c.log2_x ? std::log2(xmin) : xmin, b = c.log2_x ? std::log2(xmax) : xmax;
    double v = c.log2_x ? std::log2(x) : x;
    if (b == a) return kLeft + kPlotW / 2;
    return kLeft + (v - a) / (b - a) * kPlotW;
  };
  const auto yt = nice_ticks(ymin, ymax > ymin ? ymax : ymin + 1);
  const double y0 = yt.front(), y1 = yt.back();
  auto fy = [&](double y) { return kTop + kPlotH - (y - y0) / (y1 - y0) * kPlotH; };

  std::ostringstream o;
  o << svg_open(c.title) << y_axis(yt, y0, y1, c.y_label + (c.y_unit.empty() ? "" : " (" + c.y_unit + ")"));
  // x ticks
  std::vector<double> xt;
  if (c.log2_x) {
    const int e0 = static_cast<int>(std::floor(std::log2(xmin))), e1 = static_cast<int>(std::ceil(std::log2(xmax)));
    const int step = std::max(1, (e1 - e0 + 7) / 8);
    for (int e = e0; e <= e1; e += step)
      if (std::pow(2.0, e) >= xmin * 0.999 && std::pow(2.0, e) <= xmax * 1.001) xt.push_back(std::pow(2.0, e));
  } else {
    // Counts on x (workers, nodes): no tick between two whole numbers.
    bool whole = true;
    for (const auto& s : c.series)
      for (const auto& [x, y] : s.points) whole = whole && std::isfinite(x) && x == std::floor(x);
    for (double t : nice_ticks(xmin, xmax, 6)) {
      if (whole) {  // the ticks are sums of steps: 2.0000000000000004 is the tick 2
        if (std::fabs(t - std::round(t)) > 1e-9) continue;
        t = std::round(t);
      }
      if (t >= xmin - 1e-9 && t <= xmax + 1e-9) xt.push_back(t);
    }
    if (xt.empty()) xt.push_back(xmin);
  }
  for (double t : xt)
    o << "<text x=\"" << num(fx(t)) << "\" y=\"" << kTop + kPlotH + 16 << "\" class=\"tk\" text-anchor=\"middle\">"
      << esc(c.x_bytes ? bytes_label(t) : format_number(t)) << "</text>";
  o << "<text x=\"" << kLeft + kPlotW / 2 << "\" y=\"" << kH - 12 << "\" class=\"al\" text-anchor=\"middle\">"
    << esc(c.x_label) << "</text>";

  std::vector<std::pair<std::string, std::pair<int, bool>>> leg;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    auto pts = s.points;
    pts.erase(std::remove_if(pts.begin(), pts.end(),
                             [&](const auto& p) {
                               return !std::isfinite(p.first) || !std::isfinite(p.second) ||
                                      (c.log2_x && p.first <= 0);
                             }),
              pts.end());
    if (pts.empty()) continue;
    std::sort(pts.begin(), pts.end());
    const int col = s.color >= 0 ? s.color : static_cast<int>(i);
    o << "<g class=\"series\"><polyline fill=\"none\" stroke=\"" << color(col) << "\" stroke-width=\"2\""
      << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << " points=\"";
    for (const auto& [x, y] : pts) o << num(fx(x)) << "," << num(fy(y)) << " ";
    o << "\"/>";
    for (const auto& [x, y] : pts)
      o << "<circle cx=\"" << num(fx(x)) << "\" cy=\"" << num(fy(y)) << "\" r=\"3\" fill=\"" << color(col)
        << "\"><title>" << esc(s.name + ": " + (c.x_bytes ? bytes_label(x) : format_number(x)) + " -> " +
                               format_number(y) + " " + c.y_unit)
        << "</title></circle>";
    o << "</g>";
    leg.push_back({s.name, {col, s.dashed}});
  }
  o << legend(leg) << "</svg>";
  return o.str();
}

std::string bar_chart(const BarChart& c) {
  double ymax = 0;
  std::size_t nbars = 0;
  for (const auto& g : c.groups) {
    for (const auto& b : g.bars)
      if (std::isfinite(b.value)) ymax = std::max(ymax, b.value);
    if (g.reference && std::isfinite(*g.reference)) ymax = std::max(ymax, *g.reference);
    nbars = std::max(nbars, g.bars.size());
  }
  if (c.groups.empty() || nbars == 0) return {};
  const auto yt = nice_ticks(0, ymax > 0 ? ymax : 1);
  const double y1 = yt.back();
  auto fy = [&](double y) { return kTop + kPlotH - y / y1 * kPlotH; };
  std::ostringstream o;
  o << svg_open(c.title) << y_axis(yt, 0, y1, c.y_label + (c.y_unit.empty() ? "" : " (" + c.y_unit + ")"));
  const double ngroups = static_cast<double>(c.groups.size());
  const double gw = kPlotW / ngroups;
  const double bw = std::min(40.0, (gw - 16) / static_cast<double>(nbars));
  std::map<std::string, std::pair<int, bool>> legend_map;
  std::vector<std::pair<std::string, std::pair<int, bool>>> leg;
  for (std::size_t gi = 0; gi < c.groups.size(); ++gi) {
    const BarGroup& g = c.groups[gi];
    const double gd = static_cast<double>(gi);
    const double gx = kLeft + gd * gw + (gw - bw * static_cast<double>(g.bars.size())) / 2;
    for (std::size_t bi = 0; bi < g.bars.size(); ++bi) {
      const Bar& b = g.bars[bi];
      if (!std::isfinite(b.value)) continue;
      const int col = b.color >= 0 ? b.color : static_cast<int>(bi);
      const double x = gx + static_cast<double>(bi) * bw, y = fy(std::max(0.0, b.value));
      o << "<rect x=\"" << num(x + 1) << "\" y=\"" << num(y) << "\" width=\"" << num(bw - 2) << "\" height=\""
        << num(kTop + kPlotH - y) << "\" fill=\"" << color(col) << "\""
        << (b.dashed ? " fill-opacity=\"0.35\" stroke=\"" + std::string(color(col)) + "\" stroke-dasharray=\"4 2\"" : "")
        << "><title>" << esc(g.label + " " + b.series + ": " + format_number(b.value) + " " + c.y_unit)
        << "</title></rect>";
      if (!legend_map.count(b.series)) {
        legend_map[b.series] = {col, b.dashed};
        leg.push_back({b.series, {col, b.dashed}});
      }
    }
    if (g.reference && std::isfinite(*g.reference)) {
      const double y = fy(*g.reference);
      o << "<line x1=\"" << num(kLeft + gd * gw + 4) << "\" y1=\"" << num(y) << "\" x2=\""
        << num(kLeft + (gd + 1) * gw - 4) << "\" y2=\"" << num(y) << "\" class=\"ref\"><title>"
        << esc(g.label + " " + g.reference_label + ": " + format_number(*g.reference) + " " + c.y_unit)
        << "</title></line><text x=\"" << num(kLeft + (gd + 1) * gw - 4) << "\" y=\"" << num(y - 3)
        << "\" class=\"tk\" text-anchor=\"end\">" << esc(g.reference_label) << "</text>";
    }
    o << "<text x=\"" << num(kLeft + gd * gw + gw / 2) << "\" y=\"" << kTop + kPlotH + 16
      << "\" class=\"tk\" text-anchor=\"middle\">" << esc(g.label) << "</text>";
  }
  o << legend(leg) << "</svg>";
  return o.str();
}

}  // namespace nodeprobe::svg
