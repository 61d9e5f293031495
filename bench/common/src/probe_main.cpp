#include "nodeprobe/probe_main.h"

#include <CLI/CLI.hpp>

#include <iostream>

#include "nodeprobe/cli_checks.h"
#include "nodeprobe/emit.h"
#include "nodeprobe/error.h"
#include "nodeprobe/host_activity.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/stop.h"
#include "nodeprobe/version.h"

#include <unistd.h>  // environ (declared under _GNU_SOURCE, which g++ always defines)

namespace nodeprobe {
namespace {

// How long a probe gets to wind down after a stop before the checkpoint is
// written instead; under the runner's kill grace (diag/runner/runner.cpp).
constexpr double kProbeGrace_s = 1.5;

}  // namespace

void add_report_flags(CLI::App& app, CommonOptions& opt) {
  app.add_option("--json", opt.json_out, "Write the JSON report to PATH ('-' = stdout only)")
      ->type_name("PATH|-");
  app.add_option("--timeout", opt.timeout_s,
                 "Deadline for the whole run in seconds (0 = none); what finished is reported, exit 124")
      ->check(finite_range(0, 1e7));
  app.add_flag("-v,--verbose", opt.verbose, "Print details while running");
  app.add_option("--label", opt.label, "Free-text label stored in the report");
  app.add_flag("-q,--quiet", opt.quiet, "No text summary");
  app.add_option("--prometheus", opt.exports.prometheus, "Also write a node_exporter textfile (*.prom)");
  app.add_option("--cloudwatch-emf", opt.exports.emf, "Also write CloudWatch EMF JSON lines");
  app.add_option("--junit", opt.exports.junit, "Also write JUnit XML");
  app.set_version_flag("--version", std::string(kVersion) + " (" + kGitDescribe + ")");
}

void add_common_flags(CLI::App& app, CommonOptions& opt) {
  add_report_flags(app, opt);
  app.add_flag("--list", opt.list, "List the probes of this executable and exit");
  app.add_option("--sysroot", opt.sysroot, "Read /proc, /sys and /etc under DIR (fixtures)")
      ->check(CLI::ExistingDirectory);
}

namespace {

void release_required(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) o->required(false);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) release_required(*sub);
}

}  // namespace

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const CompletionValues& completion) {
  show_defaults(app);  // --help and the man page show what an option is when not given
  if (argc == 2 && std::string(argv[1]) == "--help-man") {
    write_man_page(app, std::cout);
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "--help-completion") {
    write_bash_completion(app, completion, std::cout);
    return 0;
  }
  // `PROGRAM --list` of a program made of subcommands (nodeprobe, nodeprobe-io)
  // lists them in the shape every --list has: NAME<TAB>DESCRIPTION.
  const auto all = [](CLI::App*) { return true; };
  if (argc == 2 && std::string(argv[1]) == "--list" && !app.get_subcommands(all).empty()) {
    if (app.get_option_no_throw("--list") == nullptr) {
      for (const CLI::App* sub : app.get_subcommands(all))
        if (!sub->get_group().empty()) std::cout << sub->get_name() << "\t" << sub->get_description() << "\n";
      return exit_code::kOk;
    }
  }
  // --list needs nothing else: options required for a run (io's --dir) are not then.
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--list") {
      release_required(app);
      break;
    }
  guard_numeric_options(app);  // no NaN or infinity reaches a program through a flag
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << app.get_name() << " " << kVersion << " (" << kGitDescribe << ")\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::cerr << app.get_name() << ": " << msg << " (see --help)\n";
    return exit_code::kUsage;
  }
  return std::nullopt;
}

Report new_report(const std::string& tool_name, int argc, char** argv, const std::string& label) {
  Report r;
  r.tool = {tool_name, kVersion, kGitDescribe};
  r.run.id = make_run_id();
  r.run.label = label;
  for (int i = 0; i < argc; ++i) r.run.argv.emplace_back(argv[i]);
  r.run.started = utc_now_iso8601();
  return r;
}

int run_probes(const std::string& tool_name, std::vector<std::unique_ptr<Probe>>& probes,
               const CommonOptions& opt, int argc, char** argv) {
  if (opt.list) {
    for (const auto& p : probes) text_stream(opt) << p->key() << "\t" << p->description() << "\n";
    return exit_code::kOk;
  }
  if (auto why = check_output_paths(opt); !why.empty()) {
    std::cerr << tool_name << ": " << why << "\n";
    return exit_code::kError;
  }
  install_stop_handlers({tool_name, opt.timeout_s, kProbeGrace_s});

  const FsRoot fs(opt.sysroot);
  Clock& clock = steady_clock();
  const double t_start = clock.now_s();
  Report report = new_report(tool_name, argc, argv, opt.label);
  report.host = collect_host_facts(fs, environ);

  bool stop_told = false;  // the first probe the stop reached carries its status
  for (std::size_t i = 0; i < probes.size(); ++i) {
    Probe& probe = *probes[i];
    std::vector<std::string> later;
    for (std::size_t k = i + 1; k < probes.size(); ++k) later.push_back(probes[k]->key());
    set_emergency_report(report, {probe.key()}, later, opt, tool_name);
    if (stop_requested()) {
      ProbeResult p = stopped_probe(probe.key(), false);
      if (!stop_told) {
        p = ProbeResult{};
        p.name = probe.key();
        mark_stopped(p);
      }
      stop_told = true;
      report.probes.push_back(std::move(p));
      continue;
    }

    ProbeContext ctx{fs, clock, std::cerr, opt.verbose,
                     opt.timeout_s > 0 ? t_start + opt.timeout_s : 0, &report.host};
    ProbeResult result;
    result.name = probe.key();
    const double t0 = clock.now_s();
    const ActivityMeter activity;
    const std::string waived = probe.waive_reason(ctx);
    if (!waived.empty()) {
      result.status = Status::kSkip;
      result.reason = waived;
    } else {
      result.status = Status::kUnknown;
      try {
        probe.run(ctx, result);
        if (result.status == Status::kUnknown) result.status = status_from_checks(result);
      } catch (const std::exception& e) {
        result.status = Status::kError;
        result.reason = e.what();
      }
      probe.fill_host(report.host);
      mark_stopped(result);
      stop_told = stop_requested();
    }
    if ((result.status == Status::kSkip || result.status == Status::kError ||
         result.status == Status::kTimeout) &&
        result.reason.empty())
      result.reason = std::string(to_string(result.status)) + " without a reason from the probe";
    result.duration_s = std::max(0.0, clock.now_s() - t0);
    if (result.status != Status::kSkip) result.host_activity = activity.stop();
    report.probes.push_back(std::move(result));
  }

  // From here a signal no longer replaces the report with the checkpoint.
  const StopCause stopped = begin_final_write();
  finalize_report(report);
  const int rc = stopped != StopCause::kNone ? stop_exit_code() : report_exit_code(report);
  return emit_report(report, opt, rc, tool_name);
}

}  // namespace nodeprobe
