// Where CUDA libraries are looked for: $NODEPROBE_CUDA_LIBRARY_PATH alone
// when set, else the loader's search and then the toolkit's directories (a
// health check run by Slurm or cron has no LD_LIBRARY_PATH).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "nodeprobe/shared_library.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::TempDir;

// A copy of the dummy library under a soname the loader cannot find by itself.
std::string plant(const TempDir& dir, const std::string& soname) {
  std::ifstream in(NODEPROBE_DUMMY_LIBRARY, std::ios::binary);
  std::ofstream out(dir.file(soname), std::ios::binary);
  out << in.rdbuf();
  return dir.file(soname);
}

class CudaLibrarySearch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("NODEPROBE_CUDA_LIBRARY_PATH")) saved_ = v, had_ = true;
    ::unsetenv("NODEPROBE_CUDA_LIBRARY_PATH");
  }
  void TearDown() override {
    if (had_) ::setenv("NODEPROBE_CUDA_LIBRARY_PATH", saved_.c_str(), 1);
    else ::unsetenv("NODEPROBE_CUDA_LIBRARY_PATH");
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(CudaLibrarySearch, ToolkitDirectoriesAfterTheLoadersSearch) {
  TempDir toolkit;
  const std::string path = plant(toolkit, "libnodeprobe_dummy_a.so.9");
  EXPECT_FALSE(SharedLibrary::open("libnodeprobe_dummy_a.so.9").ok()) << "not on the loader's path";
  TempDir empty;
  const SharedLibrary lib = SharedLibrary::open_cuda("libnodeprobe_dummy_a.so.9", {empty.path(), toolkit.path()});
  ASSERT_TRUE(lib.ok()) << lib.error();
  EXPECT_EQ(lib.path(), path);
  EXPECT_NE(lib.symbol("nodeprobe_dummy_library_answer"), nullptr);
}

TEST_F(CudaLibrarySearch, MissingEverywhereNamesWhereItLooked) {
  TempDir empty;
  const SharedLibrary lib = SharedLibrary::open_cuda("libnodeprobe_dummy_b.so.9", {empty.path()});
  EXPECT_FALSE(lib.ok());
  EXPECT_NE(lib.error().find("cannot load libnodeprobe_dummy_b.so.9"), std::string::npos) << lib.error();
  EXPECT_NE(lib.error().find("nor in " + empty.path()), std::string::npos) << lib.error();
}

TEST_F(CudaLibrarySearch, TheVariableAloneWhenSet) {
  TempDir toolkit, elsewhere;
  plant(toolkit, "libnodeprobe_dummy_c.so.9");
  ::setenv("NODEPROBE_CUDA_LIBRARY_PATH", elsewhere.path().c_str(), 1);
  const SharedLibrary lib = SharedLibrary::open_cuda("libnodeprobe_dummy_c.so.9", {toolkit.path()});
  EXPECT_FALSE(lib.ok()) << "the toolkit copy must not be used when the variable names other directories";
  EXPECT_NE(lib.error().find("NODEPROBE_CUDA_LIBRARY_PATH"), std::string::npos) << lib.error();
  EXPECT_NE(lib.error().find(elsewhere.path()), std::string::npos) << lib.error();
}

TEST_F(CudaLibrarySearch, DirectoriesOfTheCallerAreNamedAsTheirs) {
  TempDir a, b;
  const SharedLibrary lib = SharedLibrary::open("libnodeprobe_dummy_d.so.9", {a.path(), b.path()});
  EXPECT_FALSE(lib.ok());
  EXPECT_NE(lib.error().find("from " + a.path() + ", " + b.path() + ":"), std::string::npos) << lib.error();
  EXPECT_EQ(lib.error().find("NODEPROBE_CUDA_LIBRARY_PATH"), std::string::npos)
      << "the variable is not set: " << lib.error();
}

TEST(CudaToolkitDirs, TheToolkitsStandardPlaces) {
  const auto dirs = cuda_toolkit_dirs();
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/usr/local/cuda/lib64");
}

}  // namespace
}  // namespace nodeprobe
