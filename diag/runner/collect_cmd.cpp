#include "collect_cmd.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "accept.h"
#include "collector.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/status.h"
#include "tar_gz.h"
#include "text_util.h"

extern char** environ;

namespace nodeprobe::diag {

CLI::App* setup_collect(CLI::App& app, CollectCmdOptions& opt) {
  CLI::App* sub = app.add_subcommand("collect", "Write an offline support bundle (.tar.gz) for nodeprobe diag --bundle");
  sub->add_option("--out", opt.out, "Bundle to write (FILE.tar.gz)")->required()->type_name("FILE.tar.gz");
  sub->add_option("--report", opt.report, "A nodeprobe report to include (e.g. the last accept run)")
      ->type_name("RUN.json")
      ->check(CLI::ExistingFile);
  sub->add_option("--command-timeout", opt.command_timeout_s, "Deadline of each helper command, seconds")
      ->check(finite_range(1.0, 600.0));
  add_input_flags(*sub, opt.input);
  sub->add_flag("--no-limits", opt.no_limits, "Do not run nodeprobe-limits");
  sub->add_flag("-q,--quiet", opt.quiet, "No summary");
  return sub;
}

int run_collect(const CollectCmdOptions& opt) {
  if (auto why = check_output_path(opt.out); !why.empty()) {
    std::cerr << "nodeprobe collect: " << why << "\n";
    return exit_code::kError;
  }
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/nodeprobe-collect-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::cerr << "nodeprobe collect: cannot create a temporary directory: " << std::strerror(errno) << "\n";
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
    const Manifest m = collect_artifacts(co, tmpl);
    std::string stamp = m.created;
    stamp.erase(std::remove(stamp.begin(), stamp.end(), ':'), stamp.end());
    const std::string top = safe_relative_path("nodeprobe-bundle-" + m.hostname + "-" + stamp).empty()
                                ? "nodeprobe-bundle"
                                : "nodeprobe-bundle-" + m.hostname + "-" + stamp;
    TarGzWriter tar(opt.out);
    tar.add_directory(top);
    tar.add_file(top + "/manifest.json", tmpl + "/manifest.json");
    int files = 0;
    std::vector<std::string> skipped;
    for (const auto& a : m.files) {
      if (a.status == "skipped" || a.status == "error") {
        skipped.push_back(a.path + ": " + a.reason);
        continue;
      }
      tar.add_file(top + "/" + a.path, tmpl + "/" + a.path);
      ++files;
    }
    tar.finish();
    if (!opt.quiet) {
      std::cout << "wrote " << opt.out << ": " << files << " file(s)";
      if (!skipped.empty()) std::cout << ", " << skipped.size() << " skipped";
      std::cout << " (collected " << m.created << (m.root ? ", as root" : ", not root: root-only sources skipped") << ")\n";
      for (const auto& s : skipped) std::cout << "  skipped " << clean_text(s, 200) << "\n";
      std::cout << "read it anywhere: nodeprobe diag --bundle " << opt.out << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "nodeprobe collect: " << e.what() << "\n";
    rc = exit_code::kError;
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return rc;
}

}  // namespace nodeprobe::diag
