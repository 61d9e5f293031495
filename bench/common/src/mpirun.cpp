#include "nodeprobe/mpirun.h"

#include <unistd.h>

#include <cstdlib>

#include "nodeprobe/subprocess.h"

namespace nodeprobe {
namespace {

bool is_exec(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

}  // namespace

std::string configured_mpirun() {
#ifdef NODEPROBE_MPIEXEC
  return NODEPROBE_MPIEXEC;
#else
  return {};
#endif
}

std::string find_mpirun() {
  if (const char* e = std::getenv("NODEPROBE_MPIRUN"); e && *e) return is_exec(e) ? e : "";
  if (const std::string built = configured_mpirun(); is_exec(built)) return built;
  return find_in_path("mpirun");
}

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_STEP_ID", "MPI_LOCALRANKID"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace nodeprobe
