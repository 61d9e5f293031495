// nodeprobe-allreduce stopped by real signals (issue 14): under its own
// launcher (--np) and under an outside mpirun the report holds the sizes
// that finished, no nodeprobe-allreduce-* directory is left; and the one emit
// path writes every exporter (issue 12).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "ar_test_util.h"
#include "format_checkers.h"
#include "nodeprobe/report.h"

namespace nodeprobe::allreduce::testing {
namespace {

namespace fs = std::filesystem;
namespace nt = nodeprobe::testing;

// A long sweep: its first sizes finish within a second, the last ones take long.
const std::vector<std::string> kLong = {"--backend", "mpi", "-b", "64K", "-e", "512M", "-n", "40", "--inplace", "0"};

// True once the table shows the row of `bytes`.
bool row_printed(const nt::Background& p, const std::string& bytes) {
  std::istringstream in(p.out());
  for (std::string l; std::getline(in, l);)
    if (l.find(" " + bytes + " ") != std::string::npos && l.find("float") != std::string::npos) return true;
  return false;
}

Json load(const std::string& path) { return Json::parse(nt::read_file(path)); }

double busbw_at(const Json& probe, const std::string& size) {
  for (const auto& m : probe.at("metrics"))
    if (m.at("name") == "busbw" && m.at("labels").value("size", "") == size) return m.at("value").get<double>();
  return -1;
}

TEST(AllreduceStop, SigintUnderNpKeepsTheSizesThatFinishedAndNoTempDir) {
  TempDir d, tmp;
  std::vector<std::string> argv = {nt::bin("nodeprobe-allreduce"), "--np", "2", "--json", d.file("r.json")};
  argv.insert(argv.end(), kLong.begin(), kLong.end());
  nt::Background p(argv, {"TMPDIR=" + tmp.path()});
  ASSERT_TRUE(nt::wait_for([&] { return row_printed(p, "131072"); }, 60)) << p.out() << p.err();
  p.signal(SIGINT);
  ASSERT_EQ(p.wait(60), 130) << p.err();
  const Json rep = load(d.file("r.json"));
  const Json& probe = rep.at("probes").at(0);
  EXPECT_EQ(probe.at("status"), "error");
  const std::string reason = probe.at("reason");
  EXPECT_EQ(reason.rfind("interrupted by SIGINT", 0), 0u) << reason;
  EXPECT_GT(busbw_at(probe, "65536"), 0) << "the sizes that finished are missing: " << reason << "\n" << p.err();
  EXPECT_GT(busbw_at(probe, "131072"), 0);
  EXPECT_TRUE(nt::entries_with_prefix(tmp.path(), "nodeprobe-allreduce").empty()) << "temporary directory left";
}

TEST(AllreduceStop, SigintToAnOutsideMpirunStillLeavesRankZerosReport) {
  TempDir d;
  std::vector<std::string> args = kLong;
  args.insert(args.end(), {"--json", d.file("r.json")});
  nt::Background p(local_mpirun(2, args));
  ASSERT_TRUE(nt::wait_for([&] { return row_printed(p, "131072"); }, 60)) << p.out() << p.err();
  p.signal(SIGINT);  // mpirun passes SIGTERM on to the ranks
  EXPECT_NE(p.wait(60), 0);
  const Json rep = load(d.file("r.json"));
  const Json& probe = rep.at("probes").at(0);
  EXPECT_EQ(probe.at("status"), "error");
  EXPECT_NE(probe.at("reason").get<std::string>().find("interrupted by SIGTERM"), std::string::npos)
      << probe.at("reason");
  EXPECT_GT(busbw_at(probe, "65536"), 0);
}

TEST(AllreduceEmit, NpWritesEveryExporterThroughTheLauncher) {
  TempDir d;
  const ArRun r = run_ar({nt::bin("nodeprobe-allreduce"), "--np", "2", "--backend", "mpi", "-b", "64K", "-e", "256K",
                          "-n", "3", "-q", "--label", "L2", "--timeout", "60", "--prometheus", d.file("p.prom"),
                          "--cloudwatch-emf", d.file("e.json"), "--junit", d.file("j.xml")},
                         d);
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  ASSERT_TRUE(r.have_report);
  EXPECT_EQ(r.report.at("run").at("label"), "L2");
  std::vector<nt::PromFamily> families;
  EXPECT_EQ(nt::check_prometheus(nt::read_file(d.file("p.prom")), &families), "");
  EXPECT_FALSE(families.empty());
  std::size_t records = 0;
  EXPECT_EQ(nt::check_emf(nt::read_file(d.file("e.json")), &records), "");
  EXPECT_GT(records, 0u);
  EXPECT_EQ(nt::check_junit(nt::read_file(d.file("j.xml"))), "");
  EXPECT_TRUE(r.proc.out.empty()) << "--quiet";
}

}  // namespace
}  // namespace nodeprobe::allreduce::testing
