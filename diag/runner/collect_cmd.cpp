#include "collect_cmd.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "accept.h"
#include "collector.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/safe_remove.h"
#include "nodeprobe/status.h"
#include "nodeprobe/stop.h"
#include "tar_gz.h"
#include "text_util.h"

namespace nodeprobe::diag {
namespace {

constexpr const char* kTool = "nodeprobe collect";
// A helper command in flight is killed within its 1 s grace; then the bundle is packed.
constexpr double kCollectGrace_s = 6;

}  // namespace

CLI::App* setup_collect(CLI::App& app, CollectCmdOptions& opt) {
  CLI::App* sub = app.add_subcommand("collect", "Write an offline support bundle (.tar.gz) for nodeprobe diag --bundle");
  sub->add_option("--out", opt.out, "Bundle to write (FILE.tar.gz)")->required()->type_name("FILE.tar.gz");
  sub->add_option("--report", opt.report, "A nodeprobe report to include (e.g. the last accept run)")
      ->type_name("RUN.json")
      ->check(CLI::ExistingFile);
  sub->add_option("--command-timeout", opt.command_timeout_s, "Deadline of each helper command, seconds")
      ->check(finite_range(1.0, 600.0));
  sub->add_option("--timeout", opt.timeout_s,
                  "Deadline for the whole collection in seconds (0 = none); what was collected is bundled, exit 124")
      ->check(finite_range(0, 1e7));
  add_input_flags(*sub, opt.input);
  sub->add_flag("--no-limits", opt.no_limits, "Do not run nodeprobe-limits");
  sub->add_flag("-q,--quiet", opt.quiet, "No summary");
  return sub;
}

int run_collect(const CollectCmdOptions& opt) {
  if (auto why = check_output_path(opt.out); !why.empty()) {
    std::cerr << kTool << ": " << why << "\n";
    return exit_code::kError;
  }
  install_stop_handlers({kTool, opt.timeout_s, kCollectGrace_s});
  std::unique_ptr<OwnedTempDir> tmp;
  try {
    tmp = std::make_unique<OwnedTempDir>(temp_parent(), "nodeprobe-collect");
  } catch (const std::exception& e) {
    std::cerr << kTool << ": " << e.what() << "\n";
    return exit_code::kError;
  }
  ProcessRunner runner;
  CollectOptions co;
  co.runner = &runner;
  co.command_timeout_s = opt.command_timeout_s;
  co.report_path = opt.report;
  co.input = opt.input;
  co.envp = environ;
  if (!opt.no_limits) {
    const std::string exe = probe_dir() + "nodeprobe-limits";
    if (::access(exe.c_str(), X_OK) == 0) co.limits_exe = exe;
  }
  int rc = exit_code::kOk;
  try {
    const Manifest m = collect_artifacts(co, tmp->path());
    std::string stamp = m.created;
    stamp.erase(std::remove(stamp.begin(), stamp.end(), ':'), stamp.end());
    const std::string top = safe_relative_path("nodeprobe-bundle-" + m.hostname + "-" + stamp).empty()
                                ? "nodeprobe-bundle"
                                : "nodeprobe-bundle-" + m.hostname + "-" + stamp;
    TarGzWriter tar(opt.out);
    tar.add_directory(top);
    tar.add_file(top + "/manifest.json", tmp->path() + "/manifest.json");
    int files = 0;
    std::vector<std::string> skipped;
    for (const auto& a : m.files) {
      if (a.status == "skipped" || a.status == "error") {
        skipped.push_back(a.path + ": " + a.reason);
        continue;
      }
      tar.add_file(top + "/" + a.path, tmp->path() + "/" + a.path);
      ++files;
    }
    // Once the bundle is being finished a stop no longer cuts it short.
    const StopCause stopped = begin_final_write();
    tar.finish();
    if (stopped != StopCause::kNone) {
      std::cerr << kTool << ": " << stop_reason() << ": the bundle holds what was collected before\n";
      rc = stop_exit_code();
    }
    if (!opt.quiet) {
      std::cout << "wrote " << opt.out << ": " << files << " file(s)";
      if (!skipped.empty()) std::cout << ", " << skipped.size() << " skipped";
      std::cout << " (collected " << m.created << (m.root ? ", as root" : ", not root: root-only sources skipped") << ")\n";
      for (const auto& s : skipped) std::cout << "  skipped " << clean_text(s, 200) << "\n";
      std::cout << "read it anywhere: nodeprobe diag --bundle " << opt.out << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << kTool << ": " << e.what() << "\n";
    rc = stop_requested() ? stop_exit_code() : exit_code::kError;
  }
  if (const std::string why = tmp->remove(); !why.empty()) std::cerr << kTool << ": " << why << "\n";
  return rc;
}

}  // namespace nodeprobe::diag
