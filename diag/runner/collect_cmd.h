#pragma once
/// `nodeprobe collect --out BUNDLE.tar.gz [--report RUN.json]`: an offline
/// support bundle (kernel and audit logs, command outputs, /proc and /sys
/// facts, limits, the last report) with a manifest. `nodeprobe diag --bundle`
/// reads it anywhere and gives the findings the live diagnosis gives.
/// Ctrl-C, SIGTERM, SIGHUP or --timeout: what was collected so far is
/// bundled (the manifest lists the rest as not collected), exit 130 / 124.

#include <string>

#include "nodeprobe/input.h"

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

namespace nodeprobe::diag {

struct CollectCmdOptions {
  std::string out;
  std::string report;
  double command_timeout_s = 15;
  double timeout_s = 0;  ///< --timeout: the whole collection (what was collected is still bundled)
  bool no_limits = false;
  bool quiet = false;
  InputOverrides input;  ///< --max-input-size, --read-timeout (for --report)
};

CLI::App* setup_collect(CLI::App& app, CollectCmdOptions& opt);
int run_collect(const CollectCmdOptions& opt);

}  // namespace nodeprobe::diag
