#include "nodeprobe/render_markdown.h"

#include <cstdio>

#include "nodeprobe/metric_select.h"
#include "nodeprobe/render_text.h"

namespace nodeprobe {

std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|' || ch == '\\' || ch == '*' || ch == '_' || ch == '`' || ch == '<' || ch == '>')
      out += '\\';
    out += (ch == '\n' || ch == '\r') ? ' ' : ch;
  }
  return out;
}

void render_markdown(const Report& r, std::ostream& out) {
  const auto& e = markdown_escape;
  out << "## nodeprobe report: **" << to_string(r.verdict) << "**\n\n";
  out << "| | |\n|---|---|\n";
  out << "| host | " << e(r.host.hostname) << " |\n";
  if (!r.host.instance_type.empty()) out << "| instance type | " << e(r.host.instance_type) << " |\n";
  out << "| OS / kernel | " << e(r.host.os) << " / " << e(r.host.kernel) << " |\n";
  if (!r.host.driver.empty()) out << "| NVIDIA driver | " << e(r.host.driver) << " |\n";
  if (!r.host.cuda_runtime.empty()) out << "| CUDA runtime | " << e(r.host.cuda_runtime) << " |\n";
  if (!r.host.nccl.empty()) out << "| NCCL | " << e(r.host.nccl) << " |\n";
  if (!r.host.libfabric.empty()) out << "| libfabric | " << e(r.host.libfabric) << " |\n";
  out << "| tool | " << e(r.tool.name + " " + r.tool.version + " " + r.tool.git) << " |\n";
  out << "| run | " << e(r.run.id) << (r.run.label.empty() ? "" : " (" + e(r.run.label) + ")") << ", "
      << e(r.run.started) << " |\n\n";

  out << "### Probes\n\n| probe | status | time (s) | reason |\n|---|---|---:|---|\n";
  for (const auto& p : r.probes) {
    char dur[32];
    std::snprintf(dur, sizeof dur, "%.2f", p.duration_s);
    out << "| " << e(p.name) << " | " << to_string(p.status) << " | " << dur << " | " << e(p.reason)
        << " |\n";
  }
  bool any_check = false;
  for (const auto& p : r.probes)
    for (const auto& c : p.checks) any_check |= c.status != Status::kPass;
  if (any_check) {
    out << "\n### Checks not passing\n\n| probe | check | status | observed | expected | fix |\n"
           "|---|---|---|---|---|---|\n";
    for (const auto& p : r.probes)
      for (const auto& c : p.checks)
        if (c.status != Status::kPass)
          out << "| " << e(p.name) << " | " << e(c.id) << " | " << to_string(c.status) << " | "
              << e(c.observed) << " | " << e(c.expected) << " | " << e(c.fix) << " |\n";
  }
  if (!r.findings.empty()) {
    out << "\n### Findings\n\n";
    for (const auto& f : r.findings) {
      out << "- **" << to_string(f.severity) << "** `" << f.id << "`: " << e(f.title);
      if (f.count > 1) out << " (x" << f.count << ")";
      out << "\n";
      for (const auto& ev : f.evidence) out << "  - evidence: " << e(ev.text) << "\n";
      int step = 1;
      for (const auto& s : f.remedy) out << "  " << step++ << ". " << e(s) << "\n";
    }
  }
  bool any_metric = false;
  for (const auto& p : r.probes) any_metric |= !p.metrics.empty();
  if (any_metric) {
    out << "\n### Metrics\n\n| probe | metric | value | unit |\n|---|---|---:|---|\n";
    for (const auto& p : r.probes)
      for (const auto& m : p.metrics)
        out << "| " << e(p.name) << " | " << e(m.name + labels_text(m.labels)) << " | "
            << format_number(m.value) << " | " << e(m.unit) << " |\n";
  }
  out << "\n**verdict: " << to_string(r.verdict) << "**\n";
}

}  // namespace nodeprobe
