#pragma once
/// `nodeprobe accept`: run every probe this build has, each with a deadline
/// inside the profile's budget, judge the results against the instance
/// type's expectations, and write one report (plus exports).

#include <functional>
#include <string>
#include <vector>

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

#include "nodeprobe/probe_main.h"
#include "nodeprobe/input.h"
#include "runner.h"

namespace nodeprobe::diag {

struct AcceptOptions {
  /// The shared flags (--json, --timeout, --label, --quiet, --verbose, the
  /// exporters; --list prints the plan; --sysroot is also passed to probes).
  CommonOptions common;
  std::string profile = "quick";  ///< quick | full | health (Slurm: a hard budget, only quick checks)
  std::string expect;             ///< instance type to judge against (e.g. p4d.24xlarge)
  std::string data_dir;           ///< where the IO dataset goes (default: largest local fs, else /tmp)
  std::vector<std::string> only;  ///< run only these entries (name or prefix: "allreduce")
  std::string expectations;       ///< data file replacing the built-in one
  double budget_s = 0;            ///< --budget: total seconds (0: the profile's budget)
  bool no_imds = false;           ///< never ask the instance metadata service
  std::string since;              ///< events older than this (30m, 2h, 1d) are info; "" = since boot
  InputOverrides input;           ///< --max-input-size, --read-timeout (--expectations)
  std::string drain_reason_file;  ///< health: one line for `scontrol ... reason=` when the node should be drained
};

/// Work the lead wires in from other components (kept out of the options).
/// What a diagnosis hook gives back: findings, and what it read (the diag
/// entry's data: sources analysed or skipped with the reason).
struct Diagnosis {
  std::vector<Finding> findings;
  Json data = Json::object();
  Diagnosis(std::vector<Finding> f = {}) : findings(std::move(f)) {}  // NOLINT: implicit on purpose
};

struct AcceptHooks {
  /// Diagnosis over the run so far (nodeprobe diag's diagnose()); empty when
  /// this build has none. Its findings are added to the report. `budget_left_s`
  /// bounds the commands it may spawn.
  std::function<Diagnosis(const Report&, double budget_left_s)> diagnose;
  /// Called as each plan entry starts (health mode names what hung).
  std::function<void(const std::string& step)> on_step;
  /// Called with the finished report before it is written.
  std::function<void(const Report&)> on_report;
};

/// Argument tail of one invocation of a probe executable, per profile.
/// Placeholders: {dataset} (a fresh directory under the data dir), {ranks}.
struct PlanStep {
  std::string suffix;  ///< "" for a single step; else the report name gets "." + suffix
  std::vector<std::string> quick, full;
};

/// One line of accept's plan: a probe executable and how to run it.
struct PlanEntry {
  std::string name;        ///< name in the report and for --only ("allreduce.mpi")
  std::string executable;  ///< file beside `nodeprobe` ("nodeprobe-allreduce")
  std::vector<PlanStep> steps;
  double quick_deadline_s = 30, full_deadline_s = 120;  ///< all steps together
  double quick_estimate_s = 1, full_estimate_s = 10;    ///< for the progress line
  bool mpirun = false;     ///< needs mpirun (Open MPI, find_mpirun()); the probe starts {ranks} ranks itself
  bool needs_gpu = false;  ///< skipped with the reason when no NVIDIA GPU is visible; ranks = GPUs
};

/// The built-in plan, in run order (docs/accept.md explains each line).
const std::vector<PlanEntry>& accept_entries();

/// What this machine offers the plan.
struct PlanContext {
  std::string bin_dir;           ///< where probe executables live (ends with '/')
  std::string mpirun;            ///< path of mpirun (find_mpirun()), "" when absent
  bool gpu_present = false;
  int gpu_count = 0;
  int cpus = 1;
  bool root = false;             ///< Open MPI refuses root without its opt-in variables
  std::string sysroot = "/";
};

/// One entry resolved for this run.
struct PlannedProbe {
  const PlanEntry* entry = nullptr;
  std::vector<ProbeSpec> steps;  ///< deadline_s left 0: the run assigns it from the budget
  double deadline_s = 0, estimate_s = 0;
  bool needs_dataset = false;
  std::string skip_reason;       ///< not run here, and why
};

/// The plan for `opt` on a machine described by `ctx` (--only applied).
std::vector<PlannedProbe> accept_plan(const AcceptOptions& opt, const PlanContext& ctx);

/// Total budget of a profile: quick 60 s with a GPU, 15 s without; full 600 s; health 10 s.
double accept_budget_s(const std::string& profile, bool gpu_present);

/// Registers the subcommand.
CLI::App* setup_accept(CLI::App& app, AcceptOptions& opt);

/// Runs accept; returns the exit code (130 / 124 when a signal or --timeout
/// stopped it: the report then holds what finished and the dataset is gone).
int run_accept(const AcceptOptions& opt, int argc, char** argv, const AcceptHooks& hooks = {});

/// Where probe executables are looked up: $NODEPROBE_PROBE_DIR, else the
/// directory of the running `nodeprobe`. Ends with '/'.
std::string probe_dir();

}  // namespace nodeprobe::diag
