// Which libfabric provider the fleet's pairs and ring use: efa only when
// every node offers it, so no pair measures tcp on one end against efa. And
// what carries the pairs: nccl only when every node can.
#include <gtest/gtest.h>

#include "fleet_phases.h"

namespace nodeprobe::fleet {
namespace {

Json hello(std::vector<std::string> providers) { return {{"t", "hello"}, {"providers", providers}}; }

TEST(FleetProvider, EfaOnlyWhenEveryNodeOffersIt) {
  EXPECT_EQ(choose_provider("", {hello({"efa", "tcp"}), hello({"tcp", "efa"})}), "efa");
  EXPECT_EQ(choose_provider("", {hello({"efa", "tcp"}), hello({"tcp"}), hello({"efa"})}), "tcp");
  EXPECT_EQ(choose_provider("", {hello({"efa"}), Json{{"t", "hello"}}}), "tcp");  // a hello without the list
  EXPECT_EQ(choose_provider("", {}), "tcp");
}

TEST(FleetProvider, ProviderFlagWins) {
  EXPECT_EQ(choose_provider("efa", {hello({"tcp"})}), "efa");
  EXPECT_EQ(choose_provider("tcp", {hello({"efa"}), hello({"efa"})}), "tcp");
}

Json nccl_hello(const std::string& host, bool usable, const std::string& why = "") {
  Json n{{"usable", usable}, {"version", "2.28.5"}};
  if (!why.empty()) n["why"] = why;
  return {{"t", "hello"}, {"host", host}, {"nccl", n}};
}

TEST(FleetPairBackend, AutoIsNcclOnlyWhenEveryNodeCan) {
  const auto all = choose_pair_backend("auto", {nccl_hello("a", true), nccl_hello("b", true)});
  EXPECT_EQ(all.backend, "nccl");
  EXPECT_EQ(all.reason, "auto: every node has a usable GPU and NCCL 2.28.5");
  const auto one = choose_pair_backend("auto", {nccl_hello("a", true), nccl_hello("b", false, "no GPU visible")});
  EXPECT_EQ(one.backend, "fabric");
  EXPECT_EQ(one.reason, "auto: NCCL cannot carry the pairs (b: no GPU visible)");
  // A node that did not say (an older rank program) cannot.
  EXPECT_EQ(choose_pair_backend("auto", {nccl_hello("a", true), Json{{"t", "hello"}, {"host", "c"}}}).backend, "fabric");
  EXPECT_EQ(choose_pair_backend("auto", {}).backend, "fabric");
}

TEST(FleetPairBackend, NcclWhereANodeCannotIsRefusedWithTheReason) {
  const auto c = choose_pair_backend("nccl", {nccl_hello("a", false, "this build has no NCCL support")});
  EXPECT_EQ(c.backend, "");
  EXPECT_EQ(c.reason, "--pair-backend nccl, but a: this build has no NCCL support");
  EXPECT_EQ(choose_pair_backend("nccl", {nccl_hello("a", true)}).backend, "nccl");
  EXPECT_EQ(choose_pair_backend("fabric", {nccl_hello("a", true)}).backend, "fabric");
}

}  // namespace
}  // namespace nodeprobe::fleet
