// nodeprobe-fleet: the rank program of `nodeprobe fleet`, one rank per node:
//
//   mpirun -np N --map-by ppr:1:node nodeprobe fleet --json fleet.json   (nodeprobe execs this)
//   srun --ntasks-per-node=1 nodeprobe fleet --json fleet.json
#include <CLI/CLI.hpp>

#include "fleet_cmd.h"
#include "fleet_options.h"
#include "fleet_rank.h"
#include "nodeprobe/mpi_sanitizer_options.h"
#include "nodeprobe/mpirun.h"
#include "nodeprobe/probe_main.h"

int main(int argc, char** argv) {
  using namespace nodeprobe;
  CLI::App app{"nodeprobe-fleet: accept N nodes at once (one rank per node): local accept, mesh, pairwise "
               "bandwidth, ring allreduce; outliers, actions, drain list",
               "nodeprobe-fleet"};
  diag::FleetOptions opt;
  diag::add_fleet_flags(app, opt);
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  if (!launched_by_mpi())
    return diag::write_fleet_error(
        opt, argc, argv, Status::kError,
        "not started by a launcher: run `mpirun -np N --map-by ppr:1:node nodeprobe fleet ...` (or srun "
        "--ntasks-per-node=1), or `nodeprobe fleet --hostfile HOSTS ...`");
  return fleet::run_fleet_rank(opt, argc, argv);
}
