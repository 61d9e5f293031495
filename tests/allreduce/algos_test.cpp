// The fabric backend's algorithms on real ranks: every algorithm at odd rank
// counts (3 over tcp, 5 over shm, both folding to a power of two), sizes
// below, at and above the rank count, in-place and out-of-place, data checked.
// Tiny sizes and few iterations: correctness only.
#include <gtest/gtest.h>

#include "ar_test_util.h"

namespace nodeprobe::allreduce::testing {
namespace {

// 4 B (one element: most ranks get empty segments), 64 B, 1 KiB, 16 KiB:
// with --oneshot-max 4 --rd-max 64 --ring-min 16K that is oneshot, rd, rabenseifner, ring
// (--linear-max 0: linear would take 64 B and 1 KiB on 3 ranks).
const std::vector<std::string> kAuto = {"-b", "4", "-e", "16K", "-f", "16", "-n", "2", "-w", "1", "-c", "2",
                                        "--oneshot-max", "4", "--rd-max", "64", "--ring-min", "16K",
                                        "--linear-max", "0", "--timeout", "60", "-q"};

void expect_every_algorithm(const ArRun& r, const std::string& target) {
  ASSERT_TRUE(r.have_report) << r.proc.describe() << "\n" << r.proc.err;
  // warn is allowed: a machine with low limits (the dirty-host pass) warns
  // about its environment; what is checked here is the data and the choice.
  EXPECT_TRUE(r.status() == "pass" || r.status() == "warn") << r.status() << ": " << r.reason() << "\n" << r.proc.err;
  std::string id = "data." + target;
  for (char& c : id)
    if (c == ':' || c == ';') c = '.';
  EXPECT_EQ(r.check(id)["status"], "pass");
  const auto& rows = r.probe["data"]["targets"][0]["table"];
  ASSERT_EQ(rows.size(), 4u);
  const char* want[] = {"oneshot", "rd", "rabenseifner", "ring"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[i]["algorithm"], want[i]) << rows[i].dump();
    for (const char* placement : {"out_of_place", "in_place"}) {
      EXPECT_EQ(rows[i][placement]["wrong"], 0) << rows[i].dump();
      EXPECT_GE(rows[i][placement]["time_p99_us"].get<double>(), rows[i][placement]["time_p50_us"].get<double>());
    }
  }
}

// The layered tcp;ofi_rxm (what "tcp" was before it preferred the native RDM
// provider, and still is where libfabric has no "net"): asked for by name.
TEST(AllreduceAlgos, EveryAlgorithmThreeRanksTcpRxm) {
  TempDir dir;
  std::vector<std::string> args = kAuto;
  args.insert(args.end(), {"--backend", "fabric:tcp;ofi_rxm", "-d", "int32", "-o", "max"});
  const ArRun r = run_ar(local_mpirun(3, args), dir);
  expect_every_algorithm(r, "fabric:tcp;ofi_rxm");
  EXPECT_EQ(r.probe["data"]["targets"][0]["transport"], "tcp;ofi_rxm");
}

TEST(AllreduceAlgos, EveryAlgorithmFiveRanksShm) {
  TempDir dir;
  std::vector<std::string> args = kAuto;
  args.insert(args.end(), {"--backend", "fabric:shm"});
  const ArRun r = run_ar(local_mpirun(5, args), dir);
  expect_every_algorithm(r, "fabric:shm");
  // p50 is the time metric's median; p99 its own metric.
  EXPECT_GT(r.metric("time_p99", {{"size", "1024"}, {"placement", "in-place"}}), 0);
}

// One algorithm at every size from 4 B to 16 KiB over tcp on `ranks` ranks
// (`extra` makes it the one that runs), both placements data-checked.
void expect_one_algorithm_over_tcp(int ranks, const std::vector<std::string>& extra, const std::string& algo) {
  TempDir dir;
  std::vector<std::string> args = {"--backend", "fabric:tcp", "-b", "4", "-e", "16K", "-f", "16", "-n", "2",
                                   "-w", "1", "-c", "2", "--timeout", "60", "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ArRun r = run_ar(local_mpirun(ranks, args), dir);
  ASSERT_TRUE(r.have_report) << r.proc.describe() << "\n" << r.proc.err;
  EXPECT_TRUE(r.status() == "pass" || r.status() == "warn") << r.status() << ": " << r.reason();
  EXPECT_EQ(r.check("data.fabric.tcp")["status"], "pass");
  const auto& rows = r.probe["data"]["targets"][0]["table"];
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["algorithm"], algo) << row.dump();
    EXPECT_EQ(row["out_of_place"]["wrong"], 0) << row.dump();
    EXPECT_EQ(row["in_place"]["wrong"], 0) << row.dump();
  }
}

// Open MPI's basic linear shape (reduce to rank 0, then rank 0 sends to all),
// on 3 ranks: auto's choice up to --linear-max (2K by default), raised to
// 16 KiB; every size reduced in rank order and checked.
TEST(AllreduceAlgos, LinearOnThreeRanksTcp) {
  expect_one_algorithm_over_tcp(3, {"--linear-max", "16K"}, "linear");
}

TEST(AllreduceAlgos, Pt2ptMeasuresEveryPairPerTarget) {
  TempDir dir;
  const ArRun r = run_ar(local_mpirun(3, {"--pt2pt", "--backend", "fabric:shm,mpi", "-b", "8", "-e", "64K", "-f",
                                          "0", "-i", "65528", "-n", "3", "-w", "1", "--timeout", "60", "-q"}),
                         dir);
  ASSERT_TRUE(r.have_report) << r.proc.describe() << "\n" << r.proc.err;
  EXPECT_EQ(r.status(), "pass") << r.reason();
  for (const char* backend : {"fabric", "mpi"})
    for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{"0", "1"}, {"0", "2"}, {"1", "2"}})
      for (const char* size : {"8", "65536"}) {
        const std::map<std::string, std::string> labels = {{"backend", backend}, {"a", a}, {"b", b}, {"size", size}};
        EXPECT_GT(r.metric("pt2pt_latency", labels), 0) << backend << " " << a << "-" << b << " " << size;
        EXPECT_EQ(r.stats_n("pt2pt_latency", labels), 3);
        EXPECT_GE(r.metric("pt2pt_latency_p99", labels), r.metric("pt2pt_latency", labels));
        EXPECT_GT(r.metric("pt2pt_bw", labels), 0);
      }
  EXPECT_EQ(r.probe["data"]["targets"][0]["pt2pt"].size(), 6u);
  EXPECT_TRUE(r.probe["data"]["targets"][0]["table"].empty());  // no allreduce sweep
}

// The two-shot (block p straight to rank p, reduced there in rank order,
// then straight back to all), forced on 5 ranks over tcp: blocks of unequal
// length and empty ones (4 B is one element), every size checked both ways.
TEST(AllreduceAlgos, TwoShotOnFiveRanksTcp) { expect_one_algorithm_over_tcp(5, {"--algo", "twoshot"}, "twoshot"); }

}  // namespace
}  // namespace nodeprobe::allreduce::testing
