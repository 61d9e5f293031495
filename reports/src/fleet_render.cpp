#include "nodeprobe/fleet_render.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "html_assets.h"
#include "nodeprobe/render_text.h"
#include "svg.h"

namespace nodeprobe {
namespace {

using svg::esc;

// Fixed decimals: 0, 1 or 2.
std::string fixed(double v, int decimals) {
  char buf[64];
  if (decimals <= 0) std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (decimals == 1) std::snprintf(buf, sizeof buf, "%.1f", v);
  else std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string cut(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

double pair_score(const FleetNode& n) {
  for (const auto& m : n.metrics)
    if (m.name == "pair_busbw") return m.value;
  return -1;
}

std::string key_text(const FleetNode& n, std::size_t max_items) {
  std::string out;
  std::size_t k = 0;
  for (const auto& m : n.metrics) {
    auto it = m.labels.find("key");
    if (it == m.labels.end() || k >= max_items) continue;
    const std::string v = m.unit == "fraction" ? format_number(100 * m.value) + " %" : format_number(m.value) + " " + m.unit;
    out += (out.empty() ? "" : ", ") + it->second + " " + v;
    ++k;
  }
  return out;
}

std::vector<const FleetPair*> by_busbw(const FleetReport& r) {
  std::vector<const FleetPair*> v;
  for (const auto& p : r.pairs)
    if (p.status == Status::kPass) v.push_back(&p);
  std::sort(v.begin(), v.end(), [](const FleetPair* a, const FleetPair* b) { return a->busbw < b->busbw; });
  return v;
}

std::string phase_line(const FleetPhase& p) {
  std::string s = p.name + " " + std::string(to_string(p.status)) + " " + (fixed(p.duration_s, 1) + " s");
  if (p.deadline_s > 0) s += " (deadline " + (fixed(p.deadline_s, 0) + " s") + ")";
  return s;
}

std::string outlier_line(const FleetOutlier& o) {
  std::string who = o.kind == "link" ? o.host + " <-> " + o.peer : o.host + (o.gpu.empty() ? "" : " GPU " + o.gpu);
  return o.kind + " " + who + ": " + o.reason + (o.action.empty() ? "" : " [" + o.action + "]");
}

}  // namespace

void render_fleet_text(const FleetReport& r, std::ostream& o, std::size_t slowest) {
  const Json& c = r.config;
  o << "nodeprobe fleet: " << r.nodes.size() << " node(s), verdict " << to_string(r.verdict);
  if (c.is_object()) {
    // The pairs' backend when it is not the ring's (nccl pairs, fabric ring).
    const std::string pair_target = c.value("pair_target", c.value("target", "?"));
    o << " (profile " << c.value("profile", "?") << ", pairs " << c.value("pairs", "?") << ", "
      << (pair_target == c.value("target", "?") ? pair_target : pair_target + ", ring " + c.value("target", "?")) << ")";
  }
  o << "\n";
  if (c.is_object() && c.contains("pair_backend"))
    o << "pair backend: " << c["pair_backend"].value("name", "?") << " (" << c["pair_backend"].value("reason", "") << ")\n";
  std::string phases;
  for (const auto& p : r.phases) phases += (phases.empty() ? "" : ", ") + phase_line(p);
  if (!phases.empty()) o << "phases: " << phases << "\n";
  for (const auto& p : r.phases)
    if (!p.reason.empty() && p.status != Status::kPass) o << "  " << p.name << ": " << p.reason << "\n";
  o << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %4s %-7s %-15s %11s  %-40s %s\n", "host", "rank", "verdict", "action",
                "pair GB/s", "key numbers", "first problem");
  o << line;
  for (const auto& n : r.nodes) {
    const double s = pair_score(n);
    std::snprintf(line, sizeof line, "%-20s %4d %-7s %-15s %11s  %-40s %s\n", cut(n.host, 20).c_str(), n.rank,
                  std::string(to_string(n.verdict)).c_str(), n.action.c_str(),
                  s >= 0 ? format_number(s).c_str() : "-", cut(key_text(n, 2), 40).c_str(), cut(n.reason, 100).c_str());
    o << line;
  }
  o << "\noutliers";
  if (r.outliers.empty()) o << ": none";
  o << "\n";
  // Up to three per node and kind in text (a noisy disk can fill a screen); the report has all.
  std::map<std::string, int> shown;
  for (const auto& x : r.outliers) {
    const int k = ++shown[x.kind + " " + x.host];
    if (k <= 3) o << "  " << outlier_line(x) << "\n";
    if (k == 4) o << "  " << x.kind << " " << x.host << ": more in the report\n";
  }
  const auto pairs = by_busbw(r);
  if (!r.pairs.empty()) {
    o << "\nslowest pairs (" << pairs.size() << " measured of " << r.pairs.size() << "):\n";
    for (std::size_t i = 0; i < pairs.size() && i < slowest; ++i) {
      const FleetPair& p = *pairs[i];
      std::snprintf(line, sizeof line, "  %-20s <-> %-20s %10s GB/s %6.2f x median  round %d\n", cut(p.a, 20).c_str(),
                    cut(p.b, 20).c_str(), format_number(p.busbw).c_str(), p.ratio_to_median, p.round + 1);
      o << line;
    }
    for (const auto& p : r.pairs)
      if (p.status != Status::kPass)
        o << "  " << p.a << " <-> " << p.b << ": " << to_string(p.status) << ": " << p.reason << "\n";
  }
  if (!r.ring.empty()) {
    o << "\nring allreduce:";
    for (const auto& p : r.ring) {
      o << " " << p.nodes << " nodes " << (p.source == "pairs" ? "(median pair) " : "");
      if (p.status == Status::kPass)
        o << format_number(p.busbw) << " GB/s" << (p.nodes > 2 ? " (" + fixed(p.retention, 2) + " x 2 nodes)" : "");
      else
        o << to_string(p.status);
      o << (&p == &r.ring.back() ? "" : ";");
    }
    o << "\n";
  }
  for (const auto& f : r.findings) o << "finding " << f.id << ": " << f.title << "\n";
  o << "\ndrain";
  if (r.drain.empty()) o << ": none";
  o << "\n";
  for (const auto& d : r.drain) o << "  " << d.host << " (" << d.action << "): " << d.reason << "\n";
  if (r.model.contains("measured") && r.model.contains("predicted")) {
    const Json& m = r.model["measured"];
    o << "\nrun time: " << m.value("nodes", 0) << " nodes " << (fixed(m.value("total_s", 0.0), 1) + " s") << " (startup "
      << fixed(m.value("startup_s", 0.0), 1) << ", local " << fixed(m.value("local_s", 0.0), 1) << ", mesh "
      << fixed(m.value("mesh_s", 0.0), 1) << ", pairs " << fixed(m.value("pairs_s", 0.0), 1) << " in "
      << m.value("rounds", 0) << " rounds, ring " << fixed(m.value("ring_s", 0.0), 1) << ")\n";
    o << "model:";
    for (const auto& p : r.model["predicted"])
      o << " " << p.value("nodes", 0) << " nodes ~" << (fixed(p.value("total_s", 0.0), 0) + " s") << " ("
        << p.value("rounds", 0) << " rounds)" << (&p == &r.model["predicted"].back() ? "" : ",");
    o << "\n";
  }
}

void render_fleet_html(const FleetReport& r, std::ostream& o) {
  const std::string title = "nodeprobe fleet: " + std::to_string(r.nodes.size()) + " nodes";
  auto badge = [](Status s) {
    const std::string t(to_string(s));
    return "<span class=\"badge s-" + t + "\">" + t + "</span>";
  };
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'; img-src data:\">"
       "<link rel=\"icon\" href=\"data:,\"><title>"
    << esc(title) << " (" << to_string(r.verdict) << ")</title><style>" << html::kCss
    << "td.cell{text-align:right;font-variant-numeric:tabular-nums}td.lo{background:#ffd8d3}td.mid{background:#fff1c2}"
       "td.ok{background:#e6f4ea}</style></head><body><header><h1>"
    << esc(title) << "</h1>" << badge(r.verdict) << "<div class=\"meta\">" << esc(r.run.started)
    << (r.run.label.empty() ? "" : " &middot; label " + esc(r.run.label)) << "</div></header>"
    << "<nav><a href=\"#nodes\">Nodes</a><a href=\"#outliers\">Outliers</a><a href=\"#pairs\">Pairs</a>"
       "<a href=\"#ring\">Ring</a><a href=\"#drain\">Drain</a><a href=\"#phases\">Phases</a></nav><main>";

  o << "<h2 id=\"nodes\">Nodes</h2><table><thead><tr><th>host</th><th>rank</th><th>verdict</th><th>action</th>"
       "<th>pair busbw (GB/s)</th><th>key numbers</th><th>first problem</th></tr></thead><tbody>";
  for (const auto& n : r.nodes) {
    const double s = pair_score(n);
    o << "<tr><td class=\"mono\">" << esc(n.host) << "</td><td class=\"num\">" << n.rank << "</td><td>"
      << badge(n.verdict) << "</td><td>" << esc(n.action) << "</td><td class=\"num\">"
      << (s >= 0 ? esc(format_number(s)) : "-") << "</td><td>" << esc(key_text(n, 4)) << "</td><td>" << esc(n.reason)
      << (n.report.empty() ? "" : "<div class=\"muted mono\">" + esc(n.report) + "</div>") << "</td></tr>";
  }
  o << "</tbody></table>";

  o << "<h2 id=\"outliers\">Outliers</h2>";
  if (r.outliers.empty()) o << "<p class=\"muted\">None.</p>";
  else {
    o << "<table><thead><tr><th>kind</th><th>where</th><th>metric</th><th>value</th><th>fleet median</th>"
         "<th>ratio</th><th>reason</th><th>action</th></tr></thead><tbody>";
    for (const auto& x : r.outliers)
      o << "<tr><td>" << esc(x.kind) << "</td><td class=\"mono\">"
        << esc(x.kind == "link" ? x.host + " <-> " + x.peer : x.host + (x.gpu.empty() ? "" : " GPU " + x.gpu))
        << "</td><td class=\"mono\">" << esc(x.metric) << "</td><td class=\"num\">" << esc(format_number(x.value))
        << "</td><td class=\"num\">" << esc(format_number(x.fleet_median)) << "</td><td class=\"num\">"
        << esc(fixed(x.ratio, 2)) << "</td><td>" << esc(x.reason) << "</td><td>" << esc(x.action) << "</td></tr>";
    o << "</tbody></table>";
  }

  // The pair matrix: busbw per pair, coloured by its ratio to the median.
  o << "<h2 id=\"pairs\">Pairs</h2>";
  if (r.pairs.empty()) o << "<p class=\"muted\">Not measured.</p>";
  else {
    std::map<std::pair<std::string, std::string>, const FleetPair*> cell;
    for (const auto& p : r.pairs) {
      cell[{p.a, p.b}] = &p;
      cell[{p.b, p.a}] = &p;
    }
    o << "<p>Bus bandwidth (GB/s) of every pair, each measured alone with its two nodes in a round of disjoint "
         "pairs; red below 0.85 x the median.</p><table><thead><tr><th></th>";
    for (const auto& n : r.nodes) o << "<th class=\"mono\">" << esc(n.host) << "</th>";
    o << "</tr></thead><tbody>";
    for (const auto& a : r.nodes) {
      o << "<tr><th class=\"mono\">" << esc(a.host) << "</th>";
      for (const auto& b : r.nodes) {
        auto it = cell.find({a.host, b.host});
        if (it == cell.end()) {
          o << "<td></td>";
          continue;
        }
        const FleetPair& p = *it->second;
        if (p.status != Status::kPass) {
          o << "<td class=\"cell lo\" title=\"" << esc(p.reason) << "\">" << esc(std::string(to_string(p.status)))
            << "</td>";
          continue;
        }
        const char* cls = p.ratio_to_median < 0.85 ? "lo" : p.ratio_to_median < 0.95 ? "mid" : "ok";
        o << "<td class=\"cell " << cls << "\" title=\"" << esc((fixed(p.ratio_to_median, 2) + " x median")) << "\">"
          << esc(format_number(p.busbw)) << "</td>";
      }
      o << "</tr>";
    }
    o << "</tbody></table>";
    svg::BarChart chart;
    chart.title = "Median pair bus bandwidth per node";
    chart.y_label = "busbw";
    chart.y_unit = "GB/s";
    for (const auto& n : r.nodes) {
      const double s = pair_score(n);
      if (s >= 0) chart.groups.push_back({n.host, {{"median of its pairs", s, false, 0}}, std::nullopt, ""});
    }
    if (!chart.groups.empty()) o << "<figure>" << svg::bar_chart(chart) << "</figure>";
  }

  o << "<h2 id=\"ring\">Ring allreduce</h2>";
  if (r.ring.empty()) o << "<p class=\"muted\">Not measured.</p>";
  else {
    o << "<table><thead><tr><th>nodes</th><th>source</th><th>status</th><th>bytes</th><th>time (s)</th><th>busbw (GB/s)</th>"
         "<th>of 2 nodes</th><th>reason</th></tr></thead><tbody>";
    svg::LineChart lc;
    lc.title = "Ring allreduce bus bandwidth by node count";
    lc.x_label = "nodes";
    lc.y_label = "busbw";
    lc.y_unit = "GB/s";
    svg::Series s;
    s.name = "busbw";
    for (const auto& p : r.ring) {
      o << "<tr><td class=\"num\">" << p.nodes << "</td><td>" << esc(p.source == "pairs" ? "median pair" : "ring")
        << "</td><td>" << badge(p.status) << "</td><td class=\"num\">"
        << esc(svg::bytes_label(p.bytes)) << "</td><td class=\"num\">" << esc(format_number(p.time_s))
        << "</td><td class=\"num\">" << esc(format_number(p.busbw)) << "</td><td class=\"num\">"
        << esc(fixed(p.retention, 2)) << "</td><td>" << esc(p.reason) << "</td></tr>";
      if (p.status == Status::kPass) s.points.push_back({p.nodes, p.busbw});
    }
    o << "</tbody></table>";
    if (s.points.size() >= 2) {
      lc.series.push_back(s);
      o << "<figure>" << svg::line_chart(lc) << "</figure>";
    }
  }

  o << "<h2 id=\"drain\">Drain</h2>";
  if (r.drain.empty()) o << "<p class=\"muted\">No node needs to be drained.</p>";
  else {
    o << "<table><thead><tr><th>host</th><th>action</th><th>why</th></tr></thead><tbody>";
    for (const auto& d : r.drain)
      o << "<tr><td class=\"mono\">" << esc(d.host) << "</td><td>" << esc(d.action) << "</td><td>" << esc(d.reason)
        << "</td></tr>";
    o << "</tbody></table>";
  }
  for (const auto& f : r.findings)
    o << "<div class=\"finding sev-" << to_string(f.severity) << "\"><b>" << esc(f.title) << "</b> <code>" << esc(f.id)
      << "</code> <span class=\"muted\">" << esc(f.action) << "</span></div>";

  o << "<h2 id=\"phases\">Phases</h2><table><thead><tr><th>phase</th><th>status</th><th>nodes</th><th>time (s)</th>"
       "<th>deadline (s)</th><th>reason</th></tr></thead><tbody>";
  for (const auto& p : r.phases)
    o << "<tr><td>" << esc(p.name) << "</td><td>" << badge(p.status) << "</td><td class=\"num\">" << p.nodes
      << "</td><td class=\"num\">" << esc(fixed(p.duration_s, 1)) << "</td><td class=\"num\">"
      << esc(fixed(p.deadline_s, 0)) << "</td><td>" << esc(p.reason) << "</td></tr>";
  o << "</tbody></table>";
  if (r.model.contains("predicted")) {
    o << "<h3>Run time for larger fleets (model)</h3><p class=\"muted\">" << esc(r.model.value("assumptions", ""))
      << "</p><table><thead><tr><th>nodes</th><th>total (s)</th><th>rounds</th><th>pairs (s)</th><th>ring (s)</th>"
         "</tr></thead><tbody>";
    for (const auto& p : r.model["predicted"])
      o << "<tr><td class=\"num\">" << p.value("nodes", 0) << "</td><td class=\"num\">"
        << esc(fixed(p.value("total_s", 0.0), 0)) << "</td><td class=\"num\">" << p.value("rounds", 0)
        << "</td><td class=\"num\">" << esc(fixed(p.value("pairs_s", 0.0), 0)) << "</td><td class=\"num\">"
        << esc(fixed(p.value("ring_s", 0.0), 0)) << "</td></tr>";
    o << "</tbody></table>";
  }
  o << "</main><footer>Generated by " << esc(r.tool.name + " " + r.tool.version)
    << ". Self-contained: no network access is needed to view this file.</footer><script>" << html::kScript
    << "</script></body></html>\n";
}

}  // namespace nodeprobe
