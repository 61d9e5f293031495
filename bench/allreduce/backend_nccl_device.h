#pragma once
/// Which GPU each rank of the nccl backend drives. Host-only (no CUDA
/// headers), so the rules are unit tested everywhere.
///
/// Two launch styles are common: every rank sees all of the host's GPUs
/// (mpirun; rank i takes GPU local_rank), or the launcher gives each rank its
/// own (Slurm --gpus-per-task, a wrapper setting CUDA_VISIBLE_DEVICES per
/// rank: each rank sees one GPU, device 0). Both work; what must not happen is
/// two ranks on one GPU, which the backend checks from the GPUs' UUIDs.

#include <string>
#include <vector>

namespace nodeprobe::allreduce {

struct NcclDeviceChoice {
  int device = -1;    ///< CUDA device index (after CUDA_VISIBLE_DEVICES)
  std::string error;  ///< why there is none ("" when device >= 0)
};

/// `visible`: devices this rank sees; `local_rank` / `local_size`: its place
/// among the ranks on its host.
NcclDeviceChoice choose_nccl_device(int visible, int local_rank, int local_size, const std::string& host);

/// "" when no two ranks of one host drive the same GPU; else which ranks do.
/// `rank_host[r]`, `rank_gpu[r]`: every rank's host and GPU UUID.
std::string shared_gpu_problem(const std::vector<std::string>& rank_host,
                               const std::vector<std::string>& rank_gpu);

}  // namespace nodeprobe::allreduce
