#pragma once
/// Small TCP helpers for the control channel and the mesh check.

#include <cstdint>
#include <string>
#include <vector>

#include "nodeprobe/fd.h"

namespace nodeprobe::allreduce {

/// An IPv4 address of a local interface.
struct LocalAddr {
  std::string iface;
  std::string ip;
  bool loopback = false;
  bool up = false;
};

/// IPv4 addresses of this host's interfaces (getifaddrs), in kernel order.
std::vector<LocalAddr> local_ipv4_addrs();

/// The interface NCCL would pick: `spec` (or NCCL_SOCKET_IFNAME when empty) as a
/// comma list of prefixes, "^" to exclude, "=" for exact names; without one the
/// first up interface that is not loopback, docker*, virbr*, veth* or br-*;
/// loopback when nothing else is up. Returns the interface and its address, or
/// an empty ip with `why` set.
LocalAddr pick_interface(const std::vector<LocalAddr>& addrs, const std::string& spec,
                         std::string* why);

/// A listening TCP socket on ip:port (port 0: any; ip "" or "0.0.0.0": all).
/// Throws ApiError. `bound_port` receives the port.
Fd tcp_listen(const std::string& ip, int port, int* bound_port);

/// Outcome of a connection attempt.
struct ConnectResult {
  Fd fd;                 ///< connected (blocking) socket when ok
  bool ok = false;
  double seconds = 0;    ///< time to connect or to fail
  std::string error;     ///< "timed out after 2 s", "Connection refused", ...
};

/// Connects to ip:port within `timeout_s`, from `source_ip` when not empty.
ConnectResult tcp_connect(const std::string& ip, int port, double timeout_s,
                          const std::string& source_ip = {});

/// Writes all of `len` bytes; false on error.
bool write_all(int fd, const void* buf, std::size_t len);
/// Reads exactly `len` bytes within `timeout_s`; false on error, EOF or timeout.
bool read_exact(int fd, void* buf, std::size_t len, double timeout_s);

}  // namespace nodeprobe::allreduce
