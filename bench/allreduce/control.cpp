#include "control.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "nodeprobe/clock.h"
#include "nodeprobe/stop.h"

namespace nodeprobe::allreduce {
namespace {

constexpr std::uint32_t kMagic = 0x4E50434Bu;  // "NPCK"
// kStop: this rank was told to stop (its text says why); kRootSilent: rank 0
// said nothing for the stall limit and this rank gives up (sent so that a
// stopped rank 0, once resumed, names itself instead of this rank's exit).
enum MsgType : std::uint32_t { kHello = 1, kBeat = 2, kBye = 3, kError = 4, kStop = 5, kRootSilent = 6 };
constexpr double kBeatInterval = 0.25;
constexpr double kOtherGrace = 5;  // non-zero ranks give rank 0 this long to end the run first

struct Msg {
  std::uint32_t magic = kMagic;
  std::uint32_t type = 0;
  std::int32_t rank = 0;
  std::int32_t pid = 0;
  char text[240] = {};
};
static_assert(sizeof(Msg) == 256, "fixed wire size");

Msg make_msg(MsgType t, int rank, const std::string& text) {
  Msg m;
  m.type = t;
  m.rank = rank;
  m.pid = static_cast<std::int32_t>(::getpid());
  std::snprintf(m.text, sizeof m.text, "%s", text.c_str());
  return m;
}

// Sends one message, waiting at most `wait_ms` for room: a stopped peer must
// never block the sender (its socket buffer fills and stays full).
bool send_msg(int fd, const Msg& m, int wait_ms) {
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, wait_ms) <= 0 || !(p.revents & POLLOUT)) return false;
  // TCP reports POLLOUT only with a good share of the buffer free, so one
  // 256-byte message goes in whole.
  const ssize_t n = ::send(fd, &m, sizeof m, MSG_DONTWAIT | MSG_NOSIGNAL);
  return n == static_cast<ssize_t>(sizeof m);
}

void say(const std::string& line) {
  const std::string s = "nodeprobe-allreduce: " + line + "\n";
  ssize_t rc = ::write(STDERR_FILENO, s.data(), s.size());
  (void)rc;
}

// Every way a rank ends itself: what it registered for removal (the shm
// region of fabric:shm) goes first.
[[noreturn]] void end_process(int code) {
  run_stop_cleanups();
  ::_exit(code);
}

std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

Control::Control(MPI_Comm comm, const HostMap& hosts) : comm_(comm), hosts_(hosts) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Control::~Control() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string Control::describe_rank(int r) const {
  std::string s = "rank " + std::to_string(r);
  if (r >= 0 && static_cast<std::size_t>(r) < hosts_.rank_host.size())
    s += " (host " + hosts_.rank_host[static_cast<std::size_t>(r)];
  if (r >= 0 && static_cast<std::size_t>(r) < pids_.size() && pids_[static_cast<std::size_t>(r)] > 0)
    s += ", pid " + std::to_string(pids_[static_cast<std::size_t>(r)]);
  return s + ")";
}

void Control::set_phase(const std::string& phase) {
  {
    std::lock_guard<std::mutex> lk(phase_mu_);
    phase_ = phase;
  }
  // Right away, so a rank stopped a moment later is named with what it was doing.
  if (rank_ != 0 && to_root_ && !stopping_) send_to_root(kBeat, phase);
}

bool Control::send_to_root(std::uint32_t type, const std::string& text) {
  const Msg m = make_msg(static_cast<MsgType>(type), rank_, text);
  std::lock_guard<std::mutex> lk(send_mu_);
  // Heartbeats are dropped when there is no room; the rest may wait a little.
  return send_msg(to_root_.get(), m, type == kBeat ? 0 : 2000);
}

std::string Control::phase() const {
  std::lock_guard<std::mutex> lk(phase_mu_);
  return phase_;
}

void Control::start(const std::string& preferred_ip, double deadline_s, double stall_s,
                    FatalFn on_fatal) {
  deadline_s_ = deadline_s;
  stall_s_ = stall_s;
  on_fatal_ = std::move(on_fatal);

  pids_ = std::vector<int>(static_cast<std::size_t>(size_), 0);
  std::vector<int> all_pids(static_cast<std::size_t>(size_));
  int me = static_cast<int>(::getpid());
  NP_CHECK_MPI(MPI_Allgather(&me, 1, MPI_INT, all_pids.data(), 1, MPI_INT, comm_));
  pids_ = all_pids;

  // Rank 0 publishes its addresses (the preferred one first) and a port.
  std::string where;
  if (rank_ == 0) {
    int port = 0;
    listen_fd_ = tcp_listen("", 0, &port);
    std::vector<std::string> ips;
    if (!preferred_ip.empty()) ips.push_back(preferred_ip);
    for (const auto& a : local_ipv4_addrs())
      if (a.up && !a.loopback && a.ip != preferred_ip) ips.push_back(a.ip);
    ips.push_back("127.0.0.1");
    where = std::to_string(port);
    for (const auto& ip : ips) where += " " + ip;
  }
  where = bcast_string(comm_, where, 0);

  int connected = 1;
  if (rank_ != 0 && size_ > 1) {
    std::istringstream in(where);
    int port = 0;
    in >> port;
    connected = 0;
    for (std::string ip; in >> ip && !connected;) {
      ConnectResult c = tcp_connect(ip, port, 3.0);
      if (!c.ok) continue;
      to_root_ = std::move(c.fd);
      Msg hello = make_msg(kHello, rank_, process_hostname());
      connected = write_all(to_root_.get(), &hello, sizeof hello) ? 1 : 0;
    }
  }
  std::vector<int> ok(static_cast<std::size_t>(size_), 1);
  NP_CHECK_MPI(MPI_Gather(&connected, 1, MPI_INT, ok.data(), 1, MPI_INT, 0, comm_));

  if (rank_ == 0) {
    conns_.resize(static_cast<std::size_t>(size_));
    int expected = 0;
    for (int r = 1; r < size_; ++r) {
      if (ok[static_cast<std::size_t>(r)]) ++expected;
      else unmonitored_.push_back(r);
    }
    const double until = steady_clock().now_s() + 15;
    for (int got = 0; got < expected && steady_clock().now_s() < until;) {
      pollfd p{listen_fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      Fd c(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) continue;
      Msg hello;
      if (!read_exact(c.get(), &hello, sizeof hello, 5) || hello.magic != kMagic ||
          hello.type != kHello || hello.rank <= 0 || hello.rank >= size_)
        continue;
      conns_[static_cast<std::size_t>(hello.rank)] = std::move(c);
      ++got;
    }
    for (int r = 1; r < size_; ++r)
      if (ok[static_cast<std::size_t>(r)] && !conns_[static_cast<std::size_t>(r)])
        unmonitored_.push_back(r);
    listen_fd_ = Fd();
    thread_ = std::thread([this] { monitor_rank0(); });
  } else {
    thread_ = std::thread([this] { heartbeat_other(); });
  }
}

void Control::fatal(Status s, const std::string& reason, int exit_code) {
  std::lock_guard<std::mutex> lk(fatal_mu_);
  if (stopping_) return;
  if (on_fatal_) on_fatal_(s, reason, exit_code, false);
  say(reason);
  end_process(exit_code);
}

void Control::fail(const std::string& what) {
  if (rank_ == 0) {
    fatal(Status::kError, describe_rank(0) + ": " + what, 2);
    end_process(2);  // fatal returns only after stop(); the run cannot go on either way
  }
  say("rank " + std::to_string(rank_) + ": " + what);
  if (to_root_) send_to_root(kError, what);
  // Rank 0 writes the report and ends the job; this is the fallback.
  for (int i = 0; i < 100; ++i) ::usleep(100000);
  end_process(2);
}

void Control::stop() {
  {
    std::lock_guard<std::mutex> lk(fatal_mu_);
    stopping_ = true;
  }
  if (rank_ != 0 && to_root_) send_to_root(kBye, "done");
  if (thread_.joinable()) thread_.join();
}

void Control::end_for_stop() {
  if (rank_ == 0 && stop_requested()) fatal_for_stop("");
}

// Rank 0 ends the run for its own stop: the deadline names what every rank
// was doing (and who is silent), a signal the phase it came in.
void Control::fatal_for_stop(const std::string& silent) {
  if (stop_cause() != StopCause::kDeadline)
    fatal(Status::kError, stop_reason() + " during " + phase(), 130);
  fatal(Status::kTimeout, stop_reason() + " during " + phase() + silent, 124);
}

void Control::monitor_rank0() {
  const std::size_t n = static_cast<std::size_t>(size_);
  std::vector<double> last(n, steady_clock().now_s());
  std::vector<std::string> phases(n, "starting"), buffers(n);
  std::vector<bool> bye(n, false), closed(n, false);
  double stop_seen = 0, last_beat_out = 0, prev_loop = steady_clock().now_s(), suspended = 0, rank_stop_at = 0;
  std::string rank_stop;  // the first rank that said it was told to stop
  while (!stopping_) {
    if (steady_clock().now_s() - last_beat_out >= 1.0) {
      // Lets the other ranks tell a stopped or hung rank 0 from a busy one.
      last_beat_out = steady_clock().now_s();
      const Msg beat = make_msg(kBeat, 0, "");
      for (std::size_t r = 1; r < n; ++r)
        if (conns_[r] && !closed[r]) send_msg(conns_[r].get(), beat, 0);
    }
    std::vector<pollfd> fds;
    std::vector<int> who;
    for (std::size_t r = 1; r < n; ++r)
      if (conns_[r] && !closed[r]) { fds.push_back({conns_[r].get(), POLLIN, 0}); who.push_back(static_cast<int>(r)); }
    ::poll(fds.data(), fds.size(), 100);
    const double now = steady_clock().now_s();
    // This thread itself was frozen (SIGSTOP, a hung host): what the others
    // did meanwhile is a consequence, not the cause.
    if (now - prev_loop > 3) suspended = now - prev_loop;
    prev_loop = now;
    const std::string me_silent = suspended > 0 ? describe_rank(0) + " was stopped or hung for " + fmt_s(suspended) +
                                                      " during " + phase()
                                                : std::string();
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto r = static_cast<std::size_t>(who[i]);
      char buf[4096];
      const ssize_t got = ::recv(conns_[r].get(), buf, sizeof buf, MSG_DONTWAIT);
      if (got > 0) {
        buffers[r].append(buf, static_cast<std::size_t>(got));
        while (buffers[r].size() >= sizeof(Msg)) {
          Msg m;
          std::memcpy(&m, buffers[r].data(), sizeof m);
          buffers[r].erase(0, sizeof m);
          last[r] = now;
          m.text[sizeof m.text - 1] = '\0';
          const std::string who_r = describe_rank(static_cast<int>(r));
          if (m.type == kBeat) phases[r] = m.text;
          if (m.type == kBye) bye[r] = true;
          if (m.type == kError) fatal(Status::kError, who_r + ": " + m.text, 2);
          if (m.type == kStop && rank_stop.empty()) {
            rank_stop = who_r + ": " + m.text + " during " + phases[r];
            rank_stop_at = now;
          }
          if (m.type == kRootSilent)
            fatal(Status::kError,
                  describe_rank(0) + " was silent for " + std::string(m.text) + " (stopped or hung; rank " +
                      std::to_string(r) + " gave up waiting)",
                  2);
        }
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      closed[r] = true;
      if (bye[r]) continue;
      if (!me_silent.empty())
        fatal(Status::kError, me_silent + "; " + describe_rank(static_cast<int>(r)) + " gave up meanwhile", 2);
      fatal(Status::kError,
            describe_rank(static_cast<int>(r)) + " died during " + phases[r] +
                ": its control connection closed without a goodbye (killed or crashed; the "
                "launcher's message names the signal)",
            2);
    }
    if (stopping_) break;
    std::string silent;
    for (std::size_t r = 1; r < n; ++r) {
      if (!conns_[r] || closed[r] || bye[r]) continue;
      const double quiet = now - last[r];
      if (quiet > stall_s_ && suspended == 0)
        fatal(Status::kError,
              describe_rank(static_cast<int>(r)) + " silent for " + fmt_s(quiet) + " during " +
                  phases[r] + " (stopped or hung; --stall-timeout " + fmt_s(stall_s_) + ")",
              2);
      if (quiet > 2) silent += "; " + describe_rank(static_cast<int>(r)) + " silent for " +
                               fmt_s(quiet) + " (stopped or hung) in " + phases[r];
    }
    // A launcher sends SIGTERM to every rank, also when another rank died: a
    // death seen within half a second is reported above instead, and a stop
    // this rank got too is told in its own words.
    if (!rank_stop.empty() && !stop_requested() && now - rank_stop_at > 0.5) fatal(Status::kError, rank_stop, 130);
    if (stop_requested()) {
      const bool term = stop_cause() == StopCause::kSignal && stop_signal() == SIGTERM;
      if (stop_seen == 0) {
        stop_seen = now;
        // mpirun kills its ranks 1 s after it passes SIGTERM on
        // (odls_base_sigkill_timeout): the report of the stop is on disk
        // before this rank waits to see whether another rank died instead.
        std::lock_guard<std::mutex> lk(fatal_mu_);
        if (term && !stopping_ && on_fatal_)
          on_fatal_(Status::kError, stop_reason() + " during " + phase(), stop_exit_code(), true);
      }
      if (!term || now - stop_seen > 0.5) {
        if (silent.empty() && n > 1) {
          silent = "; every rank is alive";
          if (n <= 8)
            for (std::size_t r = 1; r < n; ++r)
              if (conns_[r]) silent += "; rank " + std::to_string(r) + " in " + phases[r];
        }
        fatal_for_stop(silent);
      }
    }
  }
}

void Control::heartbeat_other() {
  bool root_gone = false, told_stop = false;
  double root_heard = steady_clock().now_s();
  while (!stopping_) {
    if (to_root_ && !root_gone) send_to_root(kBeat, phase());
    std::vector<pollfd> fds;
    if (to_root_ && !root_gone) fds.push_back({to_root_.get(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), static_cast<int>(kBeatInterval * 1000));
    if (stopping_) break;
    for (const auto& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t got = ::recv(to_root_.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (got > 0) root_heard = steady_clock().now_s();
      else if (got == 0 || (errno != EAGAIN && errno != EINTR)) root_gone = true;
    }
    if (stop_requested() && !told_stop) {
      // Rank 0 ends the run and names this rank; the stop handlers end this
      // process if it does not.
      told_stop = true;
      if (to_root_ && !root_gone) send_to_root(kStop, stop_reason());
    }
    const double quiet = steady_clock().now_s() - root_heard;
    if (to_root_ && !root_gone && quiet > stall_s_ + kOtherGrace) {
      say("rank " + std::to_string(rank_) + ": rank 0 silent for " + fmt_s(quiet) + " (stopped or hung); exiting");
      send_to_root(kRootSilent, fmt_s(quiet) + " during " + phase());
      end_process(2);
    }
    if (root_gone) {
      // The launcher normally tears the job down within a second.
      for (int i = 0; i < 30 && !stopping_; ++i) ::usleep(100000);
      if (stopping_) break;
      say("rank " + std::to_string(rank_) + ": rank 0 is gone (its control connection closed); exiting");
      end_process(told_stop ? stop_exit_code() : 2);
    }
    if (deadline_s_ > 0 && steady_clock().now_s() > deadline_s_ + kOtherGrace) {
      say("rank " + std::to_string(rank_) + ": --timeout passed and rank 0 did not end the run; exiting");
      end_process(124);
    }
  }
}

}  // namespace nodeprobe::allreduce
