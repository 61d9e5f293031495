// nodeprobe: the runner. One subcommand per file: an options struct, a setup
// function and a run function (after CLI11's subcom_in_files example).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "accept.h"
#include "compare_cmd.h"
#include "collect_cmd.h"
#include "diag_cmd.h"
#include "fleet_cmd.h"
#include "health.h"
#include "diagnose.h"
#include "nodeprobe/fs_root.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/share_dir.h"
#include "nodeprobe/status.h"
#include "report_cmd.h"
#include "text_util.h"

int main(int argc, char** argv) {
  using namespace nodeprobe;
  CLI::App app{"nodeprobe: benchmark and diagnostics for GPU training nodes", "nodeprobe"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersion) + " (" + kGitDescribe + ")");

  diag::AcceptOptions accept;
  CLI::App* accept_cmd = diag::setup_accept(app, accept);
  diag::CompareCmdOptions compare;
  CLI::App* compare_cmd = diag::setup_compare(app, compare);
  diag::ReportCmdOptions report;
  CLI::App* report_cmd = diag::setup_report(app, report);
  diag::DiagOptions diag_opt;
  CLI::App* diag_cmd = diag::setup_diag(app, diag_opt);
  diag::CollectCmdOptions collect_opt;
  CLI::App* collect_cmd = diag::setup_collect(app, collect_opt);
  diag::FleetOptions fleet_opt;
  CLI::App* fleet_cmd = diag::setup_fleet(app, fleet_opt);

  std::string share_dir;
  app.add_option("--share-dir", share_dir,
                 std::string("Data files (playbook, instance tables, schema) from DIR; default BIN/../share/nodeprobe (env ") +
                     kShareDirEnv + ")")
      ->type_name("DIR");

  // Completion offers the plan's probe names after `accept --only`.
  CompletionValues completion;
  for (const auto& e : diag::accept_entries()) completion[accept_cmd->get_option("--only")].push_back(e.name);
  if (auto rc = parse_command_line(app, argc, argv, completion)) return *rc;
  // Through the environment, so every reader (and every probe spawned) sees one answer.
  if (!share_dir.empty()) ::setenv(kShareDirEnv, share_dir.c_str(), 1);
  try {
    if (accept_cmd->parsed()) {
      // accept ends with the same diagnosis `nodeprobe diag` gives: the live
      // system's logs and facts plus the probes' results, playbook-backed.
      // With --sysroot the diagnosis reads that system's logs and facts too,
      // never this machine's.
      diag::AcceptHooks hooks;
      const FsRoot root(accept.common.sysroot);
      hooks.diagnose = [&accept, &root](const Report& so_far, double budget_left_s) {
        Report copy = so_far;
        diag::DiagInputs in;
        in.live = true;
        in.fs = &root;
        in.expect = accept.expect;
        if (!accept.since.empty()) in.judge_since_s = diag::parse_duration(accept.since);  // checked by the option
        in.envp = environ;
        // Six or so commands at most: a hung tool cannot eat the whole budget.
        in.command_timeout_s = std::clamp(budget_left_s / 6, 1.0, 10.0);
        diag::diagnose(copy, in);  // the limits probe already ran: no limits_exe
        diag::Diagnosis d(std::move(copy.findings));
        for (const auto& p : copy.probes)
          if (p.name == "diag") d.data = p.data;
        return d;
      };
      if (accept.profile == "health") return diag::run_health(accept, argc, argv, hooks);
      return diag::run_accept(accept, argc, argv, hooks);
    }
    if (compare_cmd->parsed()) return diag::run_compare(compare);
    if (report_cmd->parsed()) return diag::run_report(report);
    if (diag_cmd->parsed()) return diag::run_diag(diag_opt, argc, argv);
    if (collect_cmd->parsed()) return diag::run_collect(collect_opt);
    if (fleet_cmd->parsed()) return diag::run_fleet_cmd(fleet_opt, argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "nodeprobe: " << e.what() << "\n";
    return exit_code::kError;
  }
  return exit_code::kUsage;
}
