// cmake/RequiredLibraries.cmake on a tiny project (tests/setup/cmake_deps)
// and scripts/fetch-deps.sh: an old GoogleTest is refused and the pinned
// source is built instead, read from the offline directory without any
// network (a network namespace with none, when root); a directory that lacks
// a pinned file says what to run; fetch-deps.sh checks every checksum.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>

#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::TempDir;

const std::string kSrc = NODEPROBE_SOURCE_DIR;

std::string sha256(const std::string& path) {
  const auto r = testing::run({"sha256sum", path}, 30);
  return r.out.substr(0, r.out.find(' '));
}

// cmake on the tiny project; with root inside a network namespace that has no
// interface at all, so a download attempt fails rather than passes unseen.
SpawnResult configure(const std::string& build, std::vector<std::string> defs) {
  std::vector<std::string> argv;
  if (::geteuid() == 0 && testing::run({"unshare", "-n", "true"}, 10).exited_ok()) argv = {"unshare", "-n"};
  argv.insert(argv.end(), {NODEPROBE_CMAKE_COMMAND, "-S", kSrc + "/tests/setup/cmake_deps", "-B", build,
                           "-DNODEPROBE_SOURCE_DIR=" + kSrc});
  argv.insert(argv.end(), defs.begin(), defs.end());
  return testing::run(argv, 240);
}

// A GoogleTest installation as RHEL 8's CRB has it: headers without
// GTEST_SKIP and MOCK_METHOD, no CMake package (module mode, no version).
void write_old_gtest(const std::string& prefix) {
  testing::write_file(prefix + "/include/gtest/gtest.h",
                      "#pragma once\n// GoogleTest 1.8-era header: no GTEST_SKIP, no MOCK_METHOD\n#define TEST(a, b) void a##b()\n");
  testing::write_file(prefix + "/include/gmock/gmock.h", "#pragma once\n#define MOCK_METHOD1(n, s)\n");
}

TEST(RequiredLibraries, AnOldGoogleTestIsRefusedAndThePinnedSourceIsBuiltOffline) {
  if (!std::filesystem::exists("/usr/src/googletest/CMakeLists.txt"))
    GTEST_SKIP() << "no GoogleTest source tree at /usr/src/googletest to stand in for the pinned release";
  TempDir t;
  write_old_gtest(t.file("old"));
  std::filesystem::create_directories(t.file("deps"));
  ASSERT_TRUE(testing::run({"tar", "-czf", t.file("deps/googletest-local.tar.gz"), "-C", "/usr/src", "googletest"}, 120)
                  .exited_ok());
  testing::write_file(t.file("pins.txt"), "googletest 1.12.1-local googletest-local.tar.gz " +
                                              sha256(t.file("deps/googletest-local.tar.gz")) +
                                              " https://invalid.example/never-downloaded.tar.gz\n");
  // find_package(GTest) off: this machine's own (new) GoogleTest is not seen,
  // only the old one under GTEST_ROOT.
  const auto r = configure(t.file("b"), {"-DGTEST_ROOT=" + t.file("old"), "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON",
                                         "-DNODEPROBE_DEPS_DIR=" + t.file("deps"),
                                         "-DNODEPROBE_PINNED_DEPS=" + t.file("pins.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("np-deps: GoogleTest|built|1.12.1-local (pinned, " + t.file("old") +
                       "/include has no GTEST_SKIP/MOCK_METHOD"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("from " + t.file("deps") + "/googletest-local.tar.gz"), std::string::npos) << r.out;
}

TEST(RequiredLibraries, AGoogleTestWithoutACMakePackageIsAcceptedWhenItCompiles) {
  // A new GoogleTest installed without its CMake package: module mode gives
  // no version, the compile check of GTEST_SKIP/MOCK_METHOD accepts it.
  std::string libdir;
  for (const char* d : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"})
    if (std::filesystem::exists(std::string(d) + "/libgmock.a")) libdir = d;
  if (libdir.empty() || !std::filesystem::exists("/usr/include/gmock/gmock.h") ||
      std::string(NODEPROBE_JSON_DIR).empty() || std::string(NODEPROBE_CLI11_DIR).empty())
    GTEST_SKIP() << "needs GoogleTest (static) under /usr and this build's nlohmann-json and CLI11 from the OS";
  TempDir t;
  std::filesystem::create_directories(t.file("p/include"));
  std::filesystem::create_directories(t.file("p/lib"));
  std::filesystem::create_directory_symlink("/usr/include/gtest", t.file("p/include/gtest"));
  std::filesystem::create_directory_symlink("/usr/include/gmock", t.file("p/include/gmock"));
  for (const char* l : {"gtest", "gtest_main", "gmock", "gmock_main"})
    std::filesystem::create_symlink(libdir + "/lib" + l + ".a", t.file(std::string("p/lib/lib") + l + ".a"));
  // No system or PATH prefixes: the OS's GTestConfig.cmake is not found, the
  // copy under GTEST_ROOT is; so the tools are named.
  const auto r = configure(t.file("b"), {"-G", NODEPROBE_CMAKE_GENERATOR, "-DCMAKE_MAKE_PROGRAM=" NODEPROBE_MAKE_PROGRAM,
                                         "-DCMAKE_C_COMPILER=" NODEPROBE_C_COMPILER,
                                         "-DCMAKE_CXX_COMPILER=" NODEPROBE_CXX_COMPILER,
                                         "-DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF",
                                         "-DCMAKE_FIND_USE_SYSTEM_ENVIRONMENT_PATH=OFF",
                                         "-Dnlohmann_json_DIR=" NODEPROBE_JSON_DIR, "-DCLI11_DIR=" NODEPROBE_CLI11_DIR,
                                         "-DGTEST_ROOT=" + t.file("p"), "-DNODEPROBE_FETCH_MISSING=OFF"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("np-deps: GoogleTest|yes|at " + t.file("p/include") +
                       " (no version in module mode, GTEST_SKIP and MOCK_METHOD compile)"),
            std::string::npos)
      << r.out;
}

TEST(RequiredLibraries, AnOfflineDirectoryWithoutThePinnedSourceSaysWhatToRun) {
  TempDir t;
  write_old_gtest(t.file("old"));
  std::filesystem::create_directories(t.file("deps"));
  const auto r = configure(t.file("b"), {"-DGTEST_ROOT=" + t.file("old"), "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON",
                                         "-DNODEPROBE_DEPS_DIR=" + t.file("deps")});
  EXPECT_NE(r.exit_code, 0);
  std::string err;  // CMake wraps its messages: one space for every run of white space
  for (char c : r.err)
    if (!std::isspace(static_cast<unsigned char>(c))) err += c;
    else if (!err.empty() && err.back() != ' ') err += ' ';
  EXPECT_NE(err.find("has no googletest-1.14.0.tar.gz (run scripts/fetch-deps.sh DIR on a connected machine)"),
            std::string::npos)
      << r.err;
}

TEST(FetchDeps, EveryFileIsCheckedAgainstItsPinnedChecksum) {
  TempDir t;
  testing::write_file(t.file("mirror/good.tar.gz"), "pinned bytes\n");
  testing::write_file(t.file("mirror/evil.tar.gz"), "tampered bytes\n");
  const std::string good = sha256(t.file("mirror/good.tar.gz"));
  testing::write_file(t.file("pins.txt"), "# name version file sha256 url\n"
                                          "good 1.0 good.tar.gz " + good + " https://invalid.example/good\n"
                                          "evil 1.0 evil.tar.gz " + good + " https://invalid.example/evil\n");
  const std::vector<std::string> argv = {kSrc + "/scripts/fetch-deps.sh", t.file("out"), "--no-cmake", "--mirror",
                                         "file://" + t.file("mirror")};
  auto r = testing::run(argv, 60, {"NODEPROBE_PINNED_DEPS=" + t.file("pins.txt")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(t.file("out/good.tar.gz")));
  EXPECT_FALSE(std::filesystem::exists(t.file("out/evil.tar.gz")));
  EXPECT_FALSE(std::filesystem::exists(t.file("out/evil.tar.gz.part")));
  EXPECT_NE(r.err.find("evil 1.0: file://" + t.file("mirror") + "/evil.tar.gz does not have the pinned SHA-256"),
            std::string::npos)
      << r.err;
  // Fixed at the source: the next run keeps what is there and completes.
  testing::write_file(t.file("mirror/evil.tar.gz"), "pinned bytes\n");
  r = testing::run(argv, 60, {"NODEPROBE_PINNED_DEPS=" + t.file("pins.txt")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok       good 1.0 (good.tar.gz, already there)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fetched  evil 1.0"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nodeprobe
