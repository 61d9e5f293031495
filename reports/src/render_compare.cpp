#include "nodeprobe/render_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/render_text.h"

namespace nodeprobe {
namespace {

std::vector<const MetricDiff*> sorted(const Comparison& c) {
  std::vector<const MetricDiff*> v;
  for (const auto& d : c.metrics) v.push_back(&d);
  std::stable_sort(v.begin(), v.end(), [](const MetricDiff* a, const MetricDiff* b) {
    return verdict_order(a->judgement.verdict) < verdict_order(b->judgement.verdict);
  });
  return v;
}

std::string metric_label(const std::string& probe, const std::string& name, const Labels& labels,
                         int occurrence = 0) {
  std::string s = probe + "/" + name + labels_text(labels);
  if (occurrence > 0) s += " #" + std::to_string(occurrence + 1);
  return s;
}

std::string change_text(const FieldDiff& f) {
  std::string key = f.key;
  if (f.probe.empty()) key = f.section + " " + f.key;  // host kernel, env NCCL_ALGO, tool version
  return key + " " + f.before + " -> " + f.after;
}

/// "throughput -48.1 % worse (1523 -> 790 MB/s)".
std::string moved_text(const MetricDiff& d) {
  std::string name = metric_title(d.descriptor);
  if (!d.labels.empty()) name += labels_text(d.labels);
  return name + " " + format_delta(d.judgement.delta_pct) + " " + std::string(to_string(d.judgement.verdict)) +
         " (" + format_metric(d.descriptor, d.before.center) + " -> " + format_metric(d.descriptor, d.after.center) +
         ")";
}

std::string run_line(const RunSummary& r) {
  std::string s = r.origin;
  if (!r.label.empty()) s += " (label \"" + r.label + "\")";
  if (!r.hostname.empty()) s += " on " + r.hostname;
  if (!r.instance_type.empty()) s += " (" + r.instance_type + ")";
  if (!r.started.empty()) s += ", " + r.started;
  s += ", verdict " + std::string(to_string(r.verdict));
  return s;
}

std::string summary_line(const Comparison& c) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "threshold %.1f %%; %zu metrics paired: %zu better, %zu worse, %zu same, %zu "
                "ambiguous, %zu n/a; %zu only before, %zu only after",
                c.options.threshold_pct, c.metrics.size(), c.count(Verdict::kBetter),
                c.count(Verdict::kWorse), c.count(Verdict::kSame), c.count(Verdict::kAmbiguous),
                c.count(Verdict::kInvalid), c.only_before.size(), c.only_after.size());
  return buf;
}

const char* verdict_color(Verdict v) {
  switch (v) {
    case Verdict::kBetter: return "\033[32m";
    case Verdict::kWorse: return "\033[31m";
    case Verdict::kAmbiguous: return "\033[33m";
    default: return "\033[2m";
  }
}

/// Pads to `w` columns, keeping at least two spaces after a longer text.
std::string pad(std::string s, std::size_t w) {
  if (s.size() + 2 <= w) s.resize(w, ' ');
  else s += "  ";
  return s;
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|' || ch == '\\' || ch == '*' || ch == '_' || ch == '`') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

Json side_json(const Side& s) {
  if (!std::isfinite(s.center)) return Json{{"value", nullptr}, {"spread", s.spread}, {"n", s.n}};
  Json j{{"value", s.center}, {"spread", s.spread}, {"n", s.n}};
  if (s.has_spread) {
    j["lo"] = s.lo;
    j["hi"] = s.hi;
  }
  return j;
}

Json run_json(const RunSummary& r) {
  return Json{{"origin", r.origin},   {"label", r.label},       {"run_id", r.run_id},
              {"started", r.started}, {"hostname", r.hostname}, {"instance_type", r.instance_type},
              {"verdict", to_string(r.verdict)}};
}

}  // namespace

int verdict_order(Verdict v) {
  switch (v) {
    case Verdict::kWorse: return 0;
    case Verdict::kBetter: return 1;
    case Verdict::kAmbiguous: return 2;
    case Verdict::kSame: return 3;
    case Verdict::kInvalid: break;
  }
  return 4;
}

std::string format_side(const Side& s, const MetricDescriptor& d) {
  std::string out = format_number(shown_value(d, s.center));
  if (s.has_spread && s.hi > s.lo)
    out += " (" + format_number(shown_value(d, s.lo)) + ".." + format_number(shown_value(d, s.hi)) + ")";
  return out;
}

std::string metric_label(const MetricDiff& d) { return metric_label(d.probe, d.name, d.labels, d.occurrence); }

std::vector<std::string> cause_lines(const Cause& c) {
  std::vector<std::string> out;
  std::string head = c.probe + ": ";
  if (c.changes.empty()) {
    head += "no setting or environment change recorded (the node itself, or something nodeprobe does not see)";
  } else {
    for (std::size_t i = 0; i < c.changes.size(); ++i) head += (i ? ", " : "") + change_text(*c.changes[i]);
  }
  out.push_back(head);
  if (const std::string busy = activity_text(c.before_activity, c.after_activity); !busy.empty())
    out.push_back("  host: " + busy);
  if (c.moved.empty()) {
    out.push_back("  moved: nothing beyond the threshold and the noise");
    return out;
  }
  constexpr std::size_t kMax = 6;
  std::string line = "  moved: ";
  for (std::size_t i = 0; i < c.moved.size() && i < kMax; ++i) line += (i ? ", " : "") + moved_text(*c.moved[i]);
  if (c.moved.size() > kMax) line += ", and " + std::to_string(c.moved.size() - kMax) + " more";
  out.push_back(line);
  return out;
}

std::string format_delta(double pct) {
  if (std::isnan(pct)) return "n/a";
  if (std::isinf(pct)) return pct > 0 ? "+inf %" : "-inf %";
  char buf[32];
  if (std::fabs(pct) >= 1000)
    std::snprintf(buf, sizeof buf, "%+.0f %%", pct);
  else
    std::snprintf(buf, sizeof buf, "%+.1f %%", pct);
  return buf;
}

void render_compare_text(const Comparison& c, std::ostream& out, bool color) {
  out << "before: " << run_line(c.before) << "\n";
  out << "after:  " << run_line(c.after) << "\n";
  out << summary_line(c) << "\n";
  const auto causes = c.causes();
  if (!causes.empty()) {
    out << "\nwhat changed, and what moved with it:\n";
    for (const auto& cause : causes)
      for (const auto& l : cause_lines(cause)) out << "  " << l << "\n";
  }
  if (!c.metrics.empty()) {
    std::size_t wm = 6;
    for (const auto& d : c.metrics) wm = std::max(wm, metric_label(d).size());
    wm = std::min<std::size_t>(wm, 60);
    out << "\n" << pad("verdict", 11) << pad("metric", wm + 2) << pad("before", 24) << pad("after", 24)
        << pad("delta", 10) << "unit\n";
    for (const MetricDiff* d : sorted(c)) {
      std::string v(to_string(d->judgement.verdict));
      std::string tag = pad(v, 11);
      if (color) tag = std::string(verdict_color(d->judgement.verdict)) + tag + "\033[0m";
      out << tag << pad(metric_label(*d), wm + 2) << pad(format_side(d->before, d->descriptor), 24)
          << pad(format_side(d->after, d->descriptor), 24) << pad(format_delta(d->judgement.delta_pct), 10)
          << shown_unit(d->descriptor) << "\n";
      if (d->judgement.verdict != Verdict::kSame)
        out << "           " << d->judgement.reason << "\n";
    }
  }
  auto one_sided = [&](const char* title, const std::vector<OneSided>& v) {
    if (v.empty()) return;
    out << "\n" << title << " (" << v.size() << "):\n";
    for (const auto& m : v)
      out << "  " << metric_label(m.probe, m.name, m.labels) << " = " << format_metric(m.descriptor, m.value) << "\n";
  };
  one_sided("only in before", c.only_before);
  one_sided("only in after", c.only_after);
  if (!c.statuses.empty()) {
    out << "\nstatus changes:\n";
    for (const auto& s : c.statuses)
      out << "  " << s.probe << (s.check.empty() ? "" : " " + s.check) << ": " << to_string(s.before)
          << " -> " << to_string(s.after) << (s.regression ? "  (regression)" : "") << "\n";
  }
  out << "\nsettings and environment:" << (c.environment.empty() ? " no differences\n" : "\n");
  for (const auto& f : c.environment)
    out << "  " << f.section << " " << f.key << ": " << f.before << " -> " << f.after << "\n";
  out << "\nresult: "
      << (c.any_worse() ? std::to_string(c.count(Verdict::kWorse)) + " metric(s) worse"
                        : std::string("no metric worse"))
      << "\n";
}

void render_compare_markdown(const Comparison& c, std::ostream& out) {
  out << "## nodeprobe compare\n\n";
  out << "- before: " << md_escape(run_line(c.before)) << "\n";
  out << "- after: " << md_escape(run_line(c.after)) << "\n";
  out << "- " << md_escape(summary_line(c)) << "\n\n";
  const auto causes = c.causes();
  if (!causes.empty()) {
    out << "### What changed, and what moved with it\n\n";
    for (const auto& cause : causes) {
      const auto lines = cause_lines(cause);
      out << "- " << md_escape(lines.front()) << "\n";
      for (std::size_t i = 1; i < lines.size(); ++i) out << "  - " << md_escape(lines[i].substr(2)) << "\n";
    }
    out << "\n";
  }
  if (!c.metrics.empty()) {
    out << "| verdict | metric | before | after | delta | unit | why |\n";
    out << "|---|---|---:|---:|---:|---|---|\n";
    for (const MetricDiff* d : sorted(c)) {
      out << "| " << (d->judgement.verdict == Verdict::kWorse ? "**worse**"
                                                               : std::string(to_string(d->judgement.verdict)))
          << " | " << md_escape(metric_label(*d)) << " | " << md_escape(format_side(d->before, d->descriptor))
          << " | " << md_escape(format_side(d->after, d->descriptor)) << " | " << format_delta(d->judgement.delta_pct)
          << " | " << md_escape(shown_unit(d->descriptor)) << " | "
          << md_escape(d->judgement.reason) << " |\n";
    }
    out << "\n";
  }
  auto one_sided = [&](const char* title, const std::vector<OneSided>& v) {
    if (v.empty()) return;
    out << "### " << title << "\n\n";
    for (const auto& m : v)
      out << "- " << md_escape(metric_label(m.probe, m.name, m.labels)) << " = "
          << md_escape(format_metric(m.descriptor, m.value)) << "\n";
    out << "\n";
  };
  one_sided("Only in before", c.only_before);
  one_sided("Only in after", c.only_after);
  if (!c.statuses.empty()) {
    out << "### Status changes\n\n| probe | check | before | after |\n|---|---|---|---|\n";
    for (const auto& s : c.statuses)
      out << "| " << md_escape(s.probe) << " | " << md_escape(s.check) << " | " << to_string(s.before)
          << " | " << (s.regression ? "**" : "") << to_string(s.after) << (s.regression ? "**" : "")
          << " |\n";
    out << "\n";
  }
  out << "### Settings and environment\n\n";
  if (c.environment.empty()) out << "No differences.\n";
  else {
    out << "| section | key | before | after |\n|---|---|---|---|\n";
    for (const auto& f : c.environment)
      out << "| " << md_escape(f.section) << " | " << md_escape(f.key) << " | " << md_escape(f.before)
          << " | " << md_escape(f.after) << " |\n";
  }
}

Json compare_to_json(const Comparison& c) {
  Json j;
  j["schema"] = "nodeprobe.compare/2";
  j["threshold_pct"] = c.options.threshold_pct;
  j["before"] = run_json(c.before);
  j["after"] = run_json(c.after);
  j["summary"] = Json{{"better", c.count(Verdict::kBetter)},       {"worse", c.count(Verdict::kWorse)},
                      {"same", c.count(Verdict::kSame)},           {"ambiguous", c.count(Verdict::kAmbiguous)},
                      {"n/a", c.count(Verdict::kInvalid)},         {"only_before", c.only_before.size()},
                      {"only_after", c.only_after.size()}};
  Json metrics = Json::array();
  for (const auto& d : c.metrics) {
    Json m{{"probe", d.probe}, {"name", d.name},      {"labels", d.labels}, {"unit", d.unit},
           {"better", to_string(d.better)}, {"kind", to_string(d.descriptor.kind)}};
    if (d.occurrence) m["occurrence"] = d.occurrence;
    m["before"] = side_json(d.before);
    m["after"] = side_json(d.after);
    m["delta_pct"] = std::isfinite(d.judgement.delta_pct) ? Json(d.judgement.delta_pct) : Json(nullptr);
    m["verdict"] = to_string(d.judgement.verdict);
    m["reason"] = d.judgement.reason;
    metrics.push_back(std::move(m));
  }
  j["metrics"] = std::move(metrics);
  auto one = [](const std::vector<OneSided>& v) {
    Json a = Json::array();
    for (const auto& m : v)
      a.push_back(Json{{"probe", m.probe}, {"name", m.name}, {"labels", m.labels}, {"unit", m.unit},
                       {"value", m.value}});
    return a;
  };
  j["only_before"] = one(c.only_before);
  j["only_after"] = one(c.only_after);
  Json st = Json::array();
  for (const auto& s : c.statuses)
    st.push_back(Json{{"probe", s.probe}, {"check", s.check}, {"before", to_string(s.before)},
                      {"after", to_string(s.after)}, {"regression", s.regression}});
  j["statuses"] = std::move(st);
  Json env = Json::array();
  for (const auto& f : c.environment)
    env.push_back(Json{{"section", f.section}, {"key", f.key}, {"before", f.before}, {"after", f.after}});
  j["environment"] = std::move(env);
  Json causes = Json::array();
  for (const auto& cause : c.causes()) {
    Json ch = Json::array(), mv = Json::array();
    for (const FieldDiff* f : cause.changes)
      ch.push_back(Json{{"section", f->section}, {"key", f->key}, {"before", f->before}, {"after", f->after}});
    for (const MetricDiff* d : cause.moved)
      mv.push_back(Json{{"name", d->name}, {"labels", d->labels}, {"verdict", to_string(d->judgement.verdict)},
                        {"delta_pct", std::isfinite(d->judgement.delta_pct) ? Json(d->judgement.delta_pct) : Json(nullptr)}});
    causes.push_back(Json{{"probe", cause.probe}, {"changes", ch}, {"moved", mv}, {"text", cause_lines(cause)}});
  }
  j["causes"] = std::move(causes);
  return j;
}

}  // namespace nodeprobe
