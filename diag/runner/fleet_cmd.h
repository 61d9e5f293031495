#pragma once
/// `nodeprobe fleet`: under mpirun/srun (one rank per node) it becomes the
/// rank program nodeprobe-fleet; with --hostfile it runs mpirun itself over
/// those hosts and writes the fleet report here. Also the one place fleet
/// reports are written (JSON, HTML, text), for rank 0 and for the launcher.

#include <string>

#include "fleet_options.h"
#include "nodeprobe/fleet.h"

namespace CLI {
class App;
}  // namespace CLI

namespace nodeprobe::diag {

CLI::App* setup_fleet(CLI::App& app, FleetOptions& opt);

/// `argc/argv`: the whole command line (the arguments after "fleet" are handed on).
int run_fleet_cmd(const FleetOptions& opt, int argc, char** argv);

/// Writes `r` where `opt` says (--json, --html; "-" is stdout) and prints its
/// text (stdout, stderr with --json -) unless --quiet. Returns the exit code
/// of its verdict, 2 when a file could not be written.
int emit_fleet_report(const FleetOptions& opt, FleetReport& r);

/// A fleet report with no nodes, only `status` and `reason` (bad input,
/// nothing launched), written where `opt` allows; returns the exit code.
int write_fleet_error(const FleetOptions& opt, int argc, char** argv, Status status, const std::string& reason);

/// A fresh fleet report with tool and run filled in.
FleetReport new_fleet_report(int argc, char** argv, const std::string& label);

}  // namespace nodeprobe::diag
