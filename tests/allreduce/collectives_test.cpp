// nccl-tests' other collectives (--collective) on real ranks: mpirun with 3
// ranks (not a power of two) over MPI and libfabric's tcp provider, and 4
// over tcp with the root on the last rank; every size data-checked twice, in
// place where nccl-tests checks it. Tiny sizes and few iterations: what is
// asserted is the data, the layout of the table and report, never speed.
#include <gtest/gtest.h>

#include <sstream>

#include "ar_math.h"
#include "ar_test_util.h"

namespace nodeprobe::allreduce::testing {
namespace {

const std::vector<std::string> kTiny = {"-b", "8", "-e", "256K", "-f", "32", "-n", "2", "-w", "1",
                                        "-c", "2", "--timeout", "90"};

std::vector<std::string> args(Coll c, const std::string& targets, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = kTiny;
  a.insert(a.end(), {"--collective", std::string(to_string(c)), "--backend", targets});
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The table line of `bytes` in the text output: its whitespace-separated fields.
std::vector<std::string> table_line(const std::string& out, std::size_t bytes) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::vector<std::string> fields;
    for (std::string w; f >> w;) fields.push_back(w);
    if (fields.size() > 5 && fields[0] == std::to_string(bytes)) return fields;
  }
  return {};
}

void expect_checked(const ArRun& r, Coll c, int nranks, int root, const std::vector<std::string>& targets) {
  ASSERT_TRUE(r.have_report) << r.proc.describe() << "\n" << r.proc.err;
  EXPECT_TRUE(r.status() == "pass" || r.status() == "warn") << r.status() << ": " << r.reason() << "\n" << r.proc.err;
  EXPECT_EQ(r.probe["config"]["collective"], std::string(to_string(c)));
  const auto& ts = r.probe["data"]["targets"];
  ASSERT_EQ(ts.size(), targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    std::string id = "data." + targets[t];
    for (char& ch : id)
      if (ch == ':') ch = '.';
    EXPECT_EQ(r.check(id)["status"], "pass") << targets[t];
    const auto& rows = ts[t]["table"];
    // 8 B, 256 B, 8 KiB, 256 KiB; collectives that split the buffer into
    // 16-byte blocks per rank skip the sizes without one.
    const bool blocks = c == Coll::kAllGather || c == Coll::kReduceScatter || c == Coll::kAllToAll;
    ASSERT_EQ(rows.size(), blocks ? 3u : 4u) << rows.dump();
    for (const auto& row : rows) {
      const std::size_t size = row["size"];
      const std::size_t count = row["count"];
      // nccl-tests' size column: the larger buffer; count: the call's count.
      const CollCounts k = coll_counts_of(c, count, 4, nranks);
      EXPECT_EQ(size, k.bytes) << row.dump();
      EXPECT_EQ(row["redop"], coll_reduces(c) ? "sum" : "none");
      EXPECT_EQ(row["out_of_place"]["wrong"], 0) << targets[t] << " " << row.dump();
      if (coll_has_in_place(c)) EXPECT_EQ(row["in_place"]["wrong"], 0) << targets[t] << " " << row.dump();
      else EXPECT_TRUE(row["in_place"].is_null()) << row.dump();
      // busbw = algbw x the collective's factor.
      const double alg = row["out_of_place"]["algbw_GBps"], bus = row["out_of_place"]["busbw_GBps"];
      EXPECT_NEAR(bus, alg * coll_bus_factor(c, nranks), 1e-9 + 1e-6 * alg) << row.dump();
    }
  }
  bool available = false;
  EXPECT_EQ(nodeprobe::testing::schema_errors(nlohmann::json::parse(r.report.dump()), &available), "");
  const bool rooted = c == Coll::kBroadcast || c == Coll::kReduce;
  const auto line = table_line(r.proc.out, r.probe["data"]["targets"][0]["table"].back()["size"]);
  ASSERT_GE(line.size(), 9u) << r.proc.out;
  EXPECT_EQ(line[3], coll_reduces(c) ? "sum" : "none");
  EXPECT_EQ(line[4], std::to_string(rooted ? root : -1));
}

class EveryCollective : public ::testing::TestWithParam<Coll> {};

TEST_P(EveryCollective, ThreeRanksMpiAndFabricTcp) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(3, args(GetParam(), "mpi,fabric:tcp")), dir);
  expect_checked(r, GetParam(), 3, 0, {"mpi", "fabric:tcp"});
}

TEST_P(EveryCollective, FourRanksFabricTcpRootedOnTheLastRank) {
  const Coll c = GetParam();
  const bool rooted = c == Coll::kBroadcast || c == Coll::kReduce;
  TempDir dir;
  // From --chain-min 8K broadcast and reduce pipeline along a chain; from
  // --ring-min 8K allgather and reducescatter run the ring, recursive
  // doubling / halving below.
  const bool gathers = c == Coll::kAllGather || c == Coll::kReduceScatter;
  std::vector<std::string> extra;
  if (rooted) extra = {"-r", "3", "--chain-min", "8K"};
  if (gathers) extra = {"--ring-min", "8K"};
  const ArRun r = run_ar(local_mpirun(4, args(c, "fabric:tcp", extra)), dir);
  expect_checked(r, c, 4, 3, {"fabric:tcp"});
  if (rooted && r.have_report) {
    const auto& rows = r.probe["data"]["targets"][0]["table"];
    ASSERT_EQ(rows.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(rows[i]["algorithm"], i < 2 ? "binomial" : "chain") << rows[i].dump();
  }
  if (gathers && r.have_report) {
    const auto& rows = r.probe["data"]["targets"][0]["table"];  // 256 B, 8 KiB, 256 KiB
    ASSERT_EQ(rows.size(), 3u);
    const std::string log = c == Coll::kAllGather ? "rd" : "rh";
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(rows[i]["algorithm"], i < 1 ? log : "ring") << rows[i].dump();
  }
}

INSTANTIATE_TEST_SUITE_P(All, EveryCollective,
                         ::testing::Values(Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast, Coll::kReduce,
                                           Coll::kAllToAll, Coll::kSendRecv),
                         [](const ::testing::TestParamInfo<Coll>& i) { return std::string(to_string(i.param)); });

// Setup warms every allreduce algorithm, the one-shot included (it receives
// n-1 vectors at once), whatever the collective and however small the
// largest size: a broadcast of at most 64 bytes on 4 ranks runs.
TEST(Collectives, TheSmallestSizesRunOnFourRanks) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(4, {"--collective", "broadcast", "--backend", "fabric:shm", "-b", "8", "-e", "64",
                                          "-n", "1", "-w", "0", "--timeout", "60", "-q"}),
                         dir);
  ASSERT_TRUE(r.have_report) << r.proc.describe() << "\n" << r.proc.err;
  EXPECT_TRUE(r.status() == "pass" || r.status() == "warn") << r.status() << ": " << r.reason() << "\n" << r.proc.err;
  EXPECT_EQ(r.check("data.fabric.shm")["status"], "pass");
}

// The data check is real: one wrong byte on rank 1 fails the allgather.
TEST(Collectives, ACorruptedResultFailsTheDataCheck) {
  TempDir dir;
  const ArRun r =
      run_ar(local_mpirun(3, args(Coll::kAllGather, "fabric:tcp", {"--test-fault", "1:corrupt"})), dir);
  ASSERT_TRUE(r.have_report) << r.proc.describe() << "\n" << r.proc.err;
  EXPECT_EQ(r.status(), "fail") << r.reason();
  EXPECT_EQ(r.check("data.fabric.tcp")["status"], "fail");
}

// Impossible requests end before anything runs, with the reason.
TEST(Collectives, ARootOutsideTheRanksIsAnInputError) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(2, args(Coll::kBroadcast, "mpi", {"-r", "5"})), dir);
  EXPECT_EQ(r.proc.exit_code, 2) << r.proc.err;
  EXPECT_NE(r.proc.err.find("--root 5 is not a rank of this run (2 ranks)"), std::string::npos) << r.proc.err;
}

}  // namespace
}  // namespace nodeprobe::allreduce::testing
