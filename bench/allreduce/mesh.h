#pragma once
/// Mesh preflight: every rank listens on the interface MPI/NCCL will use and
/// every pair connects over TCP (and every rank to rank 0's rendezvous port),
/// so a security group that drops traffic between members, a blocked port or
/// a dead link is named before a training job hangs on it.

#include <mpi.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "mpi_util.h"
#include "net_util.h"
#include "nodeprobe/report.h"

namespace nodeprobe::allreduce {

struct MeshOptions {
  std::string ip;            ///< this rank's address on the chosen interface
  std::string iface;         ///< its name
  int port = 0;              ///< fixed base port (+ local rank), 0: any free port
  int rendezvous_port = 0;   ///< also check rank 0 on this port (0: no)
  double timeout_s = 2;      ///< per connection attempt
};

struct MeshLink {
  int from = 0, to = 0;      ///< ranks (to = -1: rank 0's rendezvous port)
  bool ok = false;
  double connect_us = 0;
  double rtt_us = 0;         ///< best of a few 8-byte round trips
  std::string error;         ///< why not ok
  std::string target;        ///< "ip:port"
};

struct MeshResult {
  std::vector<std::string> ip;     ///< per rank
  std::vector<int> port;           ///< per rank (-1: could not listen)
  std::vector<std::string> listen_error;  ///< per rank
  std::vector<MeshLink> links;     ///< every ordered pair (rank 0 only)
  std::vector<MeshLink> rendezvous;  ///< every rank -> rank 0's rendezvous port (rank 0 only)
  int unreachable() const;
};

/// Accepts connections on its listeners and echoes what arrives, on its own
/// thread, until destroyed: the far end of every mesh link.
class MeshEchoServer {
 public:
  MeshEchoServer() = default;
  ~MeshEchoServer();
  MeshEchoServer(const MeshEchoServer&) = delete;
  MeshEchoServer& operator=(const MeshEchoServer&) = delete;
  /// Before start() only.
  void add_listener(Fd fd) { listeners_.push_back(std::move(fd)); }
  void start();

 private:
  void loop();
  std::vector<Fd> listeners_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

/// Connects from `source` (may be "") to ip:port within `timeout_s`, then times a
/// few 8-byte round trips; `from`/`to` only label the result.
MeshLink probe_mesh_link(int from, int to, const std::string& ip, int port, const std::string& source,
                         double timeout_s);

/// A peer's listening address.
struct MeshTarget {
  int rank = 0;
  std::string ip;
  int port = -1;  ///< <= 0: it could not listen
};

/// probe_mesh_link to every target at once (64 threads at most): N unreachable
/// peers cost about one timeout, not N.
std::vector<MeshLink> probe_mesh_targets(int from, const std::vector<MeshTarget>& targets, const std::string& source,
                                         double timeout_s);

/// One link as JSON and back (how ranks hand their results to rank 0).
Json mesh_link_json(const MeshLink& l);
MeshLink mesh_link_from_json(const Json& j);

/// Runs the preflight over `comm`. Collective; results complete on rank 0.
MeshResult run_mesh(MPI_Comm comm, const MeshOptions& opt, int local_rank);

/// The judged outcome: net.unreachable (fail) naming both hosts and the port of every failed pair.
Check mesh_check(const MeshResult& m, const HostMap& hosts);

/// The report's data.mesh: ranks, a latency matrix (us, null when unreachable) and failures.
Json mesh_json(const MeshResult& m, const HostMap& hosts);

/// People's text: the matrix (up to 16 ranks) or the failures.
std::string mesh_text(const MeshResult& m, const HostMap& hosts);

}  // namespace nodeprobe::allreduce
