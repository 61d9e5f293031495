#pragma once
/// The shared driver of every probe executable: common flags, CLI error
/// handling, running probes under the stop handlers (stop.h) and handing the
/// report to the one emit path (emit.h), also on SIGINT/SIGTERM/SIGHUP or
/// when --timeout passes.

#include <memory>
#include <optional>
#include <string>
#include <vector>

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/cli_docs.h"
#include "nodeprobe/exporters.h"

#include "nodeprobe/probe.h"
#include "nodeprobe/version.h"

namespace nodeprobe {

/// The flags every probe executable shares.
struct CommonOptions {
  std::string json_out;     ///< --json PATH|- ("-": JSON only on stdout, people's text on stderr)
  bool list = false;        ///< --list: print the probes and exit
  double timeout_s = 0;     ///< --timeout SECONDS for the whole run (0: none)
  bool verbose = false;     ///< --verbose
  std::string label;        ///< --label L (free text kept in run.label)
  std::string sysroot = "/";  ///< --sysroot DIR: read /proc, /sys, /etc under DIR (tests, bundles)
  bool quiet = false;       ///< --quiet: no text summary
  ExportPaths exports;      ///< --prometheus / --cloudwatch-emf / --junit FILE
  bool text_to_stderr = false;  ///< people's text on stderr although --json names a file (launchers)
};

/// Registers the flags of everything that writes a report: --json, --timeout,
/// --verbose, --label, --quiet, --prometheus, --cloudwatch-emf, --junit, --version.
void add_report_flags(CLI::App& app, CommonOptions& opt);

/// add_report_flags plus --list and --sysroot (probe executables, accept).
void add_common_flags(CLI::App& app, CommonOptions& opt);

/// Parses the command line. Returns an exit code when the program should stop
/// now (0 after --help / --version, 64 with a one-line reason on bad usage),
/// nullopt when it should go on. A lone hidden --help-man or --help-completion
/// prints the man page or bash completion (cli_docs.h; `completion` adds
/// values for options) and returns 0: the build generates both this way.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                      const CompletionValues& completion = {});

/// Runs `probes` in order and writes the report. Returns the exit code for the
/// aggregated status (130 / 124 when a signal or --timeout stopped the run).
int run_probes(const std::string& tool_name, std::vector<std::unique_ptr<Probe>>& probes,
               const CommonOptions& opt, int argc, char** argv);

/// Fills tool and run metadata of a new report.
Report new_report(const std::string& tool_name, int argc, char** argv, const std::string& label);

}  // namespace nodeprobe
