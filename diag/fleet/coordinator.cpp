#include "coordinator.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <set>

#include "nodeprobe/clock.h"

namespace nodeprobe::fleet {
namespace {

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

Coordinator::Coordinator(int nranks, double stall_s, const volatile std::sig_atomic_t* cancel)
    : n_(nranks), stall_s_(stall_s), cancel_(cancel), peers_(static_cast<std::size_t>(nranks)) {}

int Coordinator::listen(const std::string& ip) {
  int port = 0;
  listen_fd_ = allreduce::tcp_listen(ip, 0, &port);
  return port;
}

void Coordinator::accept_all(double timeout_s) {
  Clock& clock = steady_clock();
  const double until = clock.now_s() + timeout_s;
  int got = 0;
  std::vector<std::pair<Fd, FrameReader>> pending;
  while (got < n_ && clock.now_s() < until && !cancelled()) {
    std::vector<pollfd> fds{{listen_fd_.get(), POLLIN, 0}};
    for (auto& p : pending) fds.push_back({p.first.get(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), 100);
    // Only the connections that were polled: one accepted below has no
    // entry in fds until the next round (found by ASan: fds[i + 1] past the end).
    const std::size_t polled = fds.size() - 1;
    if (fds[0].revents & POLLIN) {
      Fd c(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (c) pending.emplace_back(std::move(c), FrameReader());
    }
    for (std::size_t i = 0; i < polled; ++i) {
      if (!pending[i].first || !(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      std::string err;
      const bool open = pending[i].second.pump(pending[i].first.get(), &err);
      Json m;
      bool ok = false;
      try {
        ok = pending[i].second.next(&m);
      } catch (const std::exception&) {
        pending[i].first = Fd();
        continue;
      }
      if (ok && m.value("t", "") == "hello") {
        const int r = m.value("rank", -1);
        if (r >= 0 && r < n_ && !peers_[static_cast<std::size_t>(r)].fd) {
          Peer& p = peers_[static_cast<std::size_t>(r)];
          p.fd = std::move(pending[i].first);
          p.reader = std::move(pending[i].second);
          p.hello = m;
          p.last_heard = clock.now_s();
          ++got;
        }
      } else if (!open) {
        pending[i].first = Fd();
      }
    }
  }
  for (int r = 0; r < n_; ++r)
    if (!peers_[static_cast<std::size_t>(r)].fd)
      lost_[r] = {Status::kTimeout, "startup",
                  "did not connect to rank 0 within " + secs(timeout_s) + " (stopped, or rank 0's address unreachable)"};
  listen_fd_ = Fd();
}

bool Coordinator::alive(int rank) const { return !lost_.count(rank); }

std::vector<int> Coordinator::alive_ranks() const {
  std::vector<int> v;
  for (int r = 0; r < n_; ++r)
    if (alive(r)) v.push_back(r);
  return v;
}

void Coordinator::lose(int rank, Status s, const std::string& phase, const std::string& reason) {
  if (lost_.count(rank)) return;
  lost_[rank] = {s, phase, reason};
  peers_[static_cast<std::size_t>(rank)].fd = Fd();
}

long Coordinator::send(int rank, Json cmd) {
  if (!alive(rank)) return -1;
  const long id = next_id_++;
  cmd["t"] = "cmd";
  cmd["id"] = id;
  Peer& p = peers_[static_cast<std::size_t>(rank)];
  p.pending = cmd.value("op", std::string("?"));
  return deliver(rank, cmd, 5, cmd.value("phase", std::string("?")), "a command") ? id : -1;
}

bool Coordinator::deliver(int rank, const Json& msg, double wait_s, const std::string& phase, const std::string& what) {
  if (send_message(peers_[static_cast<std::size_t>(rank)].fd.get(), msg, wait_s)) return true;
  pump(rank, phase);  // a connection that closed is named as such
  if (alive(rank))
    lose(rank, Status::kTimeout, phase,
         "did not take " + what + " for " + secs(wait_s) + " during " + phase + " (stopped or hung)");
  return false;
}

bool Coordinator::notify(int rank, const Json& msg, const std::string& phase) {
  return alive(rank) && deliver(rank, msg, 1, phase, "a cancel");
}

void Coordinator::pump(int rank, const std::string& phase) {
  Peer& p = peers_[static_cast<std::size_t>(rank)];
  std::string err;
  const bool open = p.reader.pump(p.fd.get(), &err);
  Json m;
  try {
    while (p.reader.next(&m)) {
      p.last_heard = steady_clock().now_s();
      const std::string t = m.value("t", "");
      if (t == "beat") p.doing = m.value("doing", p.doing);
      else if (t == "reply") {
        p.pending.clear();
        p.replies.push_back(std::move(m));
      }
    }
  } catch (const std::exception& e) {
    lose(rank, Status::kError, phase, std::string("sent a malformed message: ") + e.what());
    return;
  }
  if (!open)
    lose(rank, Status::kError, phase,
         "its connection closed without a goodbye during " + phase + " (" + p.doing +
             "): killed or crashed; the launcher's message names the signal");
}

std::map<int, Json> Coordinator::wait(const std::map<int, long>& want, double deadline_s, const std::string& phase,
                                      const std::function<void(int)>& on_lost) {
  Clock& clock = steady_clock();
  std::map<int, Json> got;
  std::set<int> told;  // on_lost once per rank
  for (;;) {
    // Replies that arrived (also during an earlier wait).
    for (const auto& [r, id] : want) {
      if (got.count(r) || id < 0) continue;
      auto& replies = peers_[static_cast<std::size_t>(r)].replies;
      for (auto it = replies.begin(); it != replies.end(); ++it)
        if (it->value("id", -1L) == id) {
          got[r] = std::move(*it);
          replies.erase(it);
          break;
        }
    }
    bool done = true;
    for (const auto& [r, id] : want) done = done && (got.count(r) || !alive(r) || id < 0);
    const double now = clock.now_s();
    if (done || now >= deadline_s || cancelled()) return got;
    if (now - last_beat_out_ >= 1.0) {
      // Lets the ranks tell a stopped rank 0 from a busy one.
      last_beat_out_ = now;
      for (int r = 0; r < n_; ++r)
        if (alive(r)) deliver(r, Json{{"t", "beat"}}, 0.2, phase, "a heartbeat");
    }
    std::vector<pollfd> fds;
    std::vector<int> who;
    for (int r = 0; r < n_; ++r)
      if (alive(r)) {
        fds.push_back({peers_[static_cast<std::size_t>(r)].fd.get(), POLLIN, 0});
        who.push_back(r);
      }
    ::poll(fds.data(), fds.size(), 100);
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) pump(who[i], phase);
    const double after = clock.now_s();
    for (int r = 0; r < n_; ++r) {
      if (!alive(r)) continue;
      const Peer& p = peers_[static_cast<std::size_t>(r)];
      if (after - p.last_heard > stall_s_)
        lose(r, Status::kTimeout, phase,
             "silent for " + secs(after - p.last_heard) + " during " + phase + " (" +
                 (p.pending.empty() ? p.doing : p.pending + " unanswered") + "): stopped or hung; --stall-timeout " +
                 secs(stall_s_));
    }
    for (const auto& kv : want)
      if (!alive(kv.first) && on_lost && told.insert(kv.first).second) on_lost(kv.first);
  }
}

void Coordinator::goodbye(bool finalize) {
  for (int r = 0; r < n_; ++r)
    if (alive(r)) send_message(peers_[static_cast<std::size_t>(r)].fd.get(), Json{{"t", "bye"}, {"finalize", finalize}}, 1);
}

}  // namespace nodeprobe::fleet
