#include "mesh.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <sstream>
#include <thread>

#include "net_util.h"
#include "nodeprobe/clock.h"

namespace nodeprobe::allreduce {

MeshEchoServer::~MeshEchoServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void MeshEchoServer::start() { thread_ = std::thread([this] { loop(); }); }

void MeshEchoServer::loop() {
  std::vector<Fd> conns;
  while (!stop_) {
    std::vector<pollfd> fds;
    for (const auto& l : listeners_) fds.push_back({l.get(), POLLIN, 0});
    for (const auto& c : conns) fds.push_back({c.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (i < listeners_.size()) {
        const int c = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) conns.emplace_back(c);
        continue;
      }
      char buf[256];
      const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        write_all(fds[i].fd, buf, static_cast<std::size_t>(n));
      } else if (n == 0) {
        for (auto& c : conns)
          if (c.get() == fds[i].fd) c = Fd();
      }
    }
    std::vector<Fd> live;
    for (auto& c : conns)
      if (c) live.push_back(std::move(c));
    conns.swap(live);
  }
}

namespace {

std::string host_of(const HostMap& h, int r) {
  return r >= 0 && static_cast<std::size_t>(r) < h.rank_host.size() ? h.rank_host[static_cast<std::size_t>(r)] : "?";
}

}  // namespace

// Connects, then times a few 8-byte round trips.
MeshLink probe_mesh_link(int from, int to, const std::string& ip, int port, const std::string& source,
                    double timeout_s) {
  MeshLink l;
  l.from = from;
  l.to = to;
  l.target = ip + ":" + std::to_string(port);
  if (port <= 0) {
    l.error = "peer could not listen";
    return l;
  }
  ConnectResult c = tcp_connect(ip, port, timeout_s, source);
  l.connect_us = c.seconds * 1e6;
  if (!c.ok) {
    l.error = c.error;
    return l;
  }
  double best = -1;
  for (int i = 0; i < 3; ++i) {
    const char ping[8] = {'n', 'p', 'm', 'e', 's', 'h', '0', static_cast<char>('0' + i)};
    char pong[8];
    const double t0 = steady_clock().now_s();
    if (!write_all(c.fd.get(), ping, sizeof ping) || !read_exact(c.fd.get(), pong, sizeof pong, timeout_s)) {
      l.error = "connected, but no echo within " + std::to_string(timeout_s) + " s";
      return l;
    }
    const double rtt = steady_clock().now_s() - t0;
    if (best < 0 || rtt < best) best = rtt;
  }
  l.ok = true;
  l.rtt_us = best * 1e6;
  return l;
}

Json mesh_link_json(const MeshLink& l) {
  return Json{{"from", l.from}, {"to", l.to}, {"ok", l.ok}, {"connect_us", l.connect_us},
              {"rtt_us", l.rtt_us}, {"error", l.error}, {"target", l.target}};
}

MeshLink mesh_link_from_json(const Json& j) {
  MeshLink l;
  l.from = j.value("from", 0);
  l.to = j.value("to", 0);
  l.ok = j.value("ok", false);
  l.connect_us = j.value("connect_us", 0.0);
  l.rtt_us = j.value("rtt_us", 0.0);
  l.error = j.value("error", "");
  l.target = j.value("target", "");
  return l;
}

std::vector<MeshLink> probe_mesh_targets(int from, const std::vector<MeshTarget>& targets, const std::string& source,
                                         double timeout_s) {
  // Each peer in its own thread so N unreachable peers cost one timeout, not N.
  std::vector<MeshLink> out(targets.size());
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    workers.emplace_back([&, i] {
      const MeshTarget& t = targets[i];
      out[i] = probe_mesh_link(from, t.rank, t.ip, t.port, source, timeout_s);
    });
    if (workers.size() >= 64) {
      for (auto& w : workers) w.join();
      workers.clear();
    }
  }
  for (auto& w : workers) w.join();
  return out;
}

int MeshResult::unreachable() const {
  int n = 0;
  for (const auto& l : links) n += l.ok ? 0 : 1;
  for (const auto& l : rendezvous) n += l.ok ? 0 : 1;
  return n;
}

MeshResult run_mesh(MPI_Comm comm, const MeshOptions& opt, int local_rank) {
  int rank = 0, n = 1;
  NP_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  NP_CHECK_MPI(MPI_Comm_size(comm, &n));
  MeshEchoServer server;
  int port = -1;
  std::string listen_error;
  try {
    server.add_listener(tcp_listen(opt.ip, opt.port > 0 ? opt.port + local_rank : 0, &port));
  } catch (const std::exception& e) {
    port = -1;
    listen_error = e.what();
  }
  if (rank == 0 && opt.rendezvous_port > 0) {
    // Stand in for the training job's rendezvous listener; when the port is
    // taken something already listens there and the connects test that.
    try {
      int p = 0;
      server.add_listener(tcp_listen("", opt.rendezvous_port, &p));
    } catch (const std::exception&) {
    }
  }
  server.start();

  MeshResult m;
  const auto where = allgather_strings(comm, opt.ip + " " + std::to_string(port) + " " + listen_error);
  for (const auto& w : where) {
    std::istringstream in(w);
    std::string ip;
    int p = -1;
    in >> ip >> p;
    std::string err;
    std::getline(in, err);
    m.ip.push_back(ip);
    m.port.push_back(p);
    m.listen_error.push_back(err.empty() ? err : err.substr(1));
  }
  NP_CHECK_MPI(MPI_Barrier(comm));

  std::vector<MeshTarget> targets;
  for (int j = 0; j < n; ++j)
    if (j != rank) targets.push_back({j, m.ip[static_cast<std::size_t>(j)], m.port[static_cast<std::size_t>(j)]});
  const std::vector<MeshLink> mine = probe_mesh_targets(rank, targets, opt.ip, opt.timeout_s);
  Json out = Json::array();
  for (const auto& l : mine) out.push_back(mesh_link_json(l));
  if (opt.rendezvous_port > 0) {
    MeshLink r = probe_mesh_link(rank, -1, m.ip[0], opt.rendezvous_port, opt.ip, opt.timeout_s);
    out.push_back(mesh_link_json(r));
  }
  const auto all = allgather_strings(comm, out.dump());
  NP_CHECK_MPI(MPI_Barrier(comm));  // nobody still connects when the servers stop
  if (rank == 0) {
    for (const auto& s : all)
      for (const auto& j : Json::parse(s)) {
        MeshLink l = mesh_link_from_json(j);
        (l.to < 0 ? m.rendezvous : m.links).push_back(l);
      }
  }
  return m;
}

Check mesh_check(const MeshResult& m, const HostMap& hosts) {
  Check c;
  c.id = "mesh.reachability";
  const std::size_t pairs = m.links.size() + m.rendezvous.size();
  c.expected = "every rank reaches every other rank over TCP on the chosen interface";
  std::string failed;
  int bad = 0;
  for (const auto* list : {&m.links, &m.rendezvous}) {
    for (const auto& l : *list) {
      if (l.ok) continue;
      ++bad;
      if (bad <= 8) {
        const std::string to = l.to < 0 ? host_of(hosts, 0) + " rendezvous port" : host_of(hosts, l.to);
        failed += (failed.empty() ? "" : "; ") + host_of(hosts, l.from) + " (rank " + std::to_string(l.from) +
                  ") -> " + to + " (" + l.target + "): " + l.error;
      }
    }
  }
  if (bad == 0) {
    c.status = Status::kPass;
    c.observed = std::to_string(pairs) + " of " + std::to_string(pairs) + " connections reachable";
    return c;
  }
  c.status = Status::kFail;
  c.finding = "net.unreachable";
  c.observed = std::to_string(bad) + " of " + std::to_string(pairs) + " connections failed: " + failed +
               (bad > 8 ? "; ..." : "");
  c.fix = "Allow all traffic between the members (security group: an inbound rule from the group "
          "itself, all protocols and ports); check host firewalls (iptables/nftables) and that the "
          "interface is up; test a pair with `nc -vz HOST PORT`";
  return c;
}

Json mesh_json(const MeshResult& m, const HostMap& hosts) {
  Json j;
  Json ranks = Json::array();
  for (std::size_t r = 0; r < m.ip.size(); ++r)
    ranks.push_back({{"rank", r}, {"host", host_of(hosts, static_cast<int>(r))}, {"ip", m.ip[r]},
                     {"port", m.port[r]}, {"listen_error", m.listen_error[r]}});
  j["ranks"] = ranks;
  const std::size_t n = m.ip.size();
  Json matrix = Json::array();
  for (std::size_t a = 0; a < n; ++a) {
    Json row = Json::array();
    for (std::size_t b = 0; b < n; ++b) row.push_back(nullptr);
    matrix.push_back(row);
  }
  Json failures = Json::array();
  for (const auto& l : m.links) {
    if (l.ok) matrix[static_cast<std::size_t>(l.from)][static_cast<std::size_t>(l.to)] = l.rtt_us;
    else failures.push_back(mesh_link_json(l));
  }
  for (const auto& l : m.rendezvous)
    if (!l.ok) failures.push_back(mesh_link_json(l));
  j["rtt_us"] = matrix;
  j["rendezvous"] = Json::array();
  for (const auto& l : m.rendezvous) j["rendezvous"].push_back(mesh_link_json(l));
  j["failures"] = failures;
  return j;
}

std::string mesh_text(const MeshResult& m, const HostMap& hosts) {
  std::string out = "# mesh: TCP connect + 8-byte round trip (us) from row rank to column rank; X = unreachable\n";
  const std::size_t n = m.ip.size();
  if (n <= 16) {
    std::vector<std::vector<std::string>> cell(n, std::vector<std::string>(n, "-"));
    for (const auto& l : m.links) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", l.rtt_us);
      cell[static_cast<std::size_t>(l.from)][static_cast<std::size_t>(l.to)] = l.ok ? buf : "X";
    }
    char line[64];
    std::snprintf(line, sizeof line, "#%6s %-16s", "rank", "host");
    out += line;
    for (std::size_t b = 0; b < n; ++b) {
      std::snprintf(line, sizeof line, " %7zu", b);
      out += line;
    }
    out += "\n";
    for (std::size_t a = 0; a < n; ++a) {
      std::snprintf(line, sizeof line, "#%6zu %-16s", a, host_of(hosts, static_cast<int>(a)).substr(0, 16).c_str());
      out += line;
      for (std::size_t b = 0; b < n; ++b) {
        std::snprintf(line, sizeof line, " %7s", cell[a][b].c_str());
        out += line;
      }
      out += "\n";
    }
  }
  for (const auto* list : {&m.links, &m.rendezvous})
    for (const auto& l : *list)
      if (!l.ok)
        out += "# unreachable: " + host_of(hosts, l.from) + " (rank " + std::to_string(l.from) + ") -> " +
               (l.to < 0 ? host_of(hosts, 0) + " rendezvous" : host_of(hosts, l.to) + " (rank " + std::to_string(l.to) + ")") +
               " at " + l.target + ": " + l.error + "\n";
  return out;
}

}  // namespace nodeprobe::allreduce
