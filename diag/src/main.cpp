// nodeprobe: the runner. One subcommand per file: an options struct, a setup
// function and a run function (after CLI11's subcom_in_files example).
#include <iostream>

#include "accept.h"
#include "compare_cmd.h"
#include "collect_cmd.h"
#include "diag_cmd.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/status.h"
#include "report_cmd.h"

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

  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  try {
    if (accept_cmd->parsed()) return diag::run_accept(accept, argc, argv);
    if (compare_cmd->parsed()) return diag::run_compare(compare);
    if (report_cmd->parsed()) return diag::run_report(report);
    if (diag_cmd->parsed()) return diag::run_diag(diag_opt, argc, argv);
    if (collect_cmd->parsed()) return diag::run_collect(collect_opt);
  } catch (const std::exception& e) {
    std::cerr << "nodeprobe: " << e.what() << "\n";
    return exit_code::kError;
  }
  return exit_code::kUsage;
}
