// Every flag README lists for every executable (issue 12: one emit path):
// --json -, --label, --timeout, --verbose, --quiet, the three exporters and
// --version work on each probe, on the allreduce launcher, on accept and diag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "format_checkers.h"
#include "nodeprobe/report.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::bin;
using testing::read_file;
using testing::run;
using testing::TempDir;

struct Command {
  std::string name;
  std::vector<std::string> argv;  ///< without the shared flags
};

std::vector<Command> commands(const TempDir& d) {
  testing::write_file(d.file("kern.log"), "May 18 19:02:40 kernel: eth0: link up\n");
  std::vector<Command> c = {
      {"limits", {bin("nodeprobe-limits"), "--passive"}},
      {"io", {bin("nodeprobe-io"), "prepare", "--dir", d.file("ds"), "--files", "8", "--size", "4k"}},
      {"accept", {bin("nodeprobe"), "accept", "--only", "limits", "--no-imds"}},
      {"diag", {bin("nodeprobe"), "diag", "--log", d.file("kern.log")}},
  };
  if (::access(bin("nodeprobe-gemm").c_str(), X_OK) == 0) c.push_back({"gemm", {bin("nodeprobe-gemm")}});
  if (::access(bin("nodeprobe-allreduce").c_str(), X_OK) == 0)
    c.push_back({"allreduce",
                 {bin("nodeprobe-allreduce"), "--np", "2", "--backend", "mpi", "-b", "64K", "-e", "64K", "-n", "2"}});
  return c;
}

TEST(SharedFlags, EveryExecutableWritesJsonAndEveryExporter) {
  TempDir d;
  for (const auto& c : commands(d)) {
    SCOPED_TRACE(c.name);
    const std::string prom = d.file(c.name + ".prom"), emf = d.file(c.name + ".emf"), junit = d.file(c.name + ".xml");
    std::vector<std::string> argv = c.argv;
    argv.insert(argv.end(), {"--json", "-", "--quiet", "--verbose", "--label", "flags-" + c.name, "--timeout", "120",
                             "--prometheus", prom, "--cloudwatch-emf", emf, "--junit", junit});
    const auto r = run(argv, 180, {"NODEPROBE_NO_IMDS=1"});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 77) << r.exit_code << " " << r.err;
    nlohmann::json rep;
    ASSERT_NO_THROW(rep = nlohmann::json::parse(r.out)) << "stdout must hold only the JSON: " << r.out;
    EXPECT_EQ(rep.at("run").at("label"), "flags-" + c.name);
    EXPECT_EQ(testing::schema_errors(rep), "");
    EXPECT_EQ(testing::check_prometheus(read_file(prom)), "");
    EXPECT_EQ(testing::check_emf(read_file(emf)), "");
    EXPECT_EQ(testing::check_junit(read_file(junit)), "");
  }
}

TEST(SharedFlags, EveryExecutableTellsItsVersion) {
  TempDir d;
  for (const auto& c : commands(d)) {
    SCOPED_TRACE(c.name);
    // The version flag sits on the subcommand (accept, diag) or the executable.
    std::vector<std::string> argv(c.argv.begin(), c.argv.begin() + (c.argv[0] == bin("nodeprobe") ? 2 : 1));
    argv.push_back("--version");
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(" 0."), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace nodeprobe
