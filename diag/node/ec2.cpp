#include "ec2.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "nodeprobe/fd.h"

namespace nodeprobe::diag {
namespace {

using Clock = std::chrono::steady_clock;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

/// One HTTP/1.1 request on a fresh connection; returns the status code and body.
bool http_request(const ImdsEndpoint& ep, const std::string& request, Clock::time_point deadline,
                  int* status, std::string* body, std::string* error) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(ep.port));
  if (::inet_pton(AF_INET, ep.ipv4.c_str(), &addr.sin_addr) != 1) {
    *error = "not a numeric IPv4 address: " + ep.ipv4;
    return false;
  }
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    *error = std::string("connect: ") + std::strerror(errno);
    return false;
  }
  pollfd p{fd.get(), POLLOUT, 0};
  if (::poll(&p, 1, ms_left(deadline)) <= 0) {
    *error = "connect timed out";
    return false;
  }
  int soerr = 0;
  socklen_t len = sizeof soerr;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soerr, &len);
  if (soerr != 0) {
    *error = std::string("connect: ") + std::strerror(soerr);
    return false;
  }
  std::size_t sent = 0;
  while (sent < request.size()) {
    p = {fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0) {
      *error = "send timed out";
      return false;
    }
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      *error = std::string("send: ") + std::strerror(errno);
      return false;
    }
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  std::string resp;
  std::size_t want = std::string::npos;  // total bytes once headers say Content-Length
  while (resp.size() < want) {
    p = {fd.get(), POLLIN, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0) {
      *error = "response timed out";
      return false;
    }
    char buf[4096];
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) {
      *error = std::string("recv: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    resp.append(buf, static_cast<std::size_t>(n));
    if (resp.size() > 65536) {
      *error = "response too large";
      return false;
    }
    const auto hdr_end = resp.find("\r\n\r\n");
    if (want == std::string::npos && hdr_end != std::string::npos) {
      const std::string headers = lower(resp.substr(0, hdr_end));
      const auto cl = headers.find("\r\ncontent-length:");
      if (cl != std::string::npos) want = hdr_end + 4 + std::strtoul(headers.c_str() + cl + 17, nullptr, 10);
    }
  }
  const auto hdr_end = resp.find("\r\n\r\n");
  if (resp.rfind("HTTP/1.", 0) != 0 || hdr_end == std::string::npos || resp.size() < 12) {
    *error = "not an HTTP response";
    return false;
  }
  *status = std::atoi(resp.c_str() + 9);
  *body = resp.substr(hdr_end + 4);
  if (want != std::string::npos && body->size() > want - hdr_end - 4) body->resize(want - hdr_end - 4);
  return true;
}

}  // namespace

bool dmi_says_ec2(const FsRoot& fs) {
  const auto vendor = fs.read_line("/sys/devices/virtual/dmi/id/sys_vendor");
  if (vendor && vendor->find("Amazon EC2") != std::string::npos) return true;
  const auto bios = fs.read_line("/sys/devices/virtual/dmi/id/bios_version");
  return bios && lower(*bios).find("amazon") != std::string::npos;
}

bool looks_like_instance_type(const std::string& s) {
  const auto dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= s.size() || s.size() > 40) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '.' || c == '-';
  });
}

std::string dmi_type(const FsRoot& fs) {
  const auto vendor = fs.read_line("/sys/devices/virtual/dmi/id/sys_vendor");
  if (!vendor || vendor->find("Amazon EC2") == std::string::npos) return {};
  const auto product = fs.read_line("/sys/devices/virtual/dmi/id/product_name");
  return product && looks_like_instance_type(*product) ? *product : std::string();
}

bool imds_disabled_by_env() {
  const char* v = std::getenv("NODEPROBE_NO_IMDS");
  return v && *v && std::string(v) != "0";
}

std::optional<std::string> imds_instance_type(const ImdsEndpoint& ep, double timeout_s,
                                              std::string* error) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  const std::string host = "Host: " + ep.ipv4 + "\r\n";
  int status = 0;
  std::string token, body;
  if (!http_request(ep,
                    "PUT /latest/api/token HTTP/1.1\r\n" + host +
                        "X-aws-ec2-metadata-token-ttl-seconds: 60\r\nContent-Length: 0\r\n"
                        "Connection: close\r\n\r\n",
                    deadline, &status, &token, error))
    return std::nullopt;
  if (status != 200 || token.empty() || token.find_first_of("\r\n") != std::string::npos) {
    *error = "token request answered HTTP " + std::to_string(status);
    return std::nullopt;
  }
  if (!http_request(ep,
                    "GET /latest/meta-data/instance-type HTTP/1.1\r\n" + host +
                        "X-aws-ec2-metadata-token: " + token + "\r\nConnection: close\r\n\r\n",
                    deadline, &status, &body, error))
    return std::nullopt;
  if (status != 200) {
    *error = "instance-type request answered HTTP " + std::to_string(status);
    return std::nullopt;
  }
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.pop_back();
  if (!looks_like_instance_type(body)) {
    *error = "unexpected instance type text";
    return std::nullopt;
  }
  return body;
}

InstanceIdentity detect_instance(const FsRoot& fs, const std::string& expect, bool imds_allowed,
                                 const ImdsQuery& imds) {
  InstanceIdentity id;
  id.on_ec2 = dmi_says_ec2(fs);
  if (!expect.empty()) {
    id.type = expect;
    id.source = "--expect";
    return id;
  }
  if (!id.on_ec2) {
    id.note = "not on EC2 (DMI vendor is not Amazon EC2); pass --expect TYPE to judge against a type";
    return id;
  }
  id.type = dmi_type(fs);
  if (!id.type.empty()) {
    id.source = "dmi";
    return id;
  }
  if (!imds_allowed || !imds) {
    id.note = "on EC2 but DMI does not name the type and the metadata service was not asked";
    return id;
  }
  std::string err;
  if (auto t = imds(&err)) {
    id.type = *t;
    id.source = "imds";
  } else {
    id.note = "instance metadata service: " + err;
  }
  return id;
}

}  // namespace nodeprobe::diag
