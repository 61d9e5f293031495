// Which libfabric provider the fleet's pairs and ring use: efa only when
// every node offers it, so no pair measures tcp on one end against efa.
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

}  // namespace
}  // namespace nodeprobe::fleet
