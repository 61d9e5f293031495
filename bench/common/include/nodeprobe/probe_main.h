#pragma once
/// The shared driver of every probe executable: common flags, CLI error
/// handling, running probes with a deadline, and writing the report
/// atomically, also on SIGINT or when the deadline passes.

#include <memory>
#include <optional>
#include <string>
#include <vector>

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

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
};

/// Registers the common flags on `app`.
void add_common_flags(CLI::App& app, CommonOptions& opt);

/// Parses the command line. Returns an exit code when the program should stop
/// now (0 after --help / --version, 64 with a one-line reason on bad usage),
/// nullopt when it should go on. A lone hidden --help-man or --help-completion
/// prints the man page or bash completion (cli_docs.h; `completion` adds
/// values for options) and returns 0: the build generates both this way.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                      const CompletionValues& completion = {});

/// Runs `probes` in order and writes the report. Returns the exit code for the
/// aggregated status. Probes whose key is not in `only` (when non-empty) are left out.
int run_probes(const std::string& tool_name, std::vector<std::unique_ptr<Probe>>& probes,
               const CommonOptions& opt, int argc, char** argv);

/// Fills tool and run metadata of a new report.
Report new_report(const std::string& tool_name, int argc, char** argv, const std::string& label);

/// Checks that the directory a report will be written to exists and is
/// writable; returns "" or a one-line reason.
std::string check_output_path(const std::string& path);

}  // namespace nodeprobe
