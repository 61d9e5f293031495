#include "control.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "nodeprobe/clock.h"

namespace nodeprobe::allreduce {
namespace {

constexpr std::uint32_t kMagic = 0x4E50434Bu;  // "NPCK"
enum MsgType : std::uint32_t { kHello = 1, kBeat = 2, kBye = 3, kError = 4 };
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

std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

void block_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

Control::Control(MPI_Comm comm, const HostMap& hosts) : comm_(comm), hosts_(hosts) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Control::~Control() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (signal_fd_ >= 0) ::close(signal_fd_);
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
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);

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
  if (on_fatal_) on_fatal_(s, reason, exit_code);
  say(reason);
  ::_exit(exit_code);
}

void Control::fail(const std::string& what) {
  if (rank_ == 0) {
    fatal(Status::kError, describe_rank(0) + ": " + what, 2);
    ::_exit(2);  // fatal returns only after stop(); the run cannot go on either way
  }
  say("rank " + std::to_string(rank_) + ": " + what);
  if (to_root_) send_to_root(kError, what);
  // Rank 0 writes the report and ends the job; this is the fallback.
  for (int i = 0; i < 100; ++i) ::usleep(100000);
  ::_exit(2);
}

void Control::stop() {
  {
    std::lock_guard<std::mutex> lk(fatal_mu_);
    stopping_ = true;
  }
  if (rank_ != 0 && to_root_) send_to_root(kBye, "done");
  if (thread_.joinable()) thread_.join();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void Control::monitor_rank0() {
  const std::size_t n = static_cast<std::size_t>(size_);
  std::vector<double> last(n, steady_clock().now_s());
  std::vector<std::string> phases(n, "starting"), buffers(n);
  std::vector<bool> bye(n, false), closed(n, false);
  int pending_signal = 0;
  double signal_at = 0, last_beat_out = 0;
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
    if (signal_fd_ >= 0) { fds.push_back({signal_fd_, POLLIN, 0}); who.push_back(-1); }
    for (std::size_t r = 1; r < n; ++r)
      if (conns_[r] && !closed[r]) { fds.push_back({conns_[r].get(), POLLIN, 0}); who.push_back(static_cast<int>(r)); }
    ::poll(fds.data(), fds.size(), 100);
    const double now = steady_clock().now_s();
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (who[i] < 0) {
        signalfd_siginfo si{};
        if (::read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si) && !pending_signal) {
          pending_signal = static_cast<int>(si.ssi_signo);
          signal_at = now;
        }
        continue;
      }
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
          if (m.type == kBeat) phases[r] = m.text;
          if (m.type == kBye) bye[r] = true;
          if (m.type == kError) fatal(Status::kError, describe_rank(static_cast<int>(r)) + ": " + m.text, 2);
        }
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      closed[r] = true;
      if (!bye[r])
        fatal(Status::kError,
              describe_rank(static_cast<int>(r)) + " died during " + phases[r] +
                  ": its control connection closed without a goodbye (killed or crashed; the "
                  "launcher's message names the signal)",
              2);
    }
    if (stopping_) break;
    if (pending_signal && now - signal_at > 0.5) {
      // The launcher sends SIGTERM when another rank dies; a death seen in the
      // last half second was reported above instead.
      fatal(Status::kError,
            std::string("interrupted by ") + (pending_signal == SIGINT ? "SIGINT" : "SIGTERM") +
                " during " + phase(),
            pending_signal == SIGINT ? 130 : 2);
    }
    std::string silent;
    for (std::size_t r = 1; r < n; ++r) {
      if (!conns_[r] || closed[r] || bye[r]) continue;
      const double quiet = now - last[r];
      if (quiet > stall_s_)
        fatal(Status::kError,
              describe_rank(static_cast<int>(r)) + " silent for " + fmt_s(quiet) + " during " +
                  phases[r] + " (stopped or hung; --stall-timeout " + fmt_s(stall_s_) + ")",
              2);
      if (quiet > 2) silent += "; " + describe_rank(static_cast<int>(r)) + " silent for " +
                               fmt_s(quiet) + " (stopped or hung) in " + phases[r];
    }
    if (deadline_s_ > 0 && now >= deadline_s_) {
      std::string why = "deadline of --timeout passed during " + phase();
      if (!silent.empty()) {
        why += silent;
      } else if (n > 1) {
        why += "; every rank is alive";
        if (n <= 8)
          for (std::size_t r = 1; r < n; ++r)
            if (conns_[r]) why += "; rank " + std::to_string(r) + " in " + phases[r];
      }
      fatal(Status::kTimeout, why, 124);
    }
  }
}

void Control::heartbeat_other() {
  bool root_gone = false;
  double root_heard = steady_clock().now_s();
  while (!stopping_) {
    if (to_root_ && !root_gone) send_to_root(kBeat, phase());
    std::vector<pollfd> fds;
    if (signal_fd_ >= 0) fds.push_back({signal_fd_, POLLIN, 0});
    if (to_root_ && !root_gone) fds.push_back({to_root_.get(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), static_cast<int>(kBeatInterval * 1000));
    if (stopping_) break;
    for (const auto& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (p.fd == signal_fd_) {
        signalfd_siginfo si{};
        if (::read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
          ::_exit(si.ssi_signo == SIGINT ? 130 : 143);
      } else {
        char buf[4096];
        const ssize_t got = ::recv(to_root_.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (got > 0) root_heard = steady_clock().now_s();
        else if (got == 0 || (errno != EAGAIN && errno != EINTR)) root_gone = true;
      }
    }
    if (to_root_ && !root_gone && steady_clock().now_s() - root_heard > stall_s_ + kOtherGrace) {
      say("rank " + std::to_string(rank_) + ": rank 0 silent for " + fmt_s(steady_clock().now_s() - root_heard) +
          " (stopped or hung); exiting");
      ::_exit(2);
    }
    if (root_gone) {
      // The launcher normally tears the job down within a second.
      for (int i = 0; i < 30 && !stopping_; ++i) ::usleep(100000);
      if (stopping_) break;
      say("rank " + std::to_string(rank_) + ": rank 0 is gone (its control connection closed); exiting");
      ::_exit(2);
    }
    if (deadline_s_ > 0 && steady_clock().now_s() > deadline_s_ + kOtherGrace) {
      say("rank " + std::to_string(rank_) + ": --timeout passed and rank 0 did not end the run; exiting");
      ::_exit(124);
    }
  }
}

}  // namespace nodeprobe::allreduce
