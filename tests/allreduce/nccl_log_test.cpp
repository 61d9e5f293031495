#include <gtest/gtest.h>

#include "nccl_log.h"

namespace nodeprobe::allreduce {
namespace {

// Line shapes from public NCCL_DEBUG=INFO logs (aws-ofi-nccl old and new, Socket).
const char* kEfaOld =
    "[1,0]<stdout>:test-nccl-efa-worker-0:21:21 [0] NCCL INFO NET/OFI Selected Provider is efa (found 1 nics)\n"
    "[1,0]<stdout>:test-nccl-efa-worker-0:21:21 [0] NCCL INFO Using network AWS Libfabric\n"
    "node:21:40 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/AWS Libfabric/0/GDRDMA\n";
const char* kEfaNew =
    "n0:172:172 [0] NCCL INFO NET/Plugin: Loaded net plugin Libfabric (v11)\n"
    "n0:172:172 [0] NCCL INFO Using network Libfabric\n"
    "n0:172:172 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 3 nics)\n";
const char* kSocket =
    "ip-10-0-4-51:152:386 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.4.51<0>\n"
    "ip-10-0-4-51:152:386 [0] NCCL INFO Initialized NET plugin Socket\n"
    "ip-10-0-4-51:152:386 [0] NCCL INFO Assigned NET plugin Socket to comm\n"
    "ip-10-0-4-51:152:386 [0] NCCL INFO Using network Socket\n"
    "ip-10-0-4-51:152:390 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n";

TEST(NcclLog, ReadsOfiAndProvider) {
  const auto old = parse_nccl_log(kEfaOld);
  EXPECT_EQ(old.network, "AWS Libfabric");
  EXPECT_EQ(old.ofi_provider, "efa");
  EXPECT_TRUE(old.is_ofi());
  EXPECT_EQ(old.channel_vias, std::vector<std::string>{"NET/AWS Libfabric/0/GDRDMA"});
  const auto neu = parse_nccl_log(kEfaNew);
  EXPECT_EQ(neu.network, "Libfabric");
  EXPECT_EQ(neu.ofi_provider, "efa");
}

TEST(NcclLog, ReadsSocket) {
  const auto s = parse_nccl_log(kSocket);
  EXPECT_EQ(s.network, "Socket");
  EXPECT_TRUE(s.is_socket());
  EXPECT_EQ(s.socket_ifaces, std::vector<std::string>{"[0]eth0:10.0.4.51<0>"});
  EXPECT_FALSE(s.evidence.empty());
}

TEST(NcclLog, OlderLogsWithoutUsingNetworkFallBackToChannels) {
  const auto s = parse_nccl_log("h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[0] via NET/Socket/0\n");
  EXPECT_EQ(s.network, "Socket");
  EXPECT_EQ(parse_nccl_log("h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[0] via NET/AWS Libfabric/0/GDRDMA\n").network,
            "AWS Libfabric");
  EXPECT_TRUE(parse_nccl_log("nothing from NCCL here\n").network.empty());
}

TEST(NcclLog, SilentFallbackFromEfaToSocketFails) {
  const auto c = nccl_network_check("ofi", parse_nccl_log(kSocket), true);
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_EQ(c.finding, "efa.fallback_tcp");
  EXPECT_NE(c.detail.find("Using network Socket"), std::string::npos);
  EXPECT_EQ(nccl_network_check("ofi", parse_nccl_log(kEfaNew), true).status, Status::kPass);
  EXPECT_EQ(nccl_network_check("socket", parse_nccl_log(kSocket), true).status, Status::kPass);
  EXPECT_EQ(nccl_network_check("socket", parse_nccl_log(kEfaOld), true).status, Status::kWarn);
  EXPECT_EQ(nccl_network_check("ofi", parse_nccl_log(""), true).status, Status::kWarn);
  // OFI over the tcp provider is TCP too.
  const auto tcp = parse_nccl_log("h:1:1 [0] NCCL INFO NET/OFI Selected provider is tcp (found 1 nics)\n"
                                  "h:1:1 [0] NCCL INFO Using network Libfabric\n");
  EXPECT_EQ(nccl_network_check("ofi", tcp, true).finding, "efa.fallback_tcp");
}

}  // namespace
}  // namespace nodeprobe::allreduce
