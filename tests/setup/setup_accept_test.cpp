// setup.sh's own result is kept apart from the node's: it exits 0 when
// installing and building succeeded, prints accept's verdict and where the
// report is, and passes accept's exit code through only with --strict. The
// real nodeprobe of this build judges a system without GPUs against a GPU
// instance type, a verdict of fail whatever machine runs the test.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::TempDir;

const std::string kSrc = NODEPROBE_SOURCE_DIR;

std::vector<std::string> setup_argv(const TempDir& t) {
  std::vector<std::string> argv = {"bash", kSrc + "/scripts/setup.sh", "--no-deps", "--no-build", "--build-dir",
                                   NODEPROBE_BUILD_DIR, "--report", t.file("accept.json")};
  for (const std::string a : {"--only", "limits", "--expect", "p4d.24xlarge", "--sysroot"})
    argv.insert(argv.end(), {"--accept-arg", a});
  argv.insert(argv.end(), {"--accept-arg", kSrc + "/tests/fixtures/sysroot/empty"});
  return argv;
}

TEST(SetupScript, AnUnfitNodeIsNotASetupFailure) {
  TempDir t;
  const auto r = testing::run(setup_argv(t), 120);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("accept: fail: the node is not fit to train (see the findings above) (exit 1); report: " +
                       t.file("accept.json")),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--strict passes accept's exit code through"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(t.file("accept.json")));
  EXPECT_NE(r.out.find("gpu.not_found"), std::string::npos);  // accept's own table is shown
}

TEST(SetupScript, StrictPassesAcceptsExitCodeThrough) {
  TempDir t;
  auto argv = setup_argv(t);
  argv.push_back("--strict");
  const auto r = testing::run(argv, 120);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("accept: fail"), std::string::npos) << r.err;
}

TEST(SetupScript, NoBuildWithoutABuildSaysSo) {
  TempDir t;
  const auto r = testing::run({"bash", kSrc + "/scripts/setup.sh", "--no-deps", "--no-build", "--build-dir", t.path()}, 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(t.path() + "/bin/nodeprobe is not built"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nodeprobe
