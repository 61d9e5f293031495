#pragma once
/// One measurement group of the fleet (a pair, or the first k nodes for a
/// ring point): a libfabric endpoint whose address the coordinator hands to
/// the other members, then nodeprobe-allreduce's pipelined ring over it,
/// every wait bounded by a deadline so a stopped peer costs one timeout.

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nodeprobe::fleet {

struct GroupRunOptions {
  std::size_t bytes = 8u << 20;  ///< per allreduce (float elements)
  int min_iters = 3;             ///< timed iterations at least ...
  double min_seconds = 0.5;      ///< ... and for at least this long (the members vote)
  int max_iters = 1000;
};

struct GroupResult {
  std::vector<double> iter_s;  ///< each timed allreduce, seconds
  long wrong = -1;             ///< wrong elements in the data check after timing
  std::string transport;       ///< the provider that carried it ("tcp;ofi_rxm", "efa")
};

/// Thrown when the deadline passed or the coordinator cancelled the group.
class GroupStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FabricGroup {
 public:
  /// Opens an endpoint of `provider` on the domain of `iface` (tcp). Throws
  /// std::runtime_error (ApiError) when the provider cannot be opened.
  FabricGroup(const std::string& provider, const std::string& iface);
  ~FabricGroup();
  FabricGroup(const FabricGroup&) = delete;
  FabricGroup& operator=(const FabricGroup&) = delete;

  /// This endpoint's address, hex-encoded for the wire.
  std::string address() const;

  /// Connects to every member (`addresses` by group index, this one's at
  /// `index`), warms up, times allreduces until the members agree they have
  /// enough, then checks the data. `stop` is polled; when it says so the run
  /// ends with GroupStopped (and this object must be discarded).
  GroupResult run(const std::vector<std::string>& addresses, int index, const GroupRunOptions& opt,
                  const std::function<bool()>& stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Whether this build can measure groups (libfabric found at build time).
bool fabric_groups_available();
/// libfabric providers present here ("tcp", "efa", "shm" ...); empty without libfabric.
std::vector<std::string> fabric_providers();

}  // namespace nodeprobe::fleet
