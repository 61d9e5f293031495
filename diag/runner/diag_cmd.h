#pragma once
/// `nodeprobe diag [--log PATH]... [--bundle DIR|FILE] [--live] [--since DURATION]
///                 [--expect TYPE] [--json OUT]`
/// With neither --log nor --bundle it reads the live machine (what it may;
/// what needs root is skipped with the reason). Exit 1 when a finding of
/// severity error exists, 0 otherwise, 2 on bad input, 64 on bad usage,
/// 130 / 124 when a signal or --timeout stopped it (the report then holds
/// what was read; a bundle's extraction directory is removed).

#include <string>
#include <vector>

#include "nodeprobe/probe_main.h"
#include "nodeprobe/input.h"

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

namespace nodeprobe::diag {

struct DiagOptions {
  CommonOptions common;  ///< --json, --timeout, --label, --quiet, --verbose, the exporters
  std::vector<std::string> logs;
  std::string bundle;
  bool live = false;
  std::string since;
  std::vector<std::string> rules;  ///< site rule files (nodeprobe.rules/1)
  std::string expect;
  double command_timeout_s = 15;
  bool no_limits = false;
  InputOverrides input;  ///< --max-input-size, --read-timeout
};

CLI::App* setup_diag(CLI::App& app, DiagOptions& opt);
int run_diag(const DiagOptions& opt, int argc, char** argv);

}  // namespace nodeprobe::diag
