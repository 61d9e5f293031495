#include "diag_cmd.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>

#include "accept.h"
#include "diagnose.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/emit.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/instance_table.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/status.h"
#include "nodeprobe/stop.h"
#include "normalise.h"
#include "rules.h"
#include "text_util.h"

namespace nodeprobe::diag {
namespace {

const char* kColors[] = {"", "\033[36m", "\033[33m", "\033[31m"};
constexpr const char* kTool = "nodeprobe diag";
// Long enough for a helper command (nvidia-smi, journalctl) to be killed
// and the sources read so far to be judged.
constexpr double kDiagGrace_s = 4;

void render(const Report& r, const DiagOptions& opt, std::ostream& out, bool color) {
  const ProbeResult* d = nullptr;
  for (const auto& p : r.probes)
    if (p.name == "diag") d = &p;
  if (d && d->data.contains("sources")) {
    int analysed = 0;
    std::vector<std::string> skipped;
    for (const auto& s : d->data.at("sources")) {
      const std::string st = s.value("status", std::string());
      if (st == "analysed" || st == "partial") ++analysed;
      if (st != "analysed")
        skipped.push_back(s.value("name", std::string()) + " (" + st + ": " + s.value("reason", std::string()) + ")");
    }
    out << "diag: " << analysed << " source(s) analysed";
    if (d->data.contains("collected")) out << " (collected " << d->data.at("collected").get<std::string>() << ")";
    out << "\n";
    const std::size_t show = opt.common.verbose ? skipped.size() : std::min<std::size_t>(skipped.size(), 6);
    for (std::size_t i = 0; i < show; ++i) out << "  not read: " << skipped[i] << "\n";
    if (show < skipped.size()) out << "  ... " << skipped.size() - show << " more (--verbose)\n";
  }
  if (r.findings.empty()) out << "\nno findings\n";
  for (const auto& f : r.findings) {
    const int sev = f.severity == Severity::kError ? 3 : f.severity == Severity::kWarn ? 2 : 1;
    out << "\n" << (color ? kColors[sev] : "") << "[" << to_string(f.severity) << "]" << (color ? "\033[0m" : "")
        << " " << f.id << ": " << f.title;
    if (f.count > 1) out << " (x" << f.count << ")";
    out << "\n";
    if (!f.first_seen.empty())
      out << "    seen: " << f.first_seen << (f.last_seen != f.first_seen ? " .. " + f.last_seen : "") << "\n";
    const std::size_t ev = opt.common.verbose ? f.evidence.size() : std::min<std::size_t>(f.evidence.size(), 2);
    for (std::size_t i = 0; i < ev; ++i) {
      const auto& e = f.evidence[i];
      out << "    evidence: " << e.source;
      if (e.line > 0) out << ":" << e.line;
      out << ": " << evidence_display(e.text, opt.common.verbose ? 600 : 300) << "\n";
    }
    if (!f.action.empty() && f.action != "none") out << "    action: " << f.action << "\n";
    const std::size_t steps = opt.common.verbose ? f.remedy.size() : std::min<std::size_t>(f.remedy.size(), 3);
    for (std::size_t i = 0; i < steps; ++i) out << "    fix " << i + 1 << ": " << f.remedy[i] << "\n";
    if (steps < f.remedy.size()) out << "    (" << f.remedy.size() - steps << " more steps with --verbose or in the JSON)\n";
  }
  out << "\nverdict: " << to_string(r.verdict) << "\n";
  if (!r.action.empty()) out << "node action: " << r.action << "\n";
}

}  // namespace

CLI::App* setup_diag(CLI::App& app, DiagOptions& opt) {
  CLI::App* sub = app.add_subcommand("diag", "Turn logs, a support bundle or the live system into findings with remedies");
  add_report_flags(*sub, opt.common);
  sub->add_flag("--list", opt.common.list, "List the line rules (and the finding each raises) and the instance types, then exit");
  sub->get_option("--verbose")->description("All evidence, every remedy step, every skipped source");
  sub->add_option("--log", opt.logs, "A log to analyse (repeatable; '-' reads stdin; .gz read directly; a directory reads every file)")
      ->type_name("PATH");
  sub->add_option("--bundle", opt.bundle, "A support bundle from `nodeprobe collect` (the .tar.gz or its directory)")
      ->type_name("FILE|DIR");
  sub->add_flag("--live", opt.live, "Also read the live system when --log or --bundle is given");
  sub->add_option("--since", opt.since, "Only events newer than this (30m, 2h, 1d; log times without a zone are local)")
      ->type_name("DURATION");
  sub->add_option("--rules", opt.rules, "Site rules to add to the built-in ones (JSON, schema nodeprobe.rules/1; repeatable)")
      ->type_name("FILE");
  sub->add_option("--expect", opt.expect, "Judge against this instance type (e.g. p4d.24xlarge)");
  sub->add_option("--command-timeout", opt.command_timeout_s, "Deadline of each helper command (nvidia-smi, journalctl...), seconds")
      ->check(finite_range(1.0, 600.0));
  sub->add_flag("--no-limits", opt.no_limits, "Live: do not run nodeprobe-limits");
  add_input_flags(*sub, opt.input);
  return sub;
}

int run_diag(const DiagOptions& opt, int argc, char** argv) {
  DiagInputs in;
  if (!opt.since.empty()) {
    in.since_s = parse_duration(opt.since);
    if (!in.since_s) {
      std::cerr << kTool << ": --since '" << opt.since << "' is not a duration (use 30m, 2h, 1d)\n";
      return exit_code::kUsage;
    }
  }
  if (opt.common.list) {
    for (const auto& r : default_rules().rules())
      std::cout << r.key << "\trule: " << (r.finding.empty() ? "signal for context rules" : "raises " + r.finding) << "\n";
    std::cout << instance_table().list_lines();
    return exit_code::kOk;
  }
  if (const std::string why = instance_table().unknown_reason(opt.expect); !why.empty()) {
    std::cerr << kTool << ": --expect: " << why << "\n";  // the same answer as accept and gemm
    return exit_code::kUsage;
  }
  if (auto why = check_output_paths(opt.common); !why.empty()) {
    std::cerr << kTool << ": " << why << "\n";
    return exit_code::kError;
  }
  install_stop_handlers({kTool, opt.common.timeout_s, kDiagGrace_s});
  in.logs = opt.logs;
  in.rule_files = opt.rules;
  in.bundle = opt.bundle;
  in.live = opt.live || (opt.logs.empty() && opt.bundle.empty());
  in.expect = opt.expect;
  in.command_timeout_s = opt.command_timeout_s;
  in.input = opt.input;
  in.envp = environ;
  if (in.live && !opt.no_limits) {
    const std::string exe = probe_dir() + "nodeprobe-limits";
    if (::access(exe.c_str(), X_OK) == 0) in.limits_exe = exe;
  }
  Report report = new_report("nodeprobe", argc, argv, opt.common.label);
  report.host = collect_host_facts(FsRoot("/"), environ);
  // Logs and bundles from elsewhere are judged against their own instance
  // type (or --expect), never this machine's.
  if (!in.live) report.host.instance_type.clear();
  if (!opt.expect.empty()) report.host.instance_type = opt.expect;

  set_emergency_report(report, {"diag"}, {}, opt.common, kTool);
  const DiagOutcome outcome = diagnose(report, in);
  for (auto& p : report.probes)
    if (p.name == "diag") mark_stopped(p);
  const StopCause stopped = begin_final_write();
  report.verdict = compute_verdict(report);
  report.run.finished = utc_now_iso8601();
  for (const auto& e : outcome.input_errors) std::cerr << kTool << ": " << e << "\n";
  if (!outcome.scanner_available)
    std::cerr << kTool << ": built without RE2: log lines were not scanned (install libre2-dev / re2-devel and rebuild)\n";

  int rc = exit_code::kOk;
  for (const auto& f : report.findings)
    if (f.severity == Severity::kError) rc = exit_code::kFail;
  if (!outcome.input_errors.empty()) rc = exit_code::kError;
  // Logs asked for and not scanned: the answer is incomplete, not clean.
  if (!outcome.scanner_available && (!opt.logs.empty() || !opt.bundle.empty())) rc = exit_code::kError;
  if (stopped != StopCause::kNone) rc = stop_exit_code();
  return emit_report(report, opt.common, rc, kTool,
                     [&opt](const Report& r, std::ostream& out, bool color, int) { render(r, opt, out, color); });
}

}  // namespace nodeprobe::diag
