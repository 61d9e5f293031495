#include "backend_nccl_device.h"

#include <map>
#include <utility>

namespace nodeprobe::allreduce {

NcclDeviceChoice choose_nccl_device(int visible, int local_rank, int local_size, const std::string& host) {
  NcclDeviceChoice c;
  if (visible <= 0) {
    c.error = "no CUDA device visible on " + host;
    return c;
  }
  // All GPUs visible to every rank: one each, by local rank. Fewer visible
  // than ranks: the launcher split them per rank (CUDA_VISIBLE_DEVICES per
  // rank); the UUID check after this catches ranks that would share one.
  c.device = visible >= local_size ? local_rank : local_rank % visible;
  return c;
}

std::string shared_gpu_problem(const std::vector<std::string>& rank_host,
                               const std::vector<std::string>& rank_gpu) {
  std::map<std::pair<std::string, std::string>, int> first;
  for (std::size_t r = 0; r < rank_gpu.size() && r < rank_host.size(); ++r) {
    const auto key = std::make_pair(rank_host[r], rank_gpu[r]);
    const auto [it, fresh] = first.emplace(key, static_cast<int>(r));
    if (fresh) continue;
    return "ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " on " + rank_host[r] +
           " would both drive GPU " + rank_gpu[r] +
           " (nccl needs one GPU per rank): start at most as many ranks per host as it has GPUs, "
           "and give each rank its own GPU (all GPUs visible to every rank, or CUDA_VISIBLE_DEVICES "
           "set per rank)";
  }
  return {};
}

}  // namespace nodeprobe::allreduce
