#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "options.h"
#include "nodeprobe/error.h"

namespace nodeprobe::allreduce {
namespace {

Plan plan_of(std::vector<std::string> args) {
  CLI::App app;
  Options o;
  add_allreduce_flags(app, o);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return make_plan(o);
}

std::string error_of(std::vector<std::string> args) {
  try {
    plan_of(std::move(args));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Options, DefaultsToMpiOverASweep) {
  const Plan p = plan_of({});
  ASSERT_EQ(p.targets.size(), 1u);
  EXPECT_EQ(p.targets[0].label(), "mpi");
  EXPECT_EQ(p.sizes.front(), 1u << 20);
  EXPECT_EQ(p.sizes.back(), 64u << 20);
}

TEST(Options, NcclTestsFlags) {
  const Plan p = plan_of({"-b", "8", "-e", "128", "-f", "4", "-d", "int32", "-o", "max", "--backend", "fabric,mpi",
                          "--provider", "shm"});
  EXPECT_EQ(p.sizes, (std::vector<std::size_t>{8, 32, 128}));
  EXPECT_EQ(p.dtype, DType::kInt32);
  EXPECT_EQ(p.op, RedOp::kMax);
  ASSERT_EQ(p.targets.size(), 2u);
  EXPECT_EQ(p.targets[0].label(), "fabric:shm");
}

TEST(Options, CompareTakesTwoTargets) {
  const Plan p = plan_of({"--compare", "efa,tcp"});
  EXPECT_TRUE(p.compare);
  EXPECT_EQ(p.targets[1].label(), "fabric:tcp");
  EXPECT_NE(error_of({"--compare", "efa"}).find("exactly two"), std::string::npos);
  EXPECT_NE(error_of({"--compare", "efa,tcp", "--backend", "mpi"}).find("either"), std::string::npos);
  EXPECT_NE(error_of({"--backend", "mpi,mpi"}).find("twice"), std::string::npos);
}

TEST(Options, BadInputSaysWhy) {
  EXPECT_NE(error_of({"-b", "64M", "-e", "1M"}).find("larger than -e"), std::string::npos);
  EXPECT_THROW(plan_of({"-b", "1Q"}), CLI::ValidationError);  // a usage error at parse time (exit 64)
  EXPECT_NE(error_of({"-d", "double"}).find("unknown datatype"), std::string::npos);
  EXPECT_NE(error_of({"-o", "xor"}).find("unknown op"), std::string::npos);
  EXPECT_NE(error_of({"-d", "bfloat16", "--backend", "mpi"}).find("needs --backend nccl"), std::string::npos);
  EXPECT_NE(error_of({"-o", "avg"}).find("MPI has no average"), std::string::npos);
  EXPECT_NE(error_of({"-f", "1"}).find("-f must be > 1"), std::string::npos);
  EXPECT_NE(error_of({"-b", "1", "-e", "3", "-d", "float"}).find("holds one"), std::string::npos);
  EXPECT_NE(error_of({"--test-fault", "x:kill"}).find("bad rank"), std::string::npos);
  EXPECT_NE(error_of({"--test-fault", "3abc:kill"}).find("bad rank '3abc'"), std::string::npos);
  EXPECT_NE(error_of({"--test-fault", "1"}).find("RANK:KIND[:SIZE[:LAUNCH]]: got '1'"), std::string::npos);
  EXPECT_NE(error_of({"--test-fault", "1:boom"}).find("kind must be"), std::string::npos);
  EXPECT_NE(error_of({"--test-fault", "1:kill:4K:x"}).find("bad launch 'x'"), std::string::npos);
  EXPECT_NE(error_of({"--test-fault", "1:kill:4K:2:9"}).find("got '1:kill:4K:2:9'"), std::string::npos);
  EXPECT_NE(error_of({"--test-fault", "1:kill:lots"}).find("--test-fault"), std::string::npos);
  const Plan f = plan_of({"--test-fault", "2:stop:4K:3"});
  EXPECT_EQ(f.fault.rank, 2);
  EXPECT_EQ(f.fault.kind, "stop");
  EXPECT_EQ(f.fault.at_bytes, 4096u);
  EXPECT_EQ(f.fault.launch, 3);
  EXPECT_EQ(plan_of({"--test-fault", "0:exit"}).fault.at_bytes, 0u);
  EXPECT_EQ(error_of({"-d", "bfloat16", "--backend", "nccl"}), "");
}

TEST(Options, CollectiveByNcclTestsNames) {
  EXPECT_EQ(plan_of({}).coll, Coll::kAllReduce);
  EXPECT_EQ(plan_of({"--collective", "all_gather"}).coll, Coll::kAllGather);
  EXPECT_EQ(plan_of({"--collective", "reduce_scatter_perf"}).coll, Coll::kReduceScatter);
  EXPECT_EQ(plan_of({"--collective", "alltoall"}).coll, Coll::kAllToAll);
  const Plan r = plan_of({"--collective", "reduce", "-r", "2", "-o", "min"});
  EXPECT_EQ(r.coll, Coll::kReduce);
  EXPECT_EQ(r.root, 2);
  EXPECT_NE(error_of({"--collective", "gather"}).find("unknown collective 'gather'"), std::string::npos);
  EXPECT_NE(error_of({"-r", "1"}).find("-r/--root applies to broadcast and reduce"), std::string::npos);
  EXPECT_NE(error_of({"--collective", "allgather", "--scaling"}).find("--scaling"), std::string::npos);
  EXPECT_NE(error_of({"--collective", "sendrecv", "--pt2pt"}).find("--pt2pt"), std::string::npos);
  EXPECT_NE(error_of({"--collective", "broadcast", "--algo", "ring"}).find("--algo chooses"), std::string::npos);
  // Allgather and reducescatter choose between their log-step schedule and the ring.
  EXPECT_EQ(error_of({"--collective", "allgather", "--algo", "rd"}), "");
  EXPECT_EQ(error_of({"--collective", "reducescatter", "--algo", "rh"}), "");
  EXPECT_EQ(error_of({"--collective", "reducescatter", "--algo", "ring"}), "");
  EXPECT_NE(error_of({"--collective", "reducescatter", "--algo", "rd"}).find("reducescatter runs auto, rh or ring"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allgather", "--algo", "rabenseifner"}).find("allgather runs auto, rd or ring"),
            std::string::npos);
  EXPECT_NE(error_of({"--algo", "rh"}).find("reducescatter's"), std::string::npos);
  EXPECT_EQ(plan_of({}).chain_min_bytes, 64u << 10);
  EXPECT_EQ(plan_of({"--collective", "broadcast", "--chain-min", "1M"}).chain_min_bytes, 1u << 20);
  // avg is an op of reducing collectives only; a broadcast moves the data as it is.
  EXPECT_EQ(error_of({"--collective", "broadcast", "-o", "avg", "--backend", "fabric"}), "");
}

TEST(Options, AlgorithmAndThresholds) {
  const Plan d = plan_of({});
  EXPECT_EQ(d.algo, Algo::kAuto);
  EXPECT_LT(d.algo_sizes.rd_max, d.algo_sizes.ring_min);
  EXPECT_LE(d.algo_sizes.oneshot_max, d.algo_sizes.rd_max);
  const Plan p = plan_of({"--algo", "rabenseifner", "--oneshot-max", "0", "--rd-max", "1K", "--ring-min", "2M"});
  EXPECT_EQ(p.algo, Algo::kRabenseifner);
  EXPECT_EQ(p.algo_sizes.oneshot_max, 0u);
  EXPECT_EQ(p.algo_sizes.rd_max, 1024u);
  EXPECT_EQ(p.algo_sizes.ring_min, 2u << 20);
  EXPECT_EQ(plan_of({"--algo", "oneshot"}).algo, Algo::kOneShot);
  EXPECT_NE(error_of({"--oneshot-max", "8M"}).find("--oneshot-max 8M must be below --ring-min"), std::string::npos);
  EXPECT_NE(error_of({"--rd-max", "1M", "--ring-min", "64K"}).find("must be below --ring-min"), std::string::npos);
  EXPECT_EQ(error_of({"--collective", "allgather", "--ring-min", "8K"}), "");  // --rd-max is allreduce's
  EXPECT_EQ(plan_of({}).algo_sizes.linear_max, 2u << 10);
  EXPECT_EQ(plan_of({}).algo_sizes.rd_max, 4u << 10);
  EXPECT_EQ(plan_of({"--algo", "twoshot"}).algo, Algo::kTwoShot);
  EXPECT_EQ(plan_of({"--linear-max", "0"}).algo_sizes.linear_max, 0u);
  EXPECT_NE(error_of({"--linear-max", "8M"}).find("--linear-max 8M must be below --ring-min"), std::string::npos);
  EXPECT_EQ(plan_of({}).algo_sizes.ring_min, 4u << 20);  // each collective's own default
  EXPECT_EQ(plan_of({"--collective", "allgather"}).algo_sizes.ring_min, 1u << 20);
  EXPECT_EQ(plan_of({"--collective", "reducescatter"}).algo_sizes.ring_min, 64u << 10);
  EXPECT_EQ(plan_of({"--collective", "reducescatter", "--ring-min", "2M"}).algo_sizes.ring_min, 2u << 20);
  EXPECT_NE(error_of({"--rd-max", "x"}).find("not a size"), std::string::npos);
}

TEST(Options, Pt2ptReplacesTheSweepForMpiAndFabric) {
  const Plan p = plan_of({"--pt2pt", "--backend", "mpi,fabric:shm"});
  EXPECT_TRUE(p.pt2pt);
  EXPECT_NE(error_of({"--pt2pt", "--backend", "nccl"}).find("mpi and fabric"), std::string::npos);
  EXPECT_NE(error_of({"--pt2pt", "--scaling"}).find("not both"), std::string::npos);
  EXPECT_NE(error_of({"--pt2pt", "--compare", "mpi,tcp"}).find("use --backend"), std::string::npos);
}

TEST(Options, MeshAloneMeasuresNoBackend) {
  EXPECT_TRUE(plan_of({"--mesh"}).targets.empty());
  const Plan sc = plan_of({"--scaling", "--backend", "fabric:tcp,mpi"});
  EXPECT_FALSE(sc.sweep);
  EXPECT_EQ(sc.targets[0].label(), "fabric:tcp");
  EXPECT_EQ(plan_of({"--scaling"}).targets[0].label(), "mpi");
  EXPECT_NE(error_of({"--scaling", "--compare", "mpi,tcp"}).find("one target"), std::string::npos);
  const Plan p = plan_of({"--nccl-net", "ofi", "--backend", "nccl"});
  EXPECT_EQ(p.targets[0].label(), "nccl:ofi");
}

}  // namespace
}  // namespace nodeprobe::allreduce
