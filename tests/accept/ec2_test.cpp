// EC2 detection: DMI fixtures, the rule that IMDS is asked only on EC2 and
// only when allowed, and the IMDSv2 exchange against a local fake server on
// 127.0.0.1 (never the real instance-metadata address).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "ec2.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

using nodeprobe::testing::TempDir;
using nodeprobe::testing::write_file;

void dmi(const TempDir& root, const std::string& vendor, const std::string& product, const std::string& bios = "") {
  write_file(root.file("sys/devices/virtual/dmi/id/sys_vendor"), vendor + "\n");
  write_file(root.file("sys/devices/virtual/dmi/id/product_name"), product + "\n");
  if (!bios.empty()) write_file(root.file("sys/devices/virtual/dmi/id/bios_version"), bios + "\n");
}

struct ImdsSpy {
  int calls = 0;
  ImdsQuery fn() {
    return [this](std::string*) -> std::optional<std::string> {
      ++calls;
      return std::string("p3.16xlarge");
    };
  }
};

TEST(Ec2, DmiVendorsAndTypes) {
  TempDir nitro, xen, other;
  dmi(nitro, "Amazon EC2", "p4d.24xlarge");
  dmi(xen, "Xen", "HVM domU", "4.11.amazon");
  dmi(other, "QEMU", "Standard PC (Q35 + ICH9, 2009)");
  EXPECT_TRUE(dmi_says_ec2(FsRoot(nitro.path())));
  EXPECT_EQ(dmi_type(FsRoot(nitro.path())), "p4d.24xlarge");
  EXPECT_TRUE(dmi_says_ec2(FsRoot(xen.path())));
  EXPECT_EQ(dmi_type(FsRoot(xen.path())), "");
  EXPECT_FALSE(dmi_says_ec2(FsRoot(other.path())));
  EXPECT_TRUE(looks_like_instance_type("g5.48xlarge"));
  EXPECT_TRUE(looks_like_instance_type("p5en.48xlarge"));
  EXPECT_FALSE(looks_like_instance_type("HVM domU"));
  EXPECT_FALSE(looks_like_instance_type("p4d"));
}

TEST(Ec2, ImdsIsNeverAskedOffEc2OrWhenNotAllowed) {
  TempDir other, xen, nitro;
  dmi(other, "Dell Inc.", "PowerEdge R750");
  dmi(xen, "Xen", "HVM domU", "4.2.amazon");
  dmi(nitro, "Amazon EC2", "g5.xlarge");
  ImdsSpy spy;
  auto id = detect_instance(FsRoot(other.path()), "", true, spy.fn());
  EXPECT_EQ(spy.calls, 0);
  EXPECT_EQ(id.type, "");
  EXPECT_NE(id.note.find("not on EC2"), std::string::npos);
  id = detect_instance(FsRoot(xen.path()), "", false, spy.fn());
  EXPECT_EQ(spy.calls, 0);
  EXPECT_NE(id.note.find("was not asked"), std::string::npos);
  id = detect_instance(FsRoot(nitro.path()), "", true, spy.fn());
  EXPECT_EQ(spy.calls, 0);  // DMI named the type
  EXPECT_EQ(id.type, "g5.xlarge");
  EXPECT_EQ(id.source, "dmi");
  id = detect_instance(FsRoot(xen.path()), "p4d.24xlarge", true, spy.fn());
  EXPECT_EQ(spy.calls, 0);  // --expect wins
  EXPECT_EQ(id.source, "--expect");
  id = detect_instance(FsRoot(xen.path()), "", true, spy.fn());
  EXPECT_EQ(spy.calls, 1);  // on EC2, type unknown, allowed: the only case
  EXPECT_EQ(id.type, "p3.16xlarge");
  EXPECT_EQ(id.source, "imds");
}

TEST(Ec2, EnvironmentSwitchDisablesImds) {
  const char* old = std::getenv("NODEPROBE_NO_IMDS");
  const std::string saved = old ? old : "";
  ::setenv("NODEPROBE_NO_IMDS", "1", 1);
  EXPECT_TRUE(imds_disabled_by_env());
  ::setenv("NODEPROBE_NO_IMDS", "0", 1);
  EXPECT_FALSE(imds_disabled_by_env());
  if (old) ::setenv("NODEPROBE_NO_IMDS", saved.c_str(), 1);
  else ::unsetenv("NODEPROBE_NO_IMDS");
}

/// A one-shot-per-connection HTTP server on 127.0.0.1 playing IMDSv2.
class FakeImds {
 public:
  enum class Mode { kOk, kUnauthorized, kSilent };
  explicit FakeImds(Mode mode) : mode_(mode) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 4);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeImds() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::string requests() const { return requests_; }

 private:
  void serve() {
    while (!stop_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[2048];
      while (req.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        req.append(buf, static_cast<std::size_t>(n));
      }
      requests_ += req;
      std::string resp;
      if (mode_ == Mode::kSilent) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      } else if (req.rfind("PUT /latest/api/token HTTP/1.1\r\n", 0) == 0 &&
                 req.find("X-aws-ec2-metadata-token-ttl-seconds: ") != std::string::npos) {
        resp = mode_ == Mode::kOk ? "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nTOKEN-abc123"
                                  : "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n";
      } else if (req.rfind("GET /latest/meta-data/instance-type HTTP/1.1\r\n", 0) == 0 &&
                 req.find("X-aws-ec2-metadata-token: TOKEN-abc123\r\n") != std::string::npos) {
        resp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\np4d.24xlarge";
      } else {
        resp = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
      }
      if (!resp.empty()) ::send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }
  Mode mode_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::string requests_;
  std::thread thread_;
};

TEST(Imds, TokenThenInstanceType) {
  FakeImds server(FakeImds::Mode::kOk);
  std::string err;
  const auto t = imds_instance_type({"127.0.0.1", server.port()}, 1.0, &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(*t, "p4d.24xlarge");
}

TEST(Imds, RefusedTokenIsAnError) {
  FakeImds server(FakeImds::Mode::kUnauthorized);
  std::string err;
  EXPECT_FALSE(imds_instance_type({"127.0.0.1", server.port()}, 1.0, &err));
  EXPECT_NE(err.find("HTTP 401"), std::string::npos);
}

TEST(Imds, SilentServerTimesOutWithinTheBudget) {
  FakeImds server(FakeImds::Mode::kSilent);
  std::string err;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(imds_instance_type({"127.0.0.1", server.port()}, 0.3, &err));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(err.find("timed out"), std::string::npos) << err;
  EXPECT_LT(s, 1.0);  // a hard deadline, not a hang
}

TEST(Imds, NoServerAndNonNumericHostFailQuickly) {
  std::string err;
  // Port 1 on loopback: nothing listens (connection refused).
  EXPECT_FALSE(imds_instance_type({"127.0.0.1", 1}, 1.0, &err));
  EXPECT_NE(err.find("connect"), std::string::npos) << err;
  EXPECT_FALSE(imds_instance_type({"metadata.example", 80}, 1.0, &err));
  EXPECT_NE(err.find("numeric IPv4"), std::string::npos);
}

}  // namespace
}  // namespace nodeprobe::diag
