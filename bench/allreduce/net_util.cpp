#include "net_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "nodeprobe/clock.h"
#include "nodeprobe/error.h"

namespace nodeprobe::allreduce {
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

sockaddr_in make_addr(const std::string& ip, int port, bool* ok) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  *ok = ip.empty() ? (a.sin_addr.s_addr = htonl(INADDR_ANY), true)
                   : ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr) == 1;
  return a;
}

int ms_left(double deadline) {
  const double left = deadline - steady_clock().now_s();
  return left <= 0 ? 0 : static_cast<int>(std::ceil(left * 1000));
}

}  // namespace

std::vector<LocalAddr> local_ipv4_addrs() {
  std::vector<LocalAddr> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN];
    const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (!::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf)) continue;
    LocalAddr a;
    a.iface = i->ifa_name;
    a.ip = buf;
    a.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    a.up = (i->ifa_flags & IFF_UP) != 0 && (i->ifa_flags & IFF_RUNNING) != 0;
    out.push_back(a);
  }
  ::freeifaddrs(list);
  return out;
}

LocalAddr pick_interface(const std::vector<LocalAddr>& addrs, const std::string& spec_in,
                         std::string* why) {
  std::string spec = spec_in;
  if (spec.empty()) {
    const char* env = std::getenv("NCCL_SOCKET_IFNAME");
    if (env) spec = env;
  }
  if (!spec.empty()) {
    bool exclude = false, exact = false;
    std::string list = spec;
    if (starts_with(list, "^")) { exclude = true; list = list.substr(1); }
    if (starts_with(list, "=")) { exact = true; list = list.substr(1); }
    std::vector<std::string> pats;
    std::stringstream ss(list);
    for (std::string p; std::getline(ss, p, ',');)
      if (!p.empty()) pats.push_back(p);
    for (const auto& a : addrs) {
      bool match = false;
      for (const auto& p : pats) match = match || (exact ? a.iface == p : starts_with(a.iface, p));
      if (match != exclude && (!exclude || !a.loopback)) return a;
    }
    if (why) *why = "no IPv4 interface matches '" + spec + "'";
    return {};
  }
  for (const auto& a : addrs) {
    if (a.loopback || !a.up) continue;
    if (starts_with(a.iface, "docker") || starts_with(a.iface, "virbr") ||
        starts_with(a.iface, "veth") || starts_with(a.iface, "br-"))
      continue;
    return a;
  }
  for (const auto& a : addrs)
    if (a.loopback) return a;
  if (why) *why = "no IPv4 interface is up";
  return {};
}

Fd tcp_listen(const std::string& ip, int port, int* bound_port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  NP_CHECK_ERRNO(fd.get());
  int one = 1;
  NP_CHECK_ERRNO(::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
  bool ok = false;
  sockaddr_in a = make_addr(ip == "0.0.0.0" ? "" : ip, port, &ok);
  if (!ok) throw InputError("not an IPv4 address: " + ip);
  NP_CHECK_ERRNO(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a));
  NP_CHECK_ERRNO(::listen(fd.get(), 1024));
  socklen_t len = sizeof a;
  NP_CHECK_ERRNO(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len));
  if (bound_port) *bound_port = ntohs(a.sin_port);
  return fd;
}

ConnectResult tcp_connect(const std::string& ip, int port, double timeout_s,
                          const std::string& source_ip) {
  ConnectResult r;
  const double t0 = steady_clock().now_s();
  auto fail = [&](std::string e) {
    r.error = std::move(e);
    r.seconds = steady_clock().now_s() - t0;
    r.fd = Fd();
    return std::move(r);
  };
  bool ok = false;
  sockaddr_in dst = make_addr(ip, port, &ok);
  if (!ok) return fail("not an IPv4 address: " + ip);
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return fail(std::strerror(errno));
  if (!source_ip.empty()) {
    sockaddr_in src = make_addr(source_ip, 0, &ok);
    if (!ok || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&src), sizeof src) != 0)
      return fail("cannot bind to source " + source_ip + ": " + std::strerror(errno));
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    if (errno != EINPROGRESS) return fail(std::strerror(errno));
    pollfd p{fd.get(), POLLOUT, 0};
    const double deadline = t0 + timeout_s;
    for (;;) {
      const int n = ::poll(&p, 1, ms_left(deadline));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail(std::strerror(errno));
      if (n == 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "timed out after %g s", timeout_s);
        return fail(buf);
      }
      break;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return fail(std::strerror(err));
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  r.ok = true;
  r.seconds = steady_clock().now_s() - t0;
  r.fd = std::move(fd);
  return r;
}

bool write_all(int fd, const void* buf, std::size_t len) {
  const char* p = static_cast<const char*>(buf);
  while (len > 0) {
    const ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_exact(int fd, void* buf, std::size_t len, double timeout_s) {
  char* p = static_cast<char*>(buf);
  const double deadline = steady_clock().now_s() + timeout_s;
  while (len > 0) {
    pollfd pf{fd, POLLIN, 0};
    const int n = ::poll(&pf, 1, ms_left(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    const ssize_t got = ::recv(fd, p, len, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    len -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace nodeprobe::allreduce
