#include "accept.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "accept_progress.h"
#include "ec2.h"
#include "expectations.h"
#include "inventory.h"
#include "nodeprobe/emit.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/fs_root.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/mpirun.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/render_text.h"
#include "nodeprobe/safe_remove.h"
#include "nodeprobe/stop.h"
#include "nodeprobe/subprocess.h"
#include "text_util.h"
#include "verdict_table.h"

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

/// Seconds kept back from each deadline: the runner's kill grace and the
/// child's start-up, so a hung probe still ends inside the budget.
constexpr double kReserve_s = 4;
/// After a stop, the probe in flight gets the runner's kill grace (up to 12 s
/// for the allreduce launcher) to write what it measured; accept then writes
/// its own report.
constexpr double kAcceptGrace_s = 15;
constexpr const char* kTool = "nodeprobe accept";

ProbeResult skipped(const std::string& name, std::string reason) {
  ProbeResult r;
  r.name = name;
  r.status = Status::kSkip;
  r.reason = std::move(reason);
  return r;
}

std::string secs_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

void print_plan(const std::vector<PlannedProbe>& plan, const AcceptOptions& opt, double budget, bool diagnose,
                const InstanceIdentity& id, const std::string& expectations_table_lines) {
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
  std::cout << expectations_table_lines;
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
    if (stop_requested()) {
      out.push_back(stopped_probe(spec.name, false));
      continue;
    }
    if (left < 1) {
      out.push_back(skipped(spec.name, "not run: the deadline was used up by earlier steps"));
      continue;
    }
    spec.deadline_s = left;
    ProbeOutcome o = run_probe_executable(spec, bin, work);
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
  add_common_flags(*sub, opt.common);
  sub->get_option("--list")->description("Print the plan for this machine and exit");
  sub->get_option("--sysroot")->description("Read /proc and /sys under DIR (fixtures); passed to probes");
  sub->add_option("--profile", opt.profile,
                  "quick (20 s without GPU, 60 s with), full (10 min) or health (Slurm health check: hard budget, 10 s)")
      ->check(CLI::IsMember({"quick", "full", "health"}));
  sub->add_option("--expect", opt.expect, "Judge against this instance type (e.g. p4d.24xlarge)");
  sub->add_option("--data-dir", opt.data_dir,
                  "Directory for the IO probe's temporary dataset (default: the writable local filesystem with "
                  "the most free space, never /, /etc, /proc, /sys, /dev, /run or tmpfs; the report says which)")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--only", opt.only, "Run only these probes (comma-separated names or prefixes)")
      ->delimiter(',');
  sub->add_option("--expectations", opt.expectations, "Instance-type expectations file (replaces the built-in one)")
      ->check(CLI::ExistingFile);
  sub->add_option("--budget", opt.budget_s, "Total time budget in seconds (default: the profile's)")
      ->check(finite_range(1.0, 86400.0));
  sub->add_flag("--no-imds", opt.no_imds, "Never ask the EC2 instance metadata service");
  sub->add_option("--since", opt.since, "Log events older than this (30m, 2h, 1d) are info with their age (default: since boot)")
      ->type_name("DURATION")
      ->check([](const std::string& v) { return parse_duration(v) ? std::string() : "not a duration (use 30m, 2h, 1d)"; });
  add_input_flags(*sub, opt.input);
  sub->add_option("--drain-reason-file", opt.drain_reason_file,
                  "health: write the drain reason line here (empty when the node is fine)");
  return sub;
}

int run_accept(const AcceptOptions& opt, int argc, char** argv, const AcceptHooks& hooks) {
  const CommonOptions& common = opt.common;
  if (auto why = check_output_paths(common); !why.empty()) {
    std::cerr << kTool << ": " << why << "\n";
    return exit_code::kError;
  }
  // SIGINT, SIGTERM and SIGHUP (an ssh session dropping) all end the run the
  // same way: the probe in flight reports what it measured, the dataset goes,
  // the report says what finished (exit 130; 124 at --timeout).
  install_stop_handlers({kTool, common.timeout_s, kAcceptGrace_s});
  Expectations expectations;
  try {
    expectations = load_expectations(opt.expectations, opt.input);
  } catch (const ExpectationsError& e) {
    std::cerr << kTool << ": " << e.what() << "\n";
    return exit_code::kError;
  }
  if (const std::string why = expectations.table.unknown_reason(opt.expect); !why.empty()) {
    std::cerr << kTool << ": " << why << "\n";
    return exit_code::kUsage;
  }

  const FsRoot fs(common.sysroot);
  Clock& clock = steady_clock();
  const double t_start = clock.now_s();
  Report report = new_report("nodeprobe", argc, argv, common.label);
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
  ctx.sysroot = common.sysroot;
  const auto plan = accept_plan(opt, ctx);
  double budget = opt.budget_s > 0 ? opt.budget_s : accept_budget_s(opt.profile, ctx.gpu_present);
  // The probes' deadlines fit inside --timeout, so it only ends a run that overruns.
  if (common.timeout_s > 0) budget = std::min(budget, common.timeout_s);
  if (common.list) {
    print_plan(plan, opt, budget, static_cast<bool>(hooks.diagnose), id, expectations.table.list_lines());
    return exit_code::kOk;
  }
  if (plan.empty()) {
    std::cerr << kTool << ": --only names no probe of the plan (see --list)\n";
    return exit_code::kUsage;
  }

  std::ostream& text = text_stream(common);
  const bool tty = text_is_tty(common);
  std::unique_ptr<OwnedTempDir> work;
  try {
    work = std::make_unique<OwnedTempDir>(temp_parent(), "nodeprobe-accept");
  } catch (const std::exception& e) {
    std::cerr << kTool << ": " << e.what() << "\n";
    return exit_code::kError;
  }
  DataDirChoice data{opt.data_dir, "given with --data-dir"};
  if (data.dir.empty())
    data = fs.is_live() ? choose_data_dir(parse_mounts(fs.read("/proc/self/mounts").value_or("")), live_free_bytes,
                                          temp_parent())
                        : DataDirChoice{temp_parent(), "--sysroot given: the live mounts are not this system's"};
  const std::string& data_dir = data.dir;
  if (!opt.common.quiet && std::any_of(plan.begin(), plan.end(), [](const PlannedProbe& p) {
        return p.needs_dataset && p.skip_reason.empty();
      }))
    text << "IO dataset in " << data_dir << ": " << data.why << "\n";
  std::unique_ptr<OwnedTempDir> dataset;  // created on first use, removed at the end (accept made it)
  std::vector<Finding> raised;  // findings the probes and the diagnosis raised themselves

  double estimate = 0;
  for (const auto& p : plan) estimate += p.estimate_s;
  Progress progress(text, tty && !common.quiet, clock, std::min(estimate, budget));
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedProbe& p = plan[i];
    const std::string& name = p.entry->name;
    std::vector<std::string> later;
    for (std::size_t k = i + 1; k < plan.size(); ++k) later.push_back(plan[k].entry->name);
    later.push_back("diag");
    set_emergency_report(report, {name}, later, common, kTool, raised);
    if (stop_requested()) {
      report.probes.push_back(stopped_probe(name, false));
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
    if (p.needs_dataset && !dataset) {
      try {
        dataset = std::make_unique<OwnedTempDir>(data_dir, "nodeprobe-accept-io");
      } catch (const std::exception& e) {
        ProbeResult r = skipped(name, "");
        r.status = Status::kError;
        r.reason = std::string("cannot create a dataset directory: ") + e.what();
        report.probes.push_back(std::move(r));
        continue;
      }
    }
    progress.begin(i, plan.size(), name, p.estimate_s);
    if (hooks.on_step) hooks.on_step(name);
    const double t0 = clock.now_s();
    auto results = run_entry(p, deadline, ctx.bin_dir, work->path(), dataset ? dataset->path() : "", clock,
                             report.host, raised);
    Status shown = Status::kSkip;
    std::vector<Status> all;
    for (const auto& r : results) all.push_back(r.status);
    if (!all.empty()) shown = aggregate(all);
    progress.end(shown, clock.now_s() - t0);
    for (auto& r : results) report.probes.push_back(std::move(r));
  }
  for (auto* dir : {&dataset, &work})
    if (*dir)
      if (const std::string why = (*dir)->remove(); !why.empty()) std::cerr << kTool << ": " << why << "\n";

  set_emergency_report(report, {"diag"}, {}, common, kTool, raised);
  if (hooks.diagnose && !stop_requested()) {
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
    mark_stopped(d);
    d.duration_s = clock.now_s() - t0;
    report.probes.push_back(std::move(d));
  } else {
    report.probes.push_back(hooks.diagnose ? stopped_probe("diag", false)
                                           : skipped("diag", "not available: diagnosis (nodeprobe diag) is not part of this build"));
  }

  ProbeResult expect = judge_expectations(report, expectations, id.type, opt.profile, fs, id.note);
  expect.config["instance_type_source"] = id.source;
  // Where the run put its dataset and how long it was allowed are facts of the
  // run, not settings of the node: data, so compare does not show them.
  expect.data["budget_s"] = budget;
  expect.data["data_dir"] = data_dir;
  expect.data["data_dir_reason"] = data.why;
  report.probes.push_back(std::move(expect));

  const StopCause stopped = begin_final_write();
  finalize_report(report, std::move(raised));
  if (hooks.on_report) hooks.on_report(report);
  const int rc = stopped != StopCause::kNone ? stop_exit_code() : exit_code_for(report.verdict);
  return emit_report(report, common, rc, kTool, [&](const Report& r, std::ostream& out, bool color, int code) {
    if (common.verbose) {
      TextOptions topt;
      topt.color = color;
      topt.verbose = true;
      render_text(r, out, topt);
      out << "\n";
    }
    render_verdict_table(r, out, color, code);
    if (common.json_out.empty()) out << "(add --json FILE to keep the report)\n";
  });
}

}  // namespace nodeprobe::diag
