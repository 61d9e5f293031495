#include "diag_cmd.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>

#include "accept.h"
#include "diagnose.h"
#include "nodeprobe/atomic_file.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/status.h"
#include "text_util.h"

extern char** environ;

namespace nodeprobe::diag {
namespace {

const char* kColors[] = {"", "\033[36m", "\033[33m", "\033[31m"};

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
    const std::size_t show = opt.verbose ? skipped.size() : std::min<std::size_t>(skipped.size(), 6);
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
    const std::size_t ev = opt.verbose ? f.evidence.size() : std::min<std::size_t>(f.evidence.size(), 2);
    for (std::size_t i = 0; i < ev; ++i) {
      const auto& e = f.evidence[i];
      out << "    evidence: " << e.source;
      if (e.line > 0) out << ":" << e.line;
      out << ": " << clean_text(e.text, opt.verbose ? 400 : 160) << "\n";
    }
    const std::size_t steps = opt.verbose ? f.remedy.size() : std::min<std::size_t>(f.remedy.size(), 3);
    for (std::size_t i = 0; i < steps; ++i) out << "    fix " << i + 1 << ": " << f.remedy[i] << "\n";
    if (steps < f.remedy.size()) out << "    (" << f.remedy.size() - steps << " more steps with --verbose or in the JSON)\n";
  }
  out << "\nverdict: " << to_string(r.verdict) << "\n";
}

}  // namespace

CLI::App* setup_diag(CLI::App& app, DiagOptions& opt) {
  CLI::App* sub = app.add_subcommand("diag", "Turn logs, a support bundle or the live system into findings with remedies");
  sub->add_option("--log", opt.logs, "A log to analyse (repeatable; '-' reads stdin; .gz read directly; a directory reads every file)")
      ->type_name("PATH");
  sub->add_option("--bundle", opt.bundle, "A support bundle from `nodeprobe collect` (the .tar.gz or its directory)")
      ->type_name("FILE|DIR");
  sub->add_flag("--live", opt.live, "Also read the live system when --log or --bundle is given");
  sub->add_option("--since", opt.since, "Only events newer than this (30m, 2h, 1d; log times without a zone are local)")
      ->type_name("DURATION");
  sub->add_option("--expect", opt.expect, "Judge against this instance type (e.g. p4d.24xlarge)");
  sub->add_option("--json", opt.json_out, "Write the JSON report to PATH ('-' = stdout only)")->type_name("PATH|-");
  sub->add_option("--label", opt.label, "Free-text label stored in the report");
  sub->add_option("--command-timeout", opt.command_timeout_s, "Deadline of each helper command (nvidia-smi, journalctl...), seconds")
      ->check(finite_range(1.0, 600.0));
  sub->add_flag("--no-limits", opt.no_limits, "Live: do not run nodeprobe-limits");
  add_input_flags(*sub, opt.input);
  sub->add_flag("-v,--verbose", opt.verbose, "All evidence, every remedy step, every skipped source");
  sub->add_flag("-q,--quiet", opt.quiet, "No text summary");
  return sub;
}

int run_diag(const DiagOptions& opt, int argc, char** argv) {
  DiagInputs in;
  if (!opt.since.empty()) {
    in.since_s = parse_duration(opt.since);
    if (!in.since_s) {
      std::cerr << "nodeprobe diag: --since '" << opt.since << "' is not a duration (use 30m, 2h, 1d)\n";
      return exit_code::kUsage;
    }
  }
  if (auto why = check_output_path(opt.json_out); !why.empty()) {
    std::cerr << "nodeprobe diag: " << why << "\n";
    return exit_code::kError;
  }
  in.logs = opt.logs;
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
  Report report = new_report("nodeprobe", argc, argv, opt.label);
  report.host = collect_host_facts(FsRoot("/"), environ);
  // Logs and bundles from elsewhere are judged against their own instance
  // type (or --expect), never this machine's.
  if (!in.live) report.host.instance_type.clear();
  if (!opt.expect.empty()) report.host.instance_type = opt.expect;

  const DiagOutcome outcome = diagnose(report, in);
  report.verdict = compute_verdict(report);
  report.run.finished = utc_now_iso8601();
  for (const auto& e : outcome.input_errors) std::cerr << "nodeprobe diag: " << e << "\n";
  if (!outcome.scanner_available)
    std::cerr << "nodeprobe diag: built without RE2: log lines were not scanned (install libre2-dev / re2-devel and rebuild)\n";

  int rc = exit_code::kOk;
  for (const auto& f : report.findings)
    if (f.severity == Severity::kError) rc = exit_code::kFail;
  if (!outcome.input_errors.empty()) rc = exit_code::kError;
  // Logs asked for and not scanned: the answer is incomplete, not clean.
  if (!outcome.scanner_available && (!opt.logs.empty() || !opt.bundle.empty())) rc = exit_code::kError;

  if (!opt.json_out.empty()) {
    try {
      if (opt.json_out == "-") std::cout << dump_report(report);
      else write_file_atomic(opt.json_out, dump_report(report));
    } catch (const std::exception& e) {
      std::cerr << "nodeprobe diag: " << e.what() << "\n";
      rc = exit_code::kError;
    }
  }
  if (!opt.quiet) {
    std::ostream& text = opt.json_out == "-" ? std::cerr : std::cout;
    const bool tty = ::isatty(opt.json_out == "-" ? STDERR_FILENO : STDOUT_FILENO) != 0;
    render(report, opt, text, tty);
  }
  return rc;
}

}  // namespace nodeprobe::diag
