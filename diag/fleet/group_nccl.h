#pragma once
/// A fleet group carried by NCCL on each node's GPU (`--pair-backend nccl`):
/// member 0's address is an ncclUniqueId (ncclGetUniqueId), the others have
/// none; each member drives one GPU with nodeprobe-allreduce's NcclRank
/// (device, stream, buffers, communicator), creates a nonblocking
/// communicator so that a peer that never arrives costs the deadline, then
/// the same warm-up, vote and data check as every group (measure_group), the
/// vote itself a one-element allreduce through NCCL. A failed or stopped
/// communicator is aborted, never destroyed.

#include <cstddef>
#include <memory>
#include <string>

#include "group_bw.h"
#include "wire.h"

namespace nodeprobe::allreduce {
struct NcclApi;
}  // namespace nodeprobe::allreduce

namespace nodeprobe::fleet {

/// Whether this node can carry NCCL pairs on GPU `gpu`, for its hello:
/// {usable, why (when not), version, gpus, gpu}. Never throws.
Json nccl_pair_support(const allreduce::NcclApi& api, int gpu);
/// The same with the system's CUDA runtime and libnccl (or "this build has no NCCL support").
Json nccl_pair_support(int gpu);

class NcclGroup : public MeasureGroup {
 public:
  /// Opens GPU `gpu` with buffers of `bytes`; member 0 also makes the unique
  /// id. `net` "socket" forces NCCL's Socket transport ("" = NCCL's choice).
  /// Throws (BackendUnavailable, ApiError, runtime_error) with the reason.
  NcclGroup(const allreduce::NcclApi& api, int gpu, const std::string& net, int index, int size, std::size_t bytes);
  ~NcclGroup() override;
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  /// Member 0: the unique id, hex; the others: "".
  std::string address() const override;
  GroupResult run(const std::vector<std::string>& addresses, int index, const GroupRunOptions& opt,
                  const std::function<bool()>& stop) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Opens an NcclGroup on the system's CUDA runtime and libnccl (throws without NCCL support in this build).
std::unique_ptr<MeasureGroup> open_system_nccl_group(int gpu, int index, int size, std::size_t bytes);

}  // namespace nodeprobe::fleet
