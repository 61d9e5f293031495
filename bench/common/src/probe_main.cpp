#include "nodeprobe/probe_main.h"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <iostream>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/error.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/version.h"

extern char** environ;

namespace nodeprobe {
namespace {

// What the signal handlers write. Prepared in advance (no allocation in the
// handler); strings are kept alive for the life of the process.
struct Emergency {
  std::atomic<const std::string*> on_interrupt{nullptr};
  std::atomic<const std::string*> on_timeout{nullptr};
  std::string path, tmp;
  std::deque<std::string> keep;
};
Emergency g_emergency;

void write_stderr(const char* s) noexcept {
  ssize_t rc = ::write(STDERR_FILENO, s, std::strlen(s));
  (void)rc;
}

extern "C" void on_fatal_signal(int sig) {
  const bool timeout = sig == SIGALRM;
  const std::string* doc = (timeout ? g_emergency.on_timeout : g_emergency.on_interrupt).load();
  if (doc && !g_emergency.path.empty()) {
    if (!write_file_atomic_nothrow(g_emergency.path.c_str(), g_emergency.tmp.c_str(), doc->data(),
                                   doc->size()))
      write_stderr("nodeprobe: could not write the partial report\n");
  }
  write_stderr(timeout ? "nodeprobe: --timeout reached; partial report written\n"
                       : "nodeprobe: interrupted; partial report written\n");
  ::_exit(timeout ? exit_code::kTimeout : exit_code::kInterrupted);
}

void install_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGALRM}) sigaddset(&sa.sa_mask, sig);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGALRM, &sa, nullptr);
}

// Armed only once a checkpoint exists, so the alarm always has a report to write.
void arm_deadline(double timeout_s) {
  if (timeout_s <= 0) return;
  itimerval t{};
  t.it_value.tv_sec = static_cast<time_t>(timeout_s);
  t.it_value.tv_usec = static_cast<suseconds_t>((timeout_s - std::floor(timeout_s)) * 1e6);
  if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
  ::setitimer(ITIMER_REAL, &t, nullptr);
}

void finalize(Report& r) {
  r.findings = findings_from_checks(r.probes);
  auto extra = findings_from_probe_status(r.probes);
  r.findings.insert(r.findings.end(), extra.begin(), extra.end());
  r.verdict = compute_verdict(r);
  r.run.finished = utc_now_iso8601();
}

// The report as it would stand if the run stopped now, with probe `current`
// in flight and the probes after it not started.
const std::string* prepare_checkpoint(const Report& done,
                                      const std::vector<std::unique_ptr<Probe>>& probes,
                                      std::size_t current, Status in_flight,
                                      const std::string& why) {
  Report r = done;
  for (std::size_t i = current; i < probes.size(); ++i) {
    ProbeResult p;
    p.name = probes[i]->key();
    p.status = i == current ? in_flight : Status::kSkip;
    p.reason = i == current ? why : "not run: " + why;
    r.probes.push_back(std::move(p));
  }
  finalize(r);
  g_emergency.keep.push_back(dump_report(r));
  return &g_emergency.keep.back();
}

}  // namespace

void add_common_flags(CLI::App& app, CommonOptions& opt) {
  app.add_option("--json", opt.json_out, "Write the JSON report to PATH ('-' = stdout only)")
      ->type_name("PATH|-");
  app.add_flag("--list", opt.list, "List the probes of this executable and exit");
  app.add_option("--timeout", opt.timeout_s, "Deadline for the whole run in seconds (0 = none)")
      ->check(finite_range(0, 1e7));
  app.add_flag("-v,--verbose", opt.verbose, "Print details while running");
  app.add_option("--label", opt.label, "Free-text label stored in the report");
  app.add_option("--sysroot", opt.sysroot, "Read /proc, /sys and /etc under DIR (fixtures)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("-q,--quiet", opt.quiet, "No text summary");
  app.add_option("--prometheus", opt.exports.prometheus, "Also write a node_exporter textfile (*.prom)");
  app.add_option("--cloudwatch-emf", opt.exports.emf, "Also write CloudWatch EMF JSON lines");
  app.add_option("--junit", opt.exports.junit, "Also write JUnit XML");
  app.set_version_flag("--version", std::string(kVersion) + " (" + kGitDescribe + ")");
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
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

std::string check_output_path(const std::string& path) {
  if (path.empty() || path == "-") return {};
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return "cannot write report " + path + ": directory " + dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "cannot write report " + path + ": " + dir + " is not a directory";
  if (::access(dir.c_str(), W_OK) != 0)
    return "cannot write report " + path + ": directory " + dir + " is not writable";
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode))
    return "cannot write report " + path + ": it is a directory";
  return {};
}

int run_probes(const std::string& tool_name, std::vector<std::unique_ptr<Probe>>& probes,
               const CommonOptions& opt, int argc, char** argv) {
  std::ostream& text = opt.json_out == "-" ? std::cerr : std::cout;
  if (opt.list) {
    for (const auto& p : probes) text << p->key() << "\t" << p->description() << "\n";
    return exit_code::kOk;
  }
  for (const auto* path : {&opt.json_out, &opt.exports.prometheus, &opt.exports.emf, &opt.exports.junit})
    if (auto why = check_output_path(*path); !why.empty()) {
      std::cerr << tool_name << ": " << why << "\n";
      return exit_code::kError;
    }

  const FsRoot fs(opt.sysroot);
  Clock& clock = steady_clock();
  const double t_start = clock.now_s();
  Report report = new_report(tool_name, argc, argv, opt.label);
  report.host = collect_host_facts(fs, environ);

  if (!opt.json_out.empty()) {
    g_emergency.path = opt.json_out;
    const auto slash = opt.json_out.rfind('/');
    g_emergency.tmp = (slash == std::string::npos ? "" : opt.json_out.substr(0, slash + 1)) + "." +
                      opt.json_out.substr(slash == std::string::npos ? 0 : slash + 1) + ".tmp." +
                      std::to_string(::getpid());
  }
  install_handlers();

  for (std::size_t i = 0; i < probes.size(); ++i) {
    Probe& probe = *probes[i];
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", opt.timeout_s);
    g_emergency.on_timeout =
        prepare_checkpoint(report, probes, i, Status::kTimeout,
                           std::string("deadline of --timeout ") + secs + " s passed");
    g_emergency.on_interrupt =
        prepare_checkpoint(report, probes, i, Status::kError, "interrupted (SIGINT/SIGTERM)");
    if (i == 0 && opt.timeout_s > 0)
      arm_deadline(std::max(1e-6, opt.timeout_s - (clock.now_s() - t_start)));

    ProbeContext ctx{fs, clock, std::cerr, opt.verbose,
                     opt.timeout_s > 0 ? t_start + opt.timeout_s : 0, &report.host};
    ProbeResult result;
    result.name = probe.key();
    const double t0 = clock.now_s();
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
    }
    if ((result.status == Status::kSkip || result.status == Status::kError ||
         result.status == Status::kTimeout) &&
        result.reason.empty())
      result.reason = std::string(to_string(result.status)) + " without a reason from the probe";
    result.duration_s = std::max(0.0, clock.now_s() - t0);
    report.probes.push_back(std::move(result));
  }

  finalize(report);
  const std::string doc = dump_report(report);
  // The run is complete: from here a signal must not replace it with a partial one.
  g_emergency.on_timeout = nullptr;
  g_emergency.on_interrupt = nullptr;
  if (opt.timeout_s > 0) {
    itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
  }
  int rc = exit_code_for(report.verdict);
  if (!opt.json_out.empty()) {
    try {
      write_file_atomic(opt.json_out, doc);
    } catch (const std::exception& e) {
      std::cerr << tool_name << ": " << e.what() << "\n";
      rc = exit_code::kError;
    }
  }
  if (opt.exports.any()) {
    try {
      for (const auto& [path, content] : export_documents(report, opt.exports)) write_file_atomic(path, content);
    } catch (const std::exception& e) {
      std::cerr << tool_name << ": " << e.what() << "\n";
      rc = exit_code::kError;
    }
  }
  if (!opt.quiet) {
    TextOptions topt;
    topt.verbose = opt.verbose;
    topt.color = ::isatty(opt.json_out == "-" ? STDERR_FILENO : STDOUT_FILENO) != 0;
    render_text(report, text, topt);
  }
  return rc;
}

}  // namespace nodeprobe
