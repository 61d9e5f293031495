#pragma once
/// The fleet's own wire between rank 0 (the coordinator) and every rank:
/// length-prefixed JSON messages over TCP, outside MPI, so a stopped or dead
/// rank is noticed by its silence and never blocks a collective.

#include <cstdint>
#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::fleet {

/// Largest message accepted (a node's full accept report fits many times).
inline constexpr std::size_t kMaxFrame = 64u << 20;

/// Sends one message, waiting at most `wait_s` for room in the socket buffer.
/// False when the peer is gone or does not drain its socket in time (the
/// stream is then unusable).
bool send_message(int fd, const Json& msg, double wait_s = 5);

/// Collects bytes from a non-blocking socket and cuts them into messages.
class FrameReader {
 public:
  /// Reads what is there now (MSG_DONTWAIT). False when the peer closed the
  /// connection or it failed; `error` says how.
  bool pump(int fd, std::string* error);
  /// The next complete message, if any. Throws std::runtime_error on a frame
  /// that is too large or not JSON (the peer speaks something else).
  bool next(Json* out);

 private:
  std::string buf_;
};

/// Lower-case hex of bytes and back (endpoint names are binary).
std::string to_hex(const std::string& bytes);
std::string from_hex(const std::string& hex);

}  // namespace nodeprobe::fleet
