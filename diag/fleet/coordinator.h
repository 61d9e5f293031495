#pragma once
/// Rank 0's side of the fleet wire: one TCP connection per rank (rank 0's own
/// worker included), commands out, replies and heartbeats in. A rank silent
/// for the stall limit is lost with `timeout`, one whose connection closes
/// without a goodbye is lost with `error`; either way the phases go on
/// without it. Never blocks past a deadline.

#include <csignal>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "net_util.h"
#include "nodeprobe/report.h"
#include "wire.h"

namespace nodeprobe::fleet {

struct LostRank {
  Status status = Status::kTimeout;  ///< timeout (silent) or error (connection closed)
  std::string phase;                 ///< the fleet phase it was lost in
  std::string reason;
};

class Coordinator {
 public:
  /// `cancel`: polled while waiting (SIGINT/SIGTERM); the waits then return early.
  Coordinator(int nranks, double stall_s, const volatile std::sig_atomic_t* cancel);
  /// Listens on ip (any port); returns the port.
  int listen(const std::string& ip);
  /// Waits until every rank said hello or `timeout_s` passed; the missing are lost.
  void accept_all(double timeout_s);

  bool alive(int rank) const;
  std::vector<int> alive_ranks() const;
  const std::map<int, LostRank>& lost() const { return lost_; }
  /// What rank r said in its hello ({host, ip, iface, providers, pid}).
  const Json& hello(int rank) const { return peers_[static_cast<std::size_t>(rank)].hello; }

  /// Sends a command (its "id" is assigned); returns the id, or -1 when the rank is lost.
  long send(int rank, Json cmd);
  /// Sends a message that needs no reply (cancel); false when the rank is lost.
  bool notify(int rank, const Json& msg, const std::string& phase);
  /// Waits for the replies to `want` (rank -> id) until all came, `deadline_s`
  /// (steady clock) passed or the run was cancelled. Ranks lost meanwhile are
  /// marked lost in `phase` and `on_lost` is called for each (to cancel their groups).
  std::map<int, Json> wait(const std::map<int, long>& want, double deadline_s, const std::string& phase,
                           const std::function<void(int)>& on_lost = {});
  /// Tells every live rank the run is over (`finalize`: every rank is alive, so MPI_Finalize is safe).
  void goodbye(bool finalize);
  bool cancelled() const { return cancel_ && *cancel_; }

 private:
  struct Peer {
    Fd fd;
    FrameReader reader;
    double last_heard = 0;
    std::string doing = "starting";  // from its heartbeats
    std::string pending;             // the command sent and not answered yet
    Json hello = Json::object();
    std::vector<Json> replies;
  };
  void lose(int rank, Status s, const std::string& phase, const std::string& reason);
  /// Sends `msg`; a rank that does not take it is lost (error when its connection closed).
  bool deliver(int rank, const Json& msg, double wait_s, const std::string& phase, const std::string& what);
  void pump(int rank, const std::string& phase);

  int n_;
  double stall_s_;
  const volatile std::sig_atomic_t* cancel_;
  Fd listen_fd_;
  std::vector<Peer> peers_;
  std::map<int, LostRank> lost_;
  long next_id_ = 1;
  double last_beat_out_ = 0;
};

}  // namespace nodeprobe::fleet
