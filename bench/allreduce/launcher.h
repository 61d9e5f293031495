#pragma once
/// --np N: a single-node run without a launcher. Starts N ranks of this
/// executable through mpirun (argv, own process group, deadline), lets rank 0
/// write the report into a private file, then delivers it; when the job left
/// no report (mpirun missing, crash, killed) writes one that says why.

#include <string>
#include <vector>

#include "options.h"

namespace nodeprobe::allreduce {

/// The mpirun command line for `np` local ranks of `self` with `child_args`.
std::vector<std::string> local_mpirun_argv(const std::string& mpirun, int np, const std::string& self,
                                           const std::vector<std::string>& child_args, bool as_root);

/// argv without --np/--json/--timeout and the exporters (either "--flag V" or "--flag=V"); argv[0] dropped.
std::vector<std::string> strip_launcher_args(int argc, char** argv);

/// mpirun's stderr without Open MPI's blocks about a rank's non-zero exit
/// ("Primary job terminated normally, but 1 process returned a non-zero exit
/// code", "mpiexec detected that one or more processes exited with non-zero
/// status"): once rank 0 wrote the report, its status says that, and why.
std::string drop_exit_status_banners(const std::string& err);

int run_local_ranks(const Options& opt, int argc, char** argv);

}  // namespace nodeprobe::allreduce
