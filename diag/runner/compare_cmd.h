#pragma once
/// `nodeprobe compare BEFORE AFTER`: before/after verdict per metric, the
/// environment diff; exit 1 when any metric is worse (CI gating), 2 on bad input.
/// Two fleet reports (nodeprobe.fleet/1) compare node by node, paired by host.

#include <string>

#include "nodeprobe/input.h"

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

namespace nodeprobe::diag {

struct CompareCmdOptions {
  std::string before, after;
  double threshold_pct = 5;
  std::string format = "text";  ///< text | md | json | html
  std::string out;              ///< file instead of stdout
  InputOverrides input;         ///< --max-input-size, --read-timeout
};

CLI::App* setup_compare(CLI::App& app, CompareCmdOptions& opt);
int run_compare(const CompareCmdOptions& opt);

}  // namespace nodeprobe::diag
