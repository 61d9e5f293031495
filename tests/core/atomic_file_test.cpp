#include "nodeprobe/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "nodeprobe/error.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::read_file;
using testing::TempDir;

std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, WritesAndReplaces) {
  TempDir d;
  const std::string p = d.file("r.json");
  write_file_atomic(p, "one");
  EXPECT_EQ(read_file(p), "one");
  write_file_atomic(p, "two");
  EXPECT_EQ(read_file(p), "two");
  EXPECT_EQ(entries(d.path()), 1u);  // no temp file left
}

TEST(AtomicFile, FailureLeavesDestinationAndNoTemp) {
  TempDir d;
  EXPECT_THROW(write_file_atomic(d.file("missing/r.json"), "x"), ApiError);
  const std::string p = d.file("r.json");
  write_file_atomic(p, "keep");
  std::filesystem::create_directory(d.file("adir"));
  EXPECT_THROW(write_file_atomic(d.file("adir"), "x"), ApiError);  // rename onto a directory
  EXPECT_EQ(read_file(p), "keep");
  EXPECT_EQ(entries(d.path()), 2u);
}

TEST(AtomicFile, NothrowVariant) {
  TempDir d;
  const std::string p = d.file("a"), tmp = d.file(".a.tmp");
  EXPECT_TRUE(write_file_atomic_nothrow(p.c_str(), tmp.c_str(), "abc", 3));
  EXPECT_EQ(read_file(p), "abc");
  const std::string bad = d.file("no/such"), badtmp = d.file("no/such.tmp");
  EXPECT_FALSE(write_file_atomic_nothrow(bad.c_str(), badtmp.c_str(), "abc", 3));
}

}  // namespace
}  // namespace nodeprobe
