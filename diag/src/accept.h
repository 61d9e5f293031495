#pragma once
/// `nodeprobe accept`: run every probe this build has, each with a deadline,
/// merge their reports, judge, and write one report.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runner.h"

namespace nodeprobe::diag {

struct AcceptOptions {
  std::string profile = "quick";  ///< quick | full
  std::string expect;             ///< instance type to judge against (e.g. p4d.24xlarge)
  std::string label;
  std::string json_out;
  std::string data_dir;           ///< where IO datasets go (io probe)
  std::vector<std::string> only;  ///< run only these probes
  bool verbose = false;
  bool quiet = false;
};

/// Registers the subcommand; `run` is set when it was chosen.
CLI::App* setup_accept(CLI::App& app, AcceptOptions& opt);

/// The probes accept runs, in order, for a profile.
std::vector<ProbeSpec> accept_plan(const AcceptOptions& opt);

/// Runs accept; returns the exit code.
int run_accept(const AcceptOptions& opt, int argc, char** argv);

/// Where probe executables are looked up: $NODEPROBE_PROBE_DIR, else the
/// directory of the running `nodeprobe`. Ends with '/'.
std::string probe_dir();

}  // namespace nodeprobe::diag
