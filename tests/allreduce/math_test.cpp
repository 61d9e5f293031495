#include <gtest/gtest.h>

#include <cstdlib>

#include "ar_math.h"
#if NODEPROBE_ALLREDUCE_HAVE_FABRIC
#include "fabric_ep.h"
#endif
#include "launcher.h"
#include "net_util.h"
#include "nodeprobe/error.h"

namespace nodeprobe::allreduce {
namespace {

TEST(BusBw, FactorIsTwoNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
}

// nccl-tests' GetBw of each collective (src/*.cu): 2(n-1)/n, (n-1)/n or 1.
TEST(BusBw, FactorPerCollectiveFollowsNcclTests) {
  EXPECT_DOUBLE_EQ(coll_bus_factor(Coll::kAllReduce, 4), 1.5);
  for (Coll c : {Coll::kAllGather, Coll::kReduceScatter, Coll::kAllToAll}) EXPECT_DOUBLE_EQ(coll_bus_factor(c, 4), 0.75);
  for (Coll c : {Coll::kBroadcast, Coll::kReduce, Coll::kSendRecv}) EXPECT_DOUBLE_EQ(coll_bus_factor(c, 4), 1.0);
  EXPECT_DOUBLE_EQ(coll_bus_factor(Coll::kAllGather, 1), 0.0);
}

// GetCollByteCount: a per-rank block rounded down to 16 bytes; the size
// column is the larger buffer (all_gather_perf -b 1M on 3 ranks prints 1048560).
TEST(Sizes, CollectiveCountsFollowNcclTests) {
  const CollCounts ag = coll_counts(Coll::kAllGather, 1 << 20, 4, 3);
  EXPECT_EQ(ag.param, 87380u);
  EXPECT_EQ(ag.send, 87380u);
  EXPECT_EQ(ag.recv, 262140u);
  EXPECT_EQ(ag.bytes, 1048560u);
  const CollCounts rs = coll_counts(Coll::kReduceScatter, 1 << 20, 4, 4);
  EXPECT_EQ(rs.param, 65536u);
  EXPECT_EQ(rs.send, 262144u);
  EXPECT_EQ(rs.recv, 65536u);
  const CollCounts a2a = coll_counts(Coll::kAllToAll, 1 << 20, 2, 8);
  EXPECT_EQ(a2a.param, 65536u);
  EXPECT_EQ(a2a.send, 524288u);
  EXPECT_EQ(coll_counts(Coll::kAllGather, 32, 4, 3).param, 0u);  // no 16-byte block per rank
  for (Coll c : {Coll::kAllReduce, Coll::kBroadcast, Coll::kReduce, Coll::kSendRecv}) {
    const CollCounts k = coll_counts(c, 1000, 4, 3);
    EXPECT_EQ(k.param, 250u);
    EXPECT_EQ(k.bytes, 1000u);
  }
  EXPECT_EQ(coll_counts_of(Coll::kAllGather, 87380, 4, 3).bytes, ag.bytes);
}

TEST(BusBw, AlgbwIsBytesOverTimeInDecimalGB) {
  EXPECT_DOUBLE_EQ(algbw_gbps(1000000000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(algbw_gbps(1073741824, 0.5), 2.147483648);
  EXPECT_DOUBLE_EQ(algbw_gbps(100, 0), 0.0);
  // nccl-tests p5 anchor: 2 GiB at 8825.9 us, 16 ranks -> algbw 243.31, busbw 456.2.
  const double alg = algbw_gbps(2147483648ull, 8825.9e-6);
  EXPECT_NEAR(alg, 243.31, 0.01);
  EXPECT_NEAR(allreduce_busbw(alg, 16), 456.2, 0.1);
}

TEST(Sizes, SweepDoublesFromMinToMax) {
  const auto s = size_sweep(1024, 8192, 2, 0, 4);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s.front(), 1024u);
  EXPECT_EQ(s.back(), 8192u);
}

TEST(Sizes, SweepRoundsToElementsAndDropsZero) {
  const auto s = size_sweep(2, 16, 2, 0, 4);
  EXPECT_EQ(s, (std::vector<std::size_t>{4, 8, 16}));
  EXPECT_TRUE(size_sweep(8, 4, 2, 0, 4).empty());
}

TEST(Sizes, SweepAdditiveStep) {
  const auto s = size_sweep(1000, 4000, 0, 1000, 4);
  EXPECT_EQ(s, (std::vector<std::size_t>{1000, 2000, 3000, 4000}));
}

Placement measured(double busbw) {
  Placement p;
  p.measured = true;
  p.busbw = busbw;
  return p;
}

TEST(Average, MeanOverEveryPrintedValue) {
  SizeRow a, b;
  a.oop = measured(2.0);
  a.ip = measured(4.0);
  b.oop = measured(6.0);
  EXPECT_DOUBLE_EQ(average_busbw({a, b}), 4.0);
  EXPECT_DOUBLE_EQ(average_busbw({}), 0.0);
}

TEST(Stragglers, SlowerThanOneAndAHalfMedian) {
  EXPECT_EQ(stragglers({10, 11, 10, 30}), (std::vector<int>{3}));
  EXPECT_EQ(stragglers({10, 10, 10, 15}), std::vector<int>{});  // exactly 1.5x is not slower
  EXPECT_EQ(stragglers({10, 16, 10, 10}), (std::vector<int>{1}));
  EXPECT_TRUE(stragglers({5}).empty());
  EXPECT_TRUE(stragglers({0, 0, 0}).empty());
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2, 4}), 2.5);
}

TEST(Targets, ParsesBackendsAndBareProviders) {
  EXPECT_EQ(parse_target("mpi", "tcp").label(), "mpi");
  EXPECT_EQ(parse_target("fabric", "tcp").label(), "fabric:tcp");
  EXPECT_EQ(parse_target("fabric:efa", "tcp").label(), "fabric:efa");
  EXPECT_EQ(parse_target("efa", "tcp").label(), "fabric:efa");
  EXPECT_EQ(parse_target("nccl:ofi", "tcp").label(), "nccl:ofi");
  EXPECT_EQ(parse_target("nccl", "tcp").label(), "nccl");
  EXPECT_THROW(parse_target("nccl:ib", "tcp"), InputError);
  EXPECT_THROW(parse_target("mpi:tcp", "tcp"), InputError);
  EXPECT_THROW(parse_target("fabric:", "tcp"), InputError);
  EXPECT_THROW(parse_target("x/y", "tcp"), InputError);
}

#if NODEPROBE_ALLREDUCE_HAVE_FABRIC
TEST(Targets, TcpOpensTheNativeRdmTcpProviderWhereLibfabricHasIt) {
  EXPECT_EQ(resolve_provider("tcp", {"net", "shm", "tcp"}), "net");  // libfabric 1.16-1.17
  EXPECT_EQ(resolve_provider("tcp", {"shm", "tcp"}), "tcp");         // 1.18+: "tcp" is that provider
  EXPECT_EQ(resolve_provider("tcp;ofi_rxm", {"net", "tcp"}), "tcp;ofi_rxm");
  EXPECT_EQ(resolve_provider("efa", {"efa", "net", "tcp"}), "efa");
  EXPECT_EQ(resolve_provider("net", {"net"}), "net");
}
#endif

TEST(Launcher, StripsWhatItWritesItselfInBothForms) {
  const char* args[] = {"prog",  "--np", "4", "--json", "out.json", "-b", "1M", "--np=2", "--json=x", "-q",
                        "--timeout", "9", "--prometheus", "p.prom", "--junit=j.xml", "--cloudwatch-emf", "e.json",
                        "--label", "L"};
  const auto v = strip_launcher_args(19, const_cast<char**>(args));
  EXPECT_EQ(v, (std::vector<std::string>{"-b", "1M", "-q", "--label", "L"}));
  const auto argv = local_mpirun_argv("/usr/bin/mpirun", 4, "/bin/np", {"-b", "1M"}, true);
  EXPECT_EQ(argv, (std::vector<std::string>{"/usr/bin/mpirun", "-np", "4", "--oversubscribe", "--bind-to", "none",
                                            "--allow-run-as-root", "/bin/np", "-b", "1M"}));
}

// What mpirun printed on an H200 after a clean skip (two ranks on one GPU,
// each rank exiting 77): the report says it, Open MPI's blocks go; any other
// block, and every rank's own line, stay.
TEST(Launcher, DropsOpenMpisExitStatusBannersOnly) {
  const std::string rule(74, '-');
  const std::string err =
      "nodeprobe-allreduce: rank 1: skip\n" + rule + "\nPrimary job  terminated normally, but 1 process returned\n"
      "a non-zero exit code. Per user-direction, the job has been aborted.\n" + rule + "\n" + rule +
      "\nmpiexec detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n\n  Process name: [[27238,1],1]\n  Exit code:    77\n" +
      rule + "\n" + rule + "\nWARNING: There was an error initializing an OpenFabrics device.\n" + rule + "\n";
  const std::string out = drop_exit_status_banners(err);
  EXPECT_EQ(out, "nodeprobe-allreduce: rank 1: skip\n" + rule +
                     "\nWARNING: There was an error initializing an OpenFabrics device.\n" + rule + "\n");
  EXPECT_EQ(drop_exit_status_banners("plain\n"), "plain\n");
  // An unterminated block is kept as it is.
  EXPECT_EQ(drop_exit_status_banners(rule + "\nexited with non-zero status\n"), rule + "\nexited with non-zero status\n");
}

TEST(Interface, PicksLikeNcclSocketIfname) {
  std::vector<LocalAddr> a = {{"lo", "127.0.0.1", true, true},
                              {"docker0", "172.17.0.1", false, true},
                              {"eth0", "10.0.0.5", false, true},
                              {"eth1", "10.1.0.5", false, true}};
  std::string why;
  ::unsetenv("NCCL_SOCKET_IFNAME");
  EXPECT_EQ(pick_interface(a, "", &why).iface, "eth0");
  EXPECT_EQ(pick_interface(a, "eth1", &why).ip, "10.1.0.5");
  EXPECT_EQ(pick_interface(a, "^docker,eth0", &why).iface, "eth1");
  EXPECT_EQ(pick_interface(a, "=eth", &why).ip, "");
  EXPECT_NE(why.find("no IPv4 interface matches"), std::string::npos);
  EXPECT_EQ(pick_interface({{"lo", "127.0.0.1", true, true}}, "", &why).iface, "lo");
}

}  // namespace
}  // namespace nodeprobe::allreduce
