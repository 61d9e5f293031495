// The fleet wire: framing over a real socket pair, malformed input, hex.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "wire.h"

namespace nodeprobe::fleet {
namespace {

TEST(Wire, MessagesCrossASocketWholeAndInOrder) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  Json big{{"t", "reply"}, {"report", std::string(300000, 'r')}};
  // The big one does not fit the socket buffer: it is sent while the reader drains.
  bool sent = false;
  std::thread writer([&] { sent = send_message(sv[0], {{"t", "beat"}, {"doing", "local"}}) && send_message(sv[0], big); });
  FrameReader reader;
  std::vector<Json> got;
  std::string err;
  for (int i = 0; i < 1000 && got.size() < 2; ++i) {
    ASSERT_TRUE(reader.pump(sv[1], &err)) << err;
    ::usleep(1000);
    Json m;
    while (reader.next(&m)) got.push_back(m);
  }
  writer.join();
  EXPECT_TRUE(sent);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["doing"], "local");
  EXPECT_EQ(got[1]["report"].get<std::string>().size(), 300000u);
  ::close(sv[0]);
  EXPECT_FALSE(reader.pump(sv[1], &err));
  EXPECT_EQ(err, "connection closed");
  ::close(sv[1]);
}

TEST(Wire, ForeignBytesAreRefused) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const char junk[] = "\x00\x00\x00\x05hello";
  ASSERT_EQ(::write(sv[0], junk, 9), 9);
  const char huge[] = "\x7f\xff\xff\xff";
  FrameReader reader;
  std::string err;
  ASSERT_TRUE(reader.pump(sv[1], &err));
  Json m;
  EXPECT_THROW(reader.next(&m), std::runtime_error);  // "hello" is not a JSON object
  ASSERT_EQ(::write(sv[0], huge, 4), 4);
  FrameReader r2;
  ASSERT_TRUE(r2.pump(sv[1], &err));
  EXPECT_THROW(r2.next(&m), std::runtime_error);  // larger than any message
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(Wire, HexRoundTrip) {
  const std::string bytes("\x00\x01\xfe\xff", 4);
  EXPECT_EQ(to_hex(bytes), "0001feff");
  EXPECT_EQ(from_hex("0001feff"), bytes);
  EXPECT_THROW(from_hex("zz"), std::runtime_error);
}

}  // namespace
}  // namespace nodeprobe::fleet
