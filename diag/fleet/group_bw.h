#pragma once
/// One measurement group of the fleet (a pair, or the first k nodes for a
/// ring point): each member opens its half and publishes an address, the
/// coordinator hands the addresses to every member, then each member warms
/// up, times allreduces until the members vote they have enough, and checks
/// the data; every wait bounded by a deadline so a stopped peer costs one
/// timeout. FabricGroup (here) does it with a libfabric endpoint and
/// nodeprobe-allreduce's pipelined ring; NcclGroup (group_nccl.h) with NCCL
/// on the node's GPU.

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nodeprobe::fleet {

struct GroupRunOptions {
  std::size_t bytes = 8u << 20;  ///< per allreduce (float elements)
  int min_iters = 3;             ///< timed iterations at least ...
  double min_seconds = 0.5;      ///< ... and for at least this long (the members vote)
  int max_iters = 1000;
  double stall_s = 15;           ///< NCCL: no progress this long ends the group (fabric: the deadline does)
};

struct GroupResult {
  std::vector<double> iter_s;  ///< each timed allreduce, seconds
  long wrong = -1;             ///< wrong elements in the data check after timing
  std::string transport;       ///< what carried it ("tcp;ofi_rxm", "efa", "nccl 2.28.5 net Socket")
};

/// Thrown when the deadline passed or the coordinator cancelled the group.
class GroupStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A member's half of a group, whichever backend carries it.
class MeasureGroup {
 public:
  virtual ~MeasureGroup() = default;
  /// What the other members need to reach this one, hex-encoded for the wire
  /// (may be empty: an NCCL member other than the first).
  virtual std::string address() const = 0;
  /// Connects to every member (`addresses` by group index, this one's at
  /// `index`), warms up, times allreduces of `opt.bytes` until the members
  /// agree they have enough (each votes after every allreduce, the sum of the
  /// votes decides, so all run the same count), then checks the data. `stop`
  /// is polled; when it says so the run ends with GroupStopped (and this
  /// object must be discarded).
  virtual GroupResult run(const std::vector<std::string>& addresses, int index, const GroupRunOptions& opt,
                          const std::function<bool()>& stop) = 0;
};

/// The timing loop and data check every backend shares, over its three
/// operations: one allreduce (sum of float32, in place) of the first `count`
/// elements of the data buffer, the same of the 1-element vote buffer, and
/// access to both buffers.
struct GroupOps {
  std::function<void(std::size_t count)> allreduce_data;
  std::function<float(float mine)> allreduce_vote;  ///< returns the sum of the votes
  std::function<void(const void* host, std::size_t bytes)> load;  ///< host -> data buffer
  std::function<void(void* host, std::size_t bytes)> store;       ///< data buffer -> host
};
/// Warm-up, timed allreduces with the vote, data check: `res.iter_s` and `res.wrong`.
void measure_group(const GroupOps& ops, int index, int n, const GroupRunOptions& opt, GroupResult& res);

class FabricGroup : public MeasureGroup {
 public:
  /// Opens an endpoint of `provider` on the domain of `iface` (tcp). Throws
  /// std::runtime_error (ApiError) when the provider cannot be opened.
  FabricGroup(const std::string& provider, const std::string& iface);
  ~FabricGroup();
  FabricGroup(const FabricGroup&) = delete;
  FabricGroup& operator=(const FabricGroup&) = delete;

  /// This endpoint's address.
  std::string address() const override;
  GroupResult run(const std::vector<std::string>& addresses, int index, const GroupRunOptions& opt,
                  const std::function<bool()>& stop) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Whether this build can measure groups (libfabric found at build time).
bool fabric_groups_available();
/// libfabric providers present here ("tcp", "efa", "shm" ...); empty without libfabric.
std::vector<std::string> fabric_providers();

}  // namespace nodeprobe::fleet
