#pragma once
/// The one way nodeprobe finds mpirun: the allreduce probe's --np launcher,
/// accept's plan and the tests all ask find_mpirun().

#include <string>

namespace nodeprobe {

/// The launcher of the MPI this build was configured with (CMake's
/// MPIEXEC_EXECUTABLE, e.g. /usr/lib64/openmpi/bin/mpiexec on RHEL); "" when
/// the build found none.
std::string configured_mpirun();

/// mpirun to start nodeprobe's MPI executables: $NODEPROBE_MPIRUN when set
/// ("" when that is not executable), then the build's own launcher, then
/// `mpirun` on PATH; "" when there is none. The build's launcher comes before
/// PATH: the executables are linked with that MPI's library (another MPI's
/// mpirun cannot start them), and RHEL's Open MPI is not on PATH at all.
std::string find_mpirun();

/// True when a launcher (mpirun, srun, hydra) started this process: its
/// variables are in the environment.
bool launched_by_mpi();

}  // namespace nodeprobe
