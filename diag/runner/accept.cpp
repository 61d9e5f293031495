#include "accept.h"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "accept_progress.h"
#include "ec2.h"
#include "expectations.h"
#include "inventory.h"
#include "nodeprobe/atomic_file.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/fs_root.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/mpirun.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/subprocess.h"
#include "verdict_table.h"

extern char** environ;

namespace nodeprobe::diag {
namespace {

// The diag row of the verdict table: what was found and what was read.
void summarise_diagnosis(const std::vector<Finding>& findings, ProbeResult& d) {
  std::size_t n[3] = {0, 0, 0};  // error, warn, info
  for (const auto& f : findings)
    ++n[f.severity == Severity::kError ? 0 : f.severity == Severity::kWarn ? 1 : 2];
  std::size_t analysed = 0, total = 0;
  double bytes = 0;
  if (d.data.is_object() && d.data.contains("sources") && d.data["sources"].is_array()) {
    for (const auto& s : d.data["sources"]) {
      ++total;
      if (s.value("status", "") != "analysed") continue;
      ++analysed;
      if (s.contains("bytes") && s["bytes"].is_number()) bytes += s["bytes"].get<double>();
    }
  }
  static const std::vector<MetricDescriptor> kDiagMetrics = {
      counted("findings", "count", Better::kLower, "findings the diagnosis raised, by severity").axes({"severity"}),
      counted("logs_scanned", "MB", Better::kHigher, "log bytes the diagnosis read (more is more coverage)")
          .key(1, "logs scanned"),
  };
  declare_metrics(d, kDiagMetrics);
  const char* sev[3] = {"error", "warn", "info"};
  for (int i = 0; i < 3; ++i) add_metric(d, "findings", static_cast<double>(n[i]), {{"severity", sev[i]}});
  add_metric(d, "logs_scanned", bytes / 1e6);
  if (d.status != Status::kPass) {
    std::string r = std::to_string(findings.size()) + " findings (";
    r += std::to_string(n[0]) + " error, " + std::to_string(n[1]) + " warn, " + std::to_string(n[2]) + " info)";
    r += "; " + std::to_string(analysed) + " of " + std::to_string(total) + " sources analysed";
    d.reason = r;
  }
}


volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

/// Seconds kept back from each deadline: the runner's kill grace and the
/// child's start-up, so a hung probe still ends inside the budget.
constexpr double kReserve_s = 4;

std::string make_temp_dir(const std::string& parent, const std::string& prefix) {
  std::string tmpl = parent + "/" + prefix + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return {};
  return tmpl;
}

std::string tmp_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

ProbeResult skipped(const std::string& name, std::string reason) {
  ProbeResult r;
  r.name = name;
  r.status = Status::kSkip;
  r.reason = std::move(reason);
  return r;
}

/// Findings from checks and probe statuses, then those the probes and the
/// diagnosis raised themselves; one already there (same id and probe) gets
/// their evidence and remedy steps instead of a second entry.
void finalize(Report& r, std::vector<Finding> extra_findings) {
  r.findings = findings_from_checks(r.probes);
  auto st = findings_from_probe_status(r.probes);
  r.findings.insert(r.findings.end(), st.begin(), st.end());
  for (auto& f : extra_findings) {
    auto same = std::find_if(r.findings.begin(), r.findings.end(), [&](const Finding& g) {
      return g.id == f.id && (g.probe == f.probe || f.probe.empty());
    });
    if (same == r.findings.end()) {
      r.findings.push_back(std::move(f));
      continue;
    }
    // The same problem seen twice (a check and a log line): one finding, all
    // the evidence; the playbook's title says more than the generic one.
    if (!f.title.empty()) same->title = f.title;
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
  r.run.finished = utc_now_iso8601();
}

std::string secs_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

void print_plan(const std::vector<PlannedProbe>& plan, const AcceptOptions& opt, double budget, bool diagnose,
                const InstanceIdentity& id) {
  std::cout << "accept plan, profile " << opt.profile << " (budget " << secs_text(budget) << " s):\n";
  for (const auto& p : plan) {
    std::cout << "  " << p.entry->name << "  deadline " << secs_text(p.deadline_s) << " s";
    if (!p.skip_reason.empty()) std::cout << "  [skip: " << p.skip_reason << "]";
    std::cout << "\n";
    for (const auto& s : p.steps) {
      std::cout << "    ";
      for (const auto& a : s.launcher) std::cout << a << " ";
      std::cout << s.executable;
      for (const auto& a : s.args) std::cout << " " << a;
      std::cout << "\n";
    }
  }
  std::cout << "  diag  in-process" << (diagnose ? "" : "  [skip: not part of this build]") << "\n";
  std::cout << "  expect  instance type " << (id.type.empty() ? "unknown (" + id.note + ")" : id.type + " (from " + id.source + ")")
            << "\n";
}

/// Runs one planned entry's steps; a step that does not succeed stops the rest.
std::vector<ProbeResult> run_entry(const PlannedProbe& p, double deadline_s, const std::string& bin,
                                   const std::string& work, const std::string& dataset, Clock& clock,
                                   HostInfo& host, std::vector<Finding>& findings) {
  std::vector<ProbeResult> out;
  const double t0 = clock.now_s();
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    ProbeSpec spec = p.steps[i];
    for (auto& a : spec.args)
      if (a == "{dataset}") a = dataset;
    const double left = deadline_s - (clock.now_s() - t0);
    if (g_interrupted || left < 1) {
      out.push_back(skipped(spec.name, g_interrupted ? "not run: interrupted" : "not run: the deadline was used up by earlier steps"));
      continue;
    }
    spec.deadline_s = left;
    ProbeOutcome o = run_probe_executable(spec, bin, work, &g_interrupted);
    if (o.have_host) merge_host(host, o.host);
    if (o.probes.size() == 1 && o.probes.front().name != spec.name) {
      // One probe per step: name it after the plan entry so runs stay comparable.
      if (o.probes.front().config.is_object()) o.probes.front().config["probe"] = o.probes.front().name;
      for (auto& f : o.findings)
        if (f.probe == o.probes.front().name) f.probe = spec.name;
      o.probes.front().name = spec.name;
    }
    for (auto& f : o.findings) findings.push_back(std::move(f));
    bool ok = true;
    for (const auto& r : o.probes)
      ok = ok && (r.status == Status::kPass || r.status == Status::kWarn);
    for (auto& r : o.probes) out.push_back(std::move(r));
    if (!ok) {
      for (std::size_t k = i + 1; k < p.steps.size(); ++k)
        out.push_back(skipped(p.steps[k].name, "not run: " + spec.name + " did not succeed"));
      break;
    }
  }
  return out;
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
  sub->add_option("--profile", opt.profile,
                  "quick (15 s without GPU, 60 s with), full (10 min) or health (Slurm health check: hard budget, 10 s)")
      ->check(CLI::IsMember({"quick", "full", "health"}));
  sub->add_option("--expect", opt.expect, "Judge against this instance type (e.g. p4d.24xlarge)");
  sub->add_option("--label", opt.label, "Free-text label stored in the report");
  sub->add_option("--json", opt.json_out, "Write the JSON report to PATH ('-' = stdout only)")
      ->type_name("PATH|-");
  sub->add_option("--data-dir", opt.data_dir, "Directory for the IO probe's temporary dataset")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--only", opt.only, "Run only these probes (comma-separated names or prefixes)")
      ->delimiter(',');
  sub->add_option("--expectations", opt.expectations, "Instance-type expectations file (replaces the built-in one)")
      ->check(CLI::ExistingFile);
  sub->add_option("--sysroot", opt.sysroot, "Read /proc and /sys under DIR (fixtures); passed to probes")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--budget", opt.budget_s, "Total time budget in seconds (default: the profile's)")
      ->check(CLI::Range(1.0, 86400.0));
  sub->add_flag("--no-imds", opt.no_imds, "Never ask the EC2 instance metadata service");
  sub->add_option("--drain-reason-file", opt.drain_reason_file,
                  "health: write the drain reason line here (empty when the node is fine)");
  sub->add_option("--prometheus", opt.exports.prometheus, "Also write a node_exporter textfile (*.prom)");
  sub->add_option("--cloudwatch-emf", opt.exports.emf, "Also write CloudWatch EMF JSON lines");
  sub->add_option("--junit", opt.exports.junit, "Also write JUnit XML");
  sub->add_flag("--list", opt.list, "Print the plan for this machine and exit");
  sub->add_flag("-v,--verbose", opt.verbose, "Also print every probe's checks and metrics");
  sub->add_flag("-q,--quiet", opt.quiet, "No text output");
  return sub;
}

int run_accept(const AcceptOptions& opt, int argc, char** argv, const AcceptHooks& hooks) {
  for (const auto* path : {&opt.json_out, &opt.exports.prometheus, &opt.exports.emf, &opt.exports.junit})
    if (auto why = check_output_path(*path); !why.empty()) {
      std::cerr << "nodeprobe accept: " << why << "\n";
      return exit_code::kError;
    }
  Expectations expectations;
  try {
    expectations = load_expectations(opt.expectations);
  } catch (const ExpectationsError& e) {
    std::cerr << "nodeprobe accept: " << e.what() << "\n";
    return exit_code::kError;
  }
  if (!opt.expect.empty() && !expectations.types.count(opt.expect)) {
    std::string known;
    for (const auto& [t, x] : expectations.types) known += (known.empty() ? "" : ", ") + t;
    std::cerr << "nodeprobe accept: unknown instance type '" << opt.expect << "' (known: " << known << ")\n";
    return exit_code::kUsage;
  }

  const FsRoot fs(opt.sysroot);
  Clock& clock = steady_clock();
  const double t_start = clock.now_s();
  Report report = new_report("nodeprobe", argc, argv, opt.label);
  report.host = collect_host_facts(fs, environ);
  const bool imds_allowed = fs.is_live() && !opt.no_imds && !imds_disabled_by_env();
  const InstanceIdentity id = detect_instance(fs, opt.expect, imds_allowed, [](std::string* err) {
    return imds_instance_type(ImdsEndpoint{}, 1.0, err);
  });
  if (!id.type.empty()) report.host.instance_type = id.type;

  PlanContext ctx;
  ctx.bin_dir = probe_dir();
  ctx.mpirun = find_mpirun();
  ctx.gpu_present = nvidia_gpu_present(fs);
  ctx.gpu_count = gpu_inventory(fs, Json::array()).count;
  ctx.cpus = std::max(1, report.host.cpus);
  ctx.root = ::geteuid() == 0;
  ctx.sysroot = opt.sysroot;
  const auto plan = accept_plan(opt, ctx);
  const double budget = opt.budget_s > 0 ? opt.budget_s : accept_budget_s(opt.profile, ctx.gpu_present);
  if (opt.list) {
    print_plan(plan, opt, budget, static_cast<bool>(hooks.diagnose), id);
    return exit_code::kOk;
  }
  if (plan.empty()) {
    std::cerr << "nodeprobe accept: --only names no probe of the plan (see --list)\n";
    return exit_code::kUsage;
  }

  std::ostream& text = opt.json_out == "-" ? std::cerr : std::cout;
  const int text_fd = opt.json_out == "-" ? STDERR_FILENO : STDOUT_FILENO;
  const bool tty = ::isatty(text_fd) != 0;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  const std::string work = make_temp_dir(tmp_parent(), "nodeprobe-accept");
  if (work.empty()) {
    std::cerr << "nodeprobe accept: cannot create a temporary directory in " << tmp_parent() << ": "
              << std::strerror(errno) << "\n";
    return exit_code::kError;
  }
  std::string data_dir = opt.data_dir;
  if (data_dir.empty())
    data_dir = fs.is_live() ? choose_data_dir(parse_mounts(fs.read("/proc/self/mounts").value_or("")),
                                              live_free_bytes, tmp_parent())
                            : tmp_parent();
  std::string dataset;  // created on first use, removed at the end (accept made it)
  std::vector<Finding> raised;  // findings the probes and the diagnosis raised themselves

  double estimate = 0;
  for (const auto& p : plan) estimate += p.estimate_s;
  Progress progress(text, tty && !opt.quiet, clock, std::min(estimate, budget));
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedProbe& p = plan[i];
    const std::string& name = p.entry->name;
    if (g_interrupted) {
      report.probes.push_back(skipped(name, "not run: interrupted"));
      continue;
    }
    if (!p.skip_reason.empty()) {
      report.probes.push_back(skipped(name, p.skip_reason));
      continue;
    }
    const double left = budget - (clock.now_s() - t_start);
    const double deadline = std::min(p.deadline_s, left - kReserve_s);
    if (deadline < 1) {
      report.probes.push_back(skipped(name, "not run: the " + opt.profile + " profile's budget of " +
                                                secs_text(budget) + " s was used up"));
      continue;
    }
    if (p.needs_dataset && dataset.empty()) {
      dataset = make_temp_dir(data_dir, "nodeprobe-accept-io");
      if (dataset.empty()) {
        ProbeResult r = skipped(name, "");
        r.status = Status::kError;
        r.reason = "cannot create a dataset directory in " + data_dir + ": " + std::strerror(errno);
        report.probes.push_back(std::move(r));
        continue;
      }
    }
    progress.begin(i, plan.size(), name, p.estimate_s);
    if (hooks.on_step) hooks.on_step(name);
    const double t0 = clock.now_s();
    auto results = run_entry(p, deadline, ctx.bin_dir, work, dataset, clock, report.host, raised);
    Status shown = Status::kSkip;
    std::vector<Status> all;
    for (const auto& r : results) all.push_back(r.status);
    if (!all.empty()) shown = aggregate(all);
    progress.end(shown, clock.now_s() - t0);
    for (auto& r : results) report.probes.push_back(std::move(r));
  }
  std::error_code ec;
  if (!dataset.empty()) std::filesystem::remove_all(dataset, ec);
  std::filesystem::remove_all(work, ec);

  if (hooks.diagnose && !g_interrupted) {
    ProbeResult d;
    d.name = "diag";
    const double t0 = clock.now_s();
    try {
      const Diagnosis diagnosis = hooks.diagnose(report, budget - (clock.now_s() - t_start));
      const std::vector<Finding>& diag_findings = diagnosis.findings;
      d.data = diagnosis.data;
      std::vector<Status> st;
      for (const auto& f : diag_findings)
        st.push_back(f.severity == Severity::kError ? Status::kFail
                     : f.severity == Severity::kWarn ? Status::kWarn : Status::kPass);
      d.status = st.empty() ? Status::kPass : aggregate(st);
      summarise_diagnosis(diag_findings, d);
      raised.insert(raised.end(), diag_findings.begin(), diag_findings.end());
    } catch (const std::exception& e) {
      d.status = Status::kError;
      d.reason = std::string("diagnosis failed: ") + e.what();
    }
    d.duration_s = clock.now_s() - t0;
    report.probes.push_back(std::move(d));
  } else {
    report.probes.push_back(skipped("diag", hooks.diagnose ? "not run: interrupted"
                                                          : "not available: diagnosis (nodeprobe diag) is not part of this build"));
  }

  ProbeResult expect = judge_expectations(report, expectations, id.type, opt.profile, fs, id.note);
  expect.config["instance_type_source"] = id.source;
  // Where the run put its dataset and how long it was allowed are facts of the
  // run, not settings of the node: data, so compare does not show them.
  expect.data["budget_s"] = budget;
  expect.data["data_dir"] = data_dir;
  report.probes.push_back(std::move(expect));

  finalize(report, std::move(raised));
  if (hooks.on_report) hooks.on_report(report);
  int rc = g_interrupted ? exit_code::kInterrupted : exit_code_for(report.verdict);
  try {
    if (!opt.json_out.empty()) write_file_atomic(opt.json_out, dump_report(report));
    for (const auto& [path, doc] : export_documents(report, opt.exports)) write_file_atomic(path, doc);
  } catch (const std::exception& e) {
    std::cerr << "nodeprobe accept: " << e.what() << "\n";
    rc = exit_code::kError;
  }
  if (!opt.quiet) {
    if (opt.verbose) {
      TextOptions topt;
      topt.color = tty;
      topt.verbose = true;
      render_text(report, text, topt);
      text << "\n";
    }
    render_verdict_table(report, text, tty, rc);
    if (opt.json_out.empty()) text << "(add --json FILE to keep the report)\n";
  }
  return rc;
}

}  // namespace nodeprobe::diag
