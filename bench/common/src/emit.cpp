#include "nodeprobe/emit.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/exporters.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/stop.h"

namespace nodeprobe {

std::ostream& text_stream(const CommonOptions& opt) {
  return opt.json_out == "-" || opt.text_to_stderr ? std::cerr : std::cout;
}

bool text_is_tty(const CommonOptions& opt) {
  return ::isatty(opt.json_out == "-" || opt.text_to_stderr ? STDERR_FILENO : STDOUT_FILENO) != 0;
}

std::string check_output_paths(const CommonOptions& opt) {
  for (const auto* path : {&opt.json_out, &opt.exports.prometheus, &opt.exports.emf, &opt.exports.junit})
    if (auto why = check_output_path(*path); !why.empty()) return why;
  return {};
}

int emit_report(const Report& r, const CommonOptions& opt, int rc, const std::string& tool, const TextRenderer& text) {
  std::vector<std::pair<std::string, std::string>> docs;
  if (!opt.json_out.empty()) docs.emplace_back(opt.json_out, dump_report(r));
  for (auto& d : export_documents(r, opt.exports)) docs.push_back(std::move(d));
  // Each document on its own: a failed exporter does not cost the JSON.
  for (const auto& [path, doc] : docs) {
    try {
      write_file_atomic(path, doc);
    } catch (const std::exception& e) {
      std::cerr << tool << ": " << e.what() << "\n";
      rc = exit_code::kError;
    }
  }
  if (!opt.quiet) {
    std::ostream& out = text_stream(opt);
    if (text) {
      text(r, out, text_is_tty(opt), rc);
    } else {
      TextOptions topt;
      topt.verbose = opt.verbose;
      topt.color = text_is_tty(opt);
      render_text(r, out, topt);
    }
    out << std::flush;
  }
  return rc;
}

int report_exit_code(const Report& r) {
  for (const auto& p : r.probes)
    if (p.status == Status::kTimeout) return exit_code::kTimeout;
  return exit_code_for(r.verdict);
}

void finalize_report(Report& r, std::vector<Finding> extra) {
  r.findings = findings_from_checks(r.probes);
  auto st = findings_from_probe_status(r.probes);
  r.findings.insert(r.findings.end(), st.begin(), st.end());
  // Only the checks' findings take evidence in: the diagnosis's own are
  // distinct already (an earlier boot's OOM kill is not this boot's).
  const std::size_t from_checks = r.findings.size();
  for (auto& f : extra) {
    const auto end = r.findings.begin() + static_cast<std::ptrdiff_t>(from_checks);
    auto same = std::find_if(r.findings.begin(), end, [&](const Finding& g) {
      return g.id == f.id && (g.probe == f.probe || f.probe.empty()) &&
             !(f.facts.is_object() && f.facts.contains("past"));
    });
    if (same == end) {
      r.findings.push_back(std::move(f));
      continue;
    }
    // The same problem seen twice (a check and a log line): one finding, all
    // the evidence; the playbook's title says more than the generic one.
    if (!f.title.empty()) same->title = f.title;
    if (!f.action.empty()) same->action = f.action;
    for (auto& e : f.evidence)
      if (std::none_of(same->evidence.begin(), same->evidence.end(),
                       [&](const Evidence& x) { return x.text == e.text; }))
        same->evidence.push_back(std::move(e));
    for (auto& step : f.remedy)
      if (std::find(same->remedy.begin(), same->remedy.end(), step) == same->remedy.end())
        same->remedy.push_back(std::move(step));
    if (f.severity == Severity::kError) same->severity = Severity::kError;
    same->count = std::max(same->count, f.count);
  }
  r.verdict = compute_verdict(r);
  r.action = node_action(r.findings);
  r.run.finished = utc_now_iso8601();
}

void mark_stopped(ProbeResult& p) {
  if (!stop_requested()) return;
  std::string why = stop_reason() + " during " + p.name;
  if (!p.metrics.empty()) why += "; the measurements that finished are kept";
  if (!p.reason.empty()) why += " (" + p.reason + ")";
  p.reason = why;
  p.status = stop_cause() == StopCause::kDeadline ? Status::kTimeout : Status::kError;
}

ProbeResult stopped_probe(const std::string& name, bool running) {
  ProbeResult p;
  p.name = name;
  if (running) {
    p.status = stop_cause() == StopCause::kDeadline ? Status::kTimeout : Status::kError;
    p.reason = stop_reason() + " during " + name + "; it did not stop in time, nothing it measured was kept";
  } else {
    p.status = Status::kSkip;
    p.reason = "not run: " + stop_reason();
  }
  return p;
}

void set_emergency_report(Report checkpoint, std::vector<std::string> in_flight, std::vector<std::string> not_started,
                          const CommonOptions& opt, const std::string& tool, std::vector<Finding> extra) {
  CommonOptions quiet = opt;
  quiet.quiet = true;
  set_emergency_writer([r = std::move(checkpoint), in_flight = std::move(in_flight),
                        not_started = std::move(not_started), quiet, tool, extra = std::move(extra)]() mutable {
    for (const auto& n : in_flight) r.probes.push_back(stopped_probe(n, true));
    for (const auto& n : not_started) r.probes.push_back(stopped_probe(n, false));
    finalize_report(r, std::move(extra));
    emit_report(r, quiet, 0, tool);
  });
}

}  // namespace nodeprobe
