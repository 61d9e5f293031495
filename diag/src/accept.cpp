#include "accept.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/fs_root.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/subprocess.h"

extern char** environ;

namespace nodeprobe::diag {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

std::string make_work_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/nodeprobe-accept-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return {};
  return tmpl;
}

void finalize(Report& r) {
  r.findings = findings_from_checks(r.probes);
  auto extra = findings_from_probe_status(r.probes);
  r.findings.insert(r.findings.end(), extra.begin(), extra.end());
  r.verdict = compute_verdict(r);
  r.run.finished = utc_now_iso8601();
}

}  // namespace

std::string probe_dir() {
  if (const char* d = std::getenv("NODEPROBE_PROBE_DIR"); d && *d) {
    std::string s = d;
    if (s.back() != '/') s += '/';
    return s;
  }
  return self_exe_dir();
}

CLI::App* setup_accept(CLI::App& app, AcceptOptions& opt) {
  CLI::App* sub = app.add_subcommand("accept", "Is this node fit to train? Run every probe, judge, report");
  sub->add_option("--profile", opt.profile, "quick (seconds) or full (minutes)")
      ->check(CLI::IsMember({"quick", "full"}));
  sub->add_option("--expect", opt.expect, "Judge against this instance type (e.g. p4d.24xlarge)");
  sub->add_option("--label", opt.label, "Free-text label stored in the report");
  sub->add_option("--json", opt.json_out, "Write the JSON report to PATH ('-' = stdout only)")
      ->type_name("PATH|-");
  sub->add_option("--data-dir", opt.data_dir, "Directory for the IO probe's temporary dataset");
  sub->add_option("--only", opt.only, "Run only these probes (comma-separated)")->delimiter(',');
  sub->add_flag("-v,--verbose", opt.verbose, "Show every check and metric");
  sub->add_flag("-q,--quiet", opt.quiet, "No text summary");
  return sub;
}

std::vector<ProbeSpec> accept_plan(const AcceptOptions& opt) {
  const bool full = opt.profile == "full";
  std::vector<ProbeSpec> plan;
  // Add a line per probe executable; a probe missing from this build is
  // reported as skipped, never faked.
  plan.push_back({"limits", "nodeprobe-limits", {}, full ? 30.0 : 10.0, {}});
  if (!opt.only.empty()) {
    plan.erase(std::remove_if(plan.begin(), plan.end(),
                              [&](const ProbeSpec& s) {
                                return std::find(opt.only.begin(), opt.only.end(), s.name) ==
                                       opt.only.end();
                              }),
               plan.end());
  }
  return plan;
}

int run_accept(const AcceptOptions& opt, int argc, char** argv) {
  if (auto why = check_output_path(opt.json_out); !why.empty()) {
    std::cerr << "nodeprobe accept: " << why << "\n";
    return exit_code::kError;
  }
  const auto plan = accept_plan(opt);
  if (plan.empty()) {
    std::cerr << "nodeprobe accept: --only names no known probe\n";
    return exit_code::kUsage;
  }
  std::ostream& text = opt.json_out == "-" ? std::cerr : std::cout;
  const bool tty = ::isatty(opt.json_out == "-" ? STDERR_FILENO : STDOUT_FILENO) != 0;

  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  Report report = new_report("nodeprobe", argc, argv, opt.label);
  report.host = collect_host_facts(FsRoot("/"), environ);
  if (!opt.expect.empty()) report.host.instance_type = opt.expect;

  const std::string work = make_work_dir();
  if (work.empty()) {
    std::cerr << "nodeprobe accept: cannot create a temporary directory: " << std::strerror(errno)
              << "\n";
    return exit_code::kError;
  }
  const std::string bin = probe_dir();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const ProbeSpec& spec = plan[i];
    if (g_interrupted) {
      ProbeResult r;
      r.name = spec.name;
      r.status = Status::kSkip;
      r.reason = "not run: interrupted";
      report.probes.push_back(std::move(r));
      continue;
    }
    if (!executable(bin + spec.executable)) {
      ProbeResult r;
      r.name = spec.name;
      r.status = Status::kSkip;
      r.reason = "not available: " + spec.executable + " is not part of this build";
      report.probes.push_back(std::move(r));
      continue;
    }
    if (tty && !opt.quiet) {
      char line[160];
      std::snprintf(line, sizeof line, "[%zu/%zu] %s (deadline %g s) ...", i + 1, plan.size(),
                    spec.name.c_str(), spec.deadline_s);
      text << line << std::flush;
    }
    ProbeOutcome o = run_probe_executable(spec, bin, work, &g_interrupted);
    if (o.have_host) merge_host(report.host, o.host);
    if (tty && !opt.quiet) {
      char line[160];
      const double d = o.probes.empty() ? 0 : o.probes.front().duration_s;
      std::snprintf(line, sizeof line, "\r[%zu/%zu] %-12s %-7s %.2f s          \n", i + 1,
                    plan.size(), spec.name.c_str(),
                    o.probes.empty() ? "?" : std::string(to_string(o.probes.front().status)).c_str(), d);
      text << line << std::flush;
    }
    for (auto& p : o.probes) report.probes.push_back(std::move(p));
  }
  std::error_code ec;
  std::filesystem::remove_all(work, ec);

  finalize(report);
  int rc = g_interrupted ? exit_code::kInterrupted : exit_code_for(report.verdict);
  if (!opt.json_out.empty()) {
    try {
      write_file_atomic(opt.json_out, dump_report(report));
    } catch (const std::exception& e) {
      std::cerr << "nodeprobe accept: " << e.what() << "\n";
      rc = exit_code::kError;
    }
  }
  if (!opt.quiet) {
    if (tty) text << "\n";
    TextOptions topt;
    topt.color = tty;
    topt.verbose = opt.verbose;
    render_text(report, text, topt);
    if (opt.json_out.empty()) text << "(add --json FILE to keep the report)\n";
  }
  return rc;
}

}  // namespace nodeprobe::diag
