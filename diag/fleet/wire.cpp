#include "wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "nodeprobe/clock.h"

namespace nodeprobe::fleet {

bool send_message(int fd, const Json& msg, double wait_s) {
  const std::string body = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (body.size() > kMaxFrame) return false;
  std::string frame(4, '\0');
  const auto n = static_cast<std::uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) frame[static_cast<std::size_t>(i)] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
  frame += body;
  const double until = steady_clock().now_s() + wait_s;
  std::size_t off = 0;
  while (off < frame.size()) {
    const double left = until - steady_clock().now_s();
    if (left <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
    if (p.revents & (POLLERR | POLLHUP)) return false;
    const ssize_t k = ::send(fd, frame.data() + off, frame.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k > 0) off += static_cast<std::size_t>(k);
    else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
  }
  return true;
}

bool FrameReader::pump(int fd, std::string* error) {
  char chunk[65536];
  for (;;) {
    const ssize_t k = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (k > 0) {
      buf_.append(chunk, static_cast<std::size_t>(k));
      if (buf_.size() > kMaxFrame + 4) {
        if (error) *error = "message too large";
        return false;
      }
      continue;
    }
    if (k == 0) {
      if (error) *error = "connection closed";
      return false;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
    if (error) *error = std::strerror(errno);
    return false;
  }
}

bool FrameReader::next(Json* out) {
  if (buf_.size() < 4) return false;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned char>(buf_[static_cast<std::size_t>(i)]);
  if (n > kMaxFrame) throw std::runtime_error("message of " + std::to_string(n) + " bytes is too large");
  if (buf_.size() < 4 + static_cast<std::size_t>(n)) return false;
  Json j = Json::parse(buf_.begin() + 4, buf_.begin() + 4 + n, nullptr, false);
  buf_.erase(0, 4 + static_cast<std::size_t>(n));
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error("a message that is not a JSON object");
  *out = std::move(j);
  return true;
}

std::string to_hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    const int hi = val(hex[i]), lo = val(hex[i + 1]);
    if (hi < 0 || lo < 0) throw std::runtime_error("not hex");
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

}  // namespace nodeprobe::fleet
