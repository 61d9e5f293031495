#pragma once
/// `nodeprobe report RUN.json [--compare BASELINE.json] [--html OUT.html]
/// [--format text|md|json]`: renders a saved report; the HTML page is one
/// self-contained file with charts.

#include <string>

#include "nodeprobe/input.h"

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

namespace nodeprobe::diag {

struct ReportCmdOptions {
  std::string run;
  std::string compare;       ///< baseline: the "before" of a comparison (RUN is "after")
  std::string html;
  std::string format = "text";
  bool format_given = false;
  double threshold_pct = 5;
  bool verbose = false;
  InputOverrides input;  ///< --max-input-size, --read-timeout
};

CLI::App* setup_report(CLI::App& app, ReportCmdOptions& opt);
int run_report(const ReportCmdOptions& opt);

}  // namespace nodeprobe::diag
