#pragma once
/// The control channel: a TCP connection from every rank to rank 0, outside
/// MPI and the measured transports, so that a run always ends and says why.
///
/// Every rank sends a heartbeat with its phase four times a second. Rank 0's
/// monitor thread ends the run (through `on_fatal`, which writes the report
/// and exits) when a rank's connection closes without a goodbye (it died), a
/// rank reports an error, a rank stays silent for the stall limit (stopped,
/// hung host), or the run is told to stop (stop.h: SIGINT/SIGTERM/SIGHUP,
/// --timeout). A rank told to stop tells rank 0, which ends the run naming it;
/// a rank that finds rank 0 silent tells it so before giving up, so a stopped
/// rank 0 is reported as the silent one. Other ranks exit on their own when
/// rank 0 disappears or the deadline plus a grace period passes.

#include <mpi.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mpi_util.h"
#include "net_util.h"
#include "nodeprobe/report.h"

namespace nodeprobe::allreduce {

class Control {
 public:
  /// Runs on rank 0's monitor (or main) thread to write the report; the process
  /// then exits with `exit_code`. `provisional`: written ahead of the final
  /// one (no people's text), because a launcher may kill the rank before that.
  using FatalFn =
      std::function<void(Status status, const std::string& reason, int exit_code, bool provisional)>;

  Control(MPI_Comm comm, const HostMap& hosts);
  ~Control();
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;

  /// Collective: connects every rank to rank 0 and starts the threads.
  /// `deadline_s`: steady-clock time of --timeout (0: none).
  void start(const std::string& preferred_ip, double deadline_s, double stall_s, FatalFn on_fatal);
  /// What this rank is doing now (sent with the heartbeat; named in reasons).
  void set_phase(const std::string& phase);
  std::string phase() const;
  /// Ends the run from any rank because of `what`: rank 0 calls on_fatal, other
  /// ranks tell rank 0 and wait to be torn down.
  [[noreturn]] void fail(const std::string& what);
  /// Normal end (before MPI_Finalize): goodbye to rank 0, threads joined.
  void stop();
  /// The stop handlers' emergency writer: rank 0 writes the report for the
  /// stop now; other ranks return (the process then exits).
  void end_for_stop();
  /// Ranks that could not open a control connection (rank 0 only).
  const std::vector<int>& unmonitored() const { return unmonitored_; }
  /// Process id of rank `r` (0 when unknown).
  int pid_of(int r) const {
    return r >= 0 && static_cast<std::size_t>(r) < pids_.size() ? pids_[static_cast<std::size_t>(r)] : 0;
  }
  /// "rank 3 (host np7-h4, pid 1234)".
  std::string describe_rank(int r) const;

 private:
  void monitor_rank0();
  void heartbeat_other();
  void fatal_for_stop(const std::string& silent);
  void fatal(Status s, const std::string& reason, int exit_code);
  bool send_to_root(std::uint32_t type, const std::string& text);

  MPI_Comm comm_;
  HostMap hosts_;
  int rank_ = 0, size_ = 1;
  double deadline_s_ = 0, stall_s_ = 60;
  FatalFn on_fatal_;
  Fd listen_fd_, to_root_;
  std::vector<Fd> conns_;          // rank 0: by rank
  std::vector<int> pids_;          // by rank
  std::vector<int> unmonitored_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex fatal_mu_;
  std::mutex send_mu_;
  mutable std::mutex phase_mu_;
  std::string phase_ = "starting";
};

}  // namespace nodeprobe::allreduce
