#pragma once
/// nodeprobe-fleet: the program every node runs, one rank per node, under
/// mpirun or srun. MPI only starts the ranks and tells them where rank 0
/// listens; everything after goes over the fleet's own wire (wire.h), so a
/// stopped node is a timeout in the report instead of a hung collective.

#include "fleet_options.h"

namespace nodeprobe::fleet {

/// Runs as one rank of the job; returns the exit code (rank 0: the fleet
/// verdict's; other ranks 0 unless they failed).
int run_fleet_rank(const diag::FleetOptions& opt, int argc, char** argv);

}  // namespace nodeprobe::fleet
