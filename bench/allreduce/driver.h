#pragma once
/// The multi-rank run: MPI up, control channel, mesh, sweeps, comparison,
/// scaling, report by rank 0, and the exit code every rank returns.

#include "options.h"

namespace nodeprobe::allreduce {

/// Runs as one rank of an MPI job. Returns the exit code (DESIGN.md table).
int run_ranks(Options& opt, int argc, char** argv);

/// Writes a report holding only the allreduce probe with `status` and
/// `reason` (bad input, nothing launched). Returns the exit code for it.
int write_error_report(const Options& opt, int argc, char** argv, Status status, const std::string& reason);

/// Library versions this build knows without a GPU ("" when not built in).
std::string libfabric_version();
std::string nccl_library_version();

}  // namespace nodeprobe::allreduce
