#include "nodeprobe/render_text.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe {
namespace {

const char* color_of(Status s) {
  switch (s) {
    case Status::kPass: return "\033[32m";
    case Status::kWarn: return "\033[33m";
    case Status::kFail:
    case Status::kError:
    case Status::kTimeout: return "\033[31m";
    case Status::kSkip:
    case Status::kUnknown: break;
  }
  return "\033[2m";
}

std::string tag(Status s, bool color) {
  std::string t(to_string(s));
  t.resize(7, ' ');
  if (!color) return t;
  return std::string(color_of(s)) + t + "\033[0m";
}

std::string labels_text(const Metric& m) {
  std::string out;
  for (const auto& [k, v] : m.labels) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out.empty() ? "" : "{" + out + "}";
}

}  // namespace

std::string format_number(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e15 || a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else if (a >= 100 || v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void render_text(const Report& r, std::ostream& out, const TextOptions& opt) {
  out << r.tool.name << " " << r.tool.version << " on " << r.host.hostname;
  if (!r.host.instance_type.empty()) out << " (" << r.host.instance_type << ")";
  out << ", " << r.host.os << ", kernel " << r.host.kernel << "\n";
  if (!r.run.label.empty()) out << "label: " << r.run.label << "\n";
  for (const auto& p : r.probes) {
    out << "\n" << tag(p.status, opt.color) << " " << p.name;
    char dur[32];
    std::snprintf(dur, sizeof dur, " (%.2f s)", p.duration_s);
    out << dur;
    if (!p.reason.empty()) out << ": " << p.reason;
    out << "\n";
    std::string last_fix;  // soft/hard pairs share a fix: print it once
    for (const auto& c : p.checks) {
      if (c.status == Status::kPass && !opt.verbose) continue;
      out << "  " << tag(c.status, opt.color) << " " << c.id << ": " << c.observed;
      if (!c.expected.empty()) out << " (expected " << c.expected << ")";
      out << "\n";
      if (!c.detail.empty()) out << "           " << c.detail << "\n";
      if (!c.fix.empty() && c.fix != last_fix) out << "           fix: " << c.fix << "\n";
      last_fix = c.fix;
    }
    std::size_t shown = 0;
    for (const auto& m : p.metrics) {
      if (!opt.verbose && shown >= 8) {
        out << "  ... " << (p.metrics.size() - shown) << " more metrics (--verbose or the JSON report)\n";
        break;
      }
      const MetricDescriptor d = descriptor_of(p, m);
      out << "  " << metric_title(d) << labels_text(m) << " = " << format_metric(d, m.value);
      if (m.stats && m.stats->n > 1)
        out << "  (" << format_number(shown_value(d, m.stats->p5)) << ".." << format_number(shown_value(d, m.stats->p95))
            << ", n=" << m.stats->n << ")";
      out << "\n";
      ++shown;
    }
    if (opt.verbose || p.status != Status::kPass) {
      std::size_t passing = 0;
      for (const auto& c : p.checks) passing += c.status == Status::kPass;
      if (!opt.verbose && passing > 0) out << "  (" << passing << " checks pass)\n";
    }
  }
  if (!r.findings.empty()) {
    out << "\nfindings:\n";
    for (const auto& f : r.findings) {
      out << "  [" << to_string(f.severity) << "] " << f.id << ": " << f.title;
      if (f.count > 1) out << " (x" << f.count << ")";
      out << "\n";
      if (!f.remedy.empty()) out << "      fix: " << f.remedy.front() << "\n";
    }
  }
  out << "\nverdict: " << tag(r.verdict, opt.color) << "\n";
}

}  // namespace nodeprobe
