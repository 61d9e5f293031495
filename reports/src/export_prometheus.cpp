// Prometheus text exposition format 0.0.4, as node_exporter's textfile
// collector reads it: one HELP and one TYPE line per family, the family's
// samples together, no duplicate series, no sample timestamps.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "export_util.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/exporters.h"
#include "nodeprobe/metric_select.h"

namespace nodeprobe {
namespace {

constexpr Status kStates[] = {Status::kPass, Status::kWarn,  Status::kFail,
                              Status::kSkip, Status::kError, Status::kTimeout};

struct Family {
  std::string help;
  std::vector<std::string> samples;  // "{labels} value"
  std::set<std::string> label_sets;  // to drop duplicate series
};

class Writer {
 public:
  void add(const std::string& family, const std::string& help, const Labels& labels, double value) {
    auto [it, fresh] = families_.try_emplace(family);
    if (fresh) {
      order_.push_back(family);
      it->second.help = help;
    }
    const std::string ls = render_labels(labels);
    if (!it->second.label_sets.insert(ls).second) {
      ++dropped_;
      return;
    }
    it->second.samples.push_back(ls + " " + render_value(value));
  }

  std::string str() const {
    std::ostringstream out;
    for (const auto& name : order_) {
      const Family& f = families_.at(name);
      out << "# HELP " << name << " " << escape_help(f.help) << "\n";
      out << "# TYPE " << name << " gauge\n";
      for (const auto& s : f.samples) out << name << s << "\n";
    }
    if (dropped_)
      out << "# nodeprobe: " << dropped_ << " duplicate series left out (same name and labels)\n";
    return out.str();
  }

 private:
  static std::string render_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }
  static std::string escape_help(const std::string& s) {
    std::string out;
    for (char c : sanitize_utf8(s)) {
      if (c == '\\') out += "\\\\";
      else if (c == '\n') out += "\\n";
      else out += c;
    }
    return out;
  }
  static std::string escape_value(const std::string& s) {
    std::string out;
    for (char c : sanitize_utf8(s)) {
      if (c == '\\') out += "\\\\";
      else if (c == '"') out += "\\\"";
      else if (c == '\n') out += "\\n";
      else out += c;
    }
    return out;
  }
  static std::string render_labels(const Labels& labels) {
    if (labels.empty()) return {};
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : labels) {
      out += (first ? "" : ",") + k + "=\"" + escape_value(v) + "\"";
      first = false;
    }
    return out + "}";
  }

  std::map<std::string, Family> families_;
  std::vector<std::string> order_;
  std::size_t dropped_ = 0;
};

/// A valid label name: [a-zA-Z_][a-zA-Z0-9_]*, not reserved ("__" prefix).
std::string label_name(const std::string& key) {
  std::string out;
  for (char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    out += (std::isalnum(c) && c < 0x80) || c == '_' ? static_cast<char>(c) : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  if (out.rfind("__", 0) == 0) out = "label" + out;
  return out;
}

std::string probe_base(const std::string& probe) { return detail::snake(probe.substr(0, probe.find('.'))); }

void state_set(Writer& w, const std::string& family, const std::string& help, Labels labels, Status s) {
  for (Status st : kStates) {
    labels["status"] = std::string(to_string(st));
    w.add(family, help, labels, st == s ? 1 : 0);
  }
}

}  // namespace

std::string to_prometheus(const Report& r) {
  Writer w;
  w.add("nodeprobe_run_info", "nodeprobe run: tool version, label and instance type (value is always 1)",
        {{"version", r.tool.version},
         {"git", r.tool.git},
         {"tool", r.tool.name},
         {"label", r.run.label},
         {"hostname", r.host.hostname},
         {"instance_type", r.host.instance_type}},
        1);
  const double finished = iso8601_to_epoch(r.run.finished.empty() ? r.run.started : r.run.finished);
  if (std::isfinite(finished))
    w.add("nodeprobe_run_timestamp_seconds", "When the run finished, seconds since the Unix epoch", {},
          finished);
  state_set(w, "nodeprobe_verdict", "Run verdict as a state set (1 for the current status)", {}, r.verdict);
  for (const auto& p : r.probes) {
    state_set(w, "nodeprobe_probe_status", "Probe status as a state set (1 for the current status)",
              {{"probe", p.name}}, p.status);
    w.add("nodeprobe_probe_duration_seconds", "Wall-clock time the probe took", {{"probe", p.name}},
          p.duration_s);
  }
  for (const auto& p : r.probes)
    for (const auto& c : p.checks)
      state_set(w, "nodeprobe_check_status", "Check status as a state set (1 for the current status)",
                {{"probe", p.name}, {"check", c.id}}, c.status);
  std::map<std::pair<std::string, std::string>, long> findings;
  for (const auto& f : r.findings) findings[{f.id, std::string(to_string(f.severity))}] += f.count;
  for (const auto& [k, n] : findings)
    w.add("nodeprobe_findings", "Findings raised by the run, by id and severity",
          {{"id", k.first}, {"severity", k.second}}, static_cast<double>(n));

  for (const auto& p : r.probes) {
    for (const auto& m : p.metrics) {
      const MetricDescriptor d = descriptor_of(p, m);
      const detail::UnitMap u = detail::map_unit(d.unit);
      std::string family = "nodeprobe_" + probe_base(p.name) + "_" + detail::snake(m.name);
      if (!u.prom_suffix.empty() && (family.size() < u.prom_suffix.size() ||
                                     family.compare(family.size() - u.prom_suffix.size(),
                                                    u.prom_suffix.size(), u.prom_suffix) != 0))
        family += "_" + u.prom_suffix;
      Labels labels;
      for (const auto& [k, v] : m.labels) {
        std::string name = label_name(k);
        if (name == "probe") name = "metric_probe";
        labels[name] = v;
      }
      labels["probe"] = p.name;
      // HELP comes from the descriptor: one family may hold several probes'
      // series, so it names the metric, not the probe.
      const std::string help = (d.description.empty() ? "metric " + m.name : d.description) + " (reported in " +
                               (d.unit.empty() ? std::string("no unit") : d.unit) + ", exported in " +
                               (u.prom_suffix.empty() ? std::string("the same unit") : u.prom_suffix) +
                               "; " + std::string(to_string(d.better)) + " is better; " +
                               std::string(to_string(d.kind)) + ")";
      w.add(family, help, labels, m.value * u.scale);
    }
  }
  return w.str();
}

}  // namespace nodeprobe
