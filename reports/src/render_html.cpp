#include "nodeprobe/render_html.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "html_assets.h"
#include "html_charts.h"
#include "nodeprobe/key_numbers.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/metric_select.h"
#include "nodeprobe/render_compare.h"
#include "nodeprobe/render_text.h"
#include "svg.h"

namespace nodeprobe {
namespace {

using svg::esc;

std::string badge(Status s) {
  const std::string t(to_string(s));
  return "<span class=\"badge s-" + t + "\">" + t + "</span>";
}

std::string badge(Verdict v) {
  const std::string t(to_string(v));
  return "<span class=\"badge v-" + std::string(v == Verdict::kInvalid ? "na" : t) + "\">" + esc(t) +
         "</span>";
}

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

void row(std::ostream& o, const std::string& k, const std::string& v) {
  if (!v.empty()) o << "<tr><th>" << esc(k) << "</th><td>" << esc(v) << "</td></tr>";
}

void header(std::ostream& o, const Report& r, const std::string& title) {
  o << "<header><h1>" << esc(title) << "</h1>" << badge(r.verdict) << "<div class=\"meta\">"
    << esc(r.host.hostname) << (r.host.instance_type.empty() ? "" : " &middot; " + esc(r.host.instance_type))
    << " &middot; " << esc(r.run.started) << (r.run.label.empty() ? "" : " &middot; label " + esc(r.run.label))
    << "</div></header>";
}

void nav(std::ostream& o, bool compare, bool charts, bool limits) {
  o << "<nav><a href=\"#summary\">Summary</a><a href=\"#findings\">Findings</a>";
  if (compare) o << "<a href=\"#compare\">Before/after</a>";
  if (charts) o << "<a href=\"#charts\">Charts</a>";
  if (limits) o << "<a href=\"#limits\">Limits</a>";
  o << "<a href=\"#checks\">Checks</a><a href=\"#metrics\">Metrics</a><a href=\"#host\">Host</a></nav>";
}

void summary(std::ostream& o, const Report& r) {
  o << "<h2 id=\"summary\">Summary</h2><table><thead><tr><th>probe</th><th>status</th><th>time (s)</th>"
       "<th>key numbers</th><th>reason</th></tr></thead><tbody>";
  for (const auto& p : r.probes)
    o << "<tr><td>" << esc(p.name) << "</td><td>" << badge(p.status) << "</td><td class=\"num\">"
      << secs(p.duration_s) << "</td><td>" << esc(key_numbers(p)) << "</td><td>" << esc(p.reason)
      << "</td></tr>";
  o << "</tbody></table>";
}

void findings(std::ostream& o, const Report& r) {
  o << "<h2 id=\"findings\">Findings</h2>";
  if (r.findings.empty()) o << "<p class=\"muted\">No findings.</p>";
  for (const auto& f : r.findings) {
    o << "<div class=\"finding sev-" << to_string(f.severity) << "\"><b>" << esc(f.title) << "</b> <code>"
      << esc(f.id) << "</code> <span class=\"muted\">" << to_string(f.severity)
      << (f.probe.empty() ? "" : ", from " + esc(f.probe))
      << (f.count > 1 ? ", seen " + std::to_string(f.count) + " times" : "") << "</span>";
    if (!f.evidence.empty()) {
      o << "<ul>";
      for (const auto& e : f.evidence)
        o << "<li class=\"mono\">" << esc(e.source) << (e.line ? ":" + std::to_string(e.line) : "") << ": "
          << esc(e.text) << "</li>";
      o << "</ul>";
    }
    if (!f.remedy.empty()) {
      o << "<div>Remedy:</div><ol>";
      for (const auto& s : f.remedy) o << "<li><code>" << esc(s) << "</code></li>";
      o << "</ol>";
    }
    o << "</div>";
  }
}

void comparison(std::ostream& o, const Comparison& c) {
  o << "<h2 id=\"compare\">Before / after</h2><p>before: <b>" << esc(c.before.origin) << "</b> "
    << esc(c.before.label) << " " << esc(c.before.started) << " &rarr; after: <b>" << esc(c.after.origin)
    << "</b> " << esc(c.after.label) << " " << esc(c.after.started) << "</p><p>threshold "
    << esc(format_number(c.options.threshold_pct)) << " %: ";
  for (Verdict v : {Verdict::kWorse, Verdict::kBetter, Verdict::kAmbiguous, Verdict::kSame, Verdict::kInvalid})
    o << badge(v) << " " << c.count(v) << " &nbsp; ";
  o << "</p>";
  const auto causes = c.causes();
  if (!causes.empty()) {
    o << "<h3>What changed, and what moved with it</h3><ul class=\"causes\">";
    for (const auto& cause : causes) {
      const auto lines = cause_lines(cause);
      o << "<li><b>" << esc(lines.front()) << "</b>";
      for (std::size_t i = 1; i < lines.size(); ++i) o << "<div>" << esc(lines[i]) << "</div>";
      o << "</li>";
    }
    o << "</ul>";
  }
  auto one = [&](const char* title, const std::vector<OneSided>& v) {
    if (v.empty()) return;
    o << "<h3>" << title << "</h3><ul>";
    for (const auto& m : v)
      o << "<li class=\"mono\">" << esc(m.probe + "/" + m.name + labels_text(m.labels)) << " = "
        << esc(format_metric(m.descriptor, m.value)) << "</li>";
    o << "</ul>";
  };
  one("Only in before", c.only_before);
  one("Only in after", c.only_after);
  if (!c.statuses.empty()) {
    o << "<h3>Status changes</h3><table><tbody>";
    for (const auto& s : c.statuses)
      o << "<tr><td>" << esc(s.probe) << "</td><td>" << esc(s.check) << "</td><td>" << badge(s.before)
        << " &rarr; " << badge(s.after) << "</td></tr>";
    o << "</tbody></table>";
  }
  o << "<h3>Settings and environment differences</h3>";
  if (c.environment.empty()) o << "<p class=\"muted\">None.</p>";
  else {
    o << "<table><thead><tr><th>section</th><th>key</th><th>before</th><th>after</th></tr></thead><tbody>";
    for (const auto& f : c.environment)
      o << "<tr><td>" << esc(f.section) << "</td><td class=\"mono\">" << esc(f.key) << "</td><td class=\"mono\">"
        << esc(f.before) << "</td><td class=\"mono\">" << esc(f.after) << "</td></tr>";
    o << "</tbody></table>";
  }
  if (!c.metrics.empty()) {
    o << "<details" << (c.metrics.size() <= 40 ? " open" : "") << "><summary>" << c.metrics.size()
      << " metrics paired</summary><table class=\"cmp\"><thead><tr><th>verdict</th><th>metric</th><th>before</th><th>after</th><th>delta</th>"
         "<th>unit</th><th>why</th></tr></thead><tbody>";
    std::vector<const MetricDiff*> v;
    for (const auto& d : c.metrics) v.push_back(&d);
    std::stable_sort(v.begin(), v.end(), [](const MetricDiff* a, const MetricDiff* b) {
      return verdict_order(a->judgement.verdict) < verdict_order(b->judgement.verdict);
    });
    for (const MetricDiff* d : v)
      o << "<tr><td>" << badge(d->judgement.verdict) << "</td><td class=\"mono\">" << esc(metric_label(*d))
        << "</td><td class=\"num\">" << esc(format_side(d->before, d->descriptor)) << "</td><td class=\"num\">"
        << esc(format_side(d->after, d->descriptor)) << "</td><td class=\"num\">"
        << esc(format_delta(d->judgement.delta_pct)) << "</td><td>" << esc(shown_unit(d->descriptor))
        << "</td><td class=\"why\">" << esc(d->judgement.reason) << "</td></tr>";
    o << "</tbody></table></details>";
  }
}

void checks_table(std::ostream& o, const ProbeResult& p) {
  o << "<table><thead><tr><th>check</th><th>status</th><th>observed</th><th>expected</th><th>fix</th></tr>"
       "</thead><tbody>";
  for (const auto& c : p.checks)
    o << "<tr><td class=\"mono\">" << esc(c.id) << "</td><td>" << badge(c.status) << "</td><td>"
      << esc(c.observed) << (c.detail.empty() ? "" : "<div class=\"muted\">" + esc(c.detail) + "</div>")
      << "</td><td>" << esc(c.expected) << "</td><td><code>" << esc(c.fix) << "</code></td></tr>";
  o << "</tbody></table>";
}

void metrics(std::ostream& o, const Report& r) {
  o << "<h2 id=\"metrics\">Metrics</h2><p><input type=\"search\" id=\"metric-filter\" "
       "placeholder=\"filter metrics (name, label, probe)\" aria-label=\"filter metrics\"></p>";
  bool any = false;
  for (const auto& p : r.probes) {
    if (p.metrics.empty()) continue;
    any = true;
    o << "<details open><summary>" << esc(p.name) << " (" << p.metrics.size()
      << " metrics)</summary><table class=\"metrics\"><thead><tr><th>metric</th><th>labels</th><th>value</th>"
         "<th>unit</th><th>spread</th><th>better</th><th>kind</th></tr></thead><tbody>";
    for (const auto& m : p.metrics) {
      const MetricDescriptor d = descriptor_of(p, m);
      std::string spread;
      if (m.stats)
        spread = "n=" + std::to_string(m.stats->n) + " p5 " + format_number(shown_value(d, m.stats->p5)) + " p95 " +
                 format_number(shown_value(d, m.stats->p95));
      o << "<tr><td class=\"mono\" title=\"" << esc(d.description) << "\">" << esc(m.name)
        << "</td><td class=\"mono\">" << esc(labels_key(m.labels)) << "</td><td class=\"num\">"
        << esc(format_number(shown_value(d, m.value))) << "</td><td>" << esc(shown_unit(d))
        << "</td><td class=\"muted\">" << esc(spread) << "</td><td>" << to_string(d.better) << "</td><td>"
        << to_string(d.kind) << "</td></tr>";
    }
    o << "</tbody></table></details>";
  }
  if (!any) o << "<p class=\"muted\">No metrics in this report.</p>";
}

void host(std::ostream& o, const Report& r) {
  const HostInfo& h = r.host;
  o << "<h2 id=\"host\">Host</h2><table><tbody>";
  row(o, "hostname", h.hostname);
  row(o, "instance type", h.instance_type.empty() ? "unknown" : h.instance_type);
  row(o, "OS", h.os);
  row(o, "kernel", h.kernel);
  row(o, "CPU", h.cpu_model + (h.cpus ? " (" + std::to_string(h.cpus) + " CPUs)" : ""));
  if (h.memory_bytes) row(o, "memory", format_number(static_cast<double>(h.memory_bytes) / 1073741824.0) + " GiB");
  row(o, "GPUs", h.gpus.empty() ? "none reported" : std::to_string(h.gpus.size()));
  row(o, "NVIDIA driver", h.driver);
  row(o, "CUDA runtime", h.cuda_runtime);
  row(o, "NCCL", h.nccl);
  row(o, "libfabric", h.libfabric);
  row(o, "MPI", h.mpi);
  row(o, "tool", r.tool.name + " " + r.tool.version + " (" + r.tool.git + ")");
  row(o, "run", r.run.id + ", " + r.run.started + " .. " + r.run.finished);
  o << "</tbody></table>";
  if (!h.env.empty()) {
    o << "<h3>Environment (allowlisted)</h3><table><tbody>";
    for (const auto& [k, v] : h.env) o << "<tr><td class=\"mono\">" << esc(k) << "</td><td class=\"mono\">" << esc(v) << "</td></tr>";
    o << "</tbody></table>";
  }
}

}  // namespace

void render_html(const Report& r, std::ostream& o, const HtmlOptions& opt) {
  const std::string title = opt.title.empty() ? "nodeprobe report: " + r.host.hostname : opt.title;
  const auto charts = html::build_charts(r, opt.before);
  const ProbeResult* limits = nullptr;
  for (const auto& p : r.probes)
    if (probe_matches(p.name, "limits") && !p.checks.empty()) limits = &p;

  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'; img-src data:\">"
       "<link rel=\"icon\" href=\"data:,\"><title>"
    << esc(title) << " (" << to_string(r.verdict) << ")</title><style>" << html::kCss << "</style></head><body>";
  header(o, r, title);
  nav(o, opt.comparison != nullptr, !charts.empty(), limits != nullptr);
  o << "<main>";
  summary(o, r);
  findings(o, r);
  if (!charts.empty()) {
    o << "<h2 id=\"charts\">Charts</h2><div class=\"charts\">";
    for (const auto& c : charts)
      o << "<figure id=\"chart-" << esc(c.id) << "\">" << c.svg
        << (c.note.empty() ? "" : "<figcaption>" + esc(c.note) + "</figcaption>") << "</figure>";
    o << "</div>";
  }
  if (opt.comparison) comparison(o, *opt.comparison);
  if (limits) {
    o << "<h2 id=\"limits\">Limits</h2>";
    checks_table(o, *limits);
  }
  o << "<h2 id=\"checks\">Checks</h2>";
  bool any = false;
  for (const auto& p : r.probes) {
    if (&p == limits || p.checks.empty()) continue;
    any = true;
    o << "<h3>" << esc(p.name) << "</h3>";
    checks_table(o, p);
  }
  if (!any) o << "<p class=\"muted\">No other checks.</p>";
  metrics(o, r);
  host(o, r);
  o << "</main><footer>Generated by " << esc(r.tool.name + " " + r.tool.version)
    << ". Self-contained: no network access is needed to view this file.</footer><script>" << html::kScript
    << "</script></body></html>\n";
}

}  // namespace nodeprobe
