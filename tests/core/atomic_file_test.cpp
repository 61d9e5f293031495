// The safe file writer: exclusive temporary, never through a link, rename.
// The attacks of issue 14 are reproduced first (a link planted at the old
// predictable temporary name, a link at the destination) and must fail.
#include "nodeprobe/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "nodeprobe/error.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

bool is_link(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
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
  EXPECT_THROW(write_file_atomic(d.file("adir"), "x"), ApiError);
  EXPECT_EQ(read_file(p), "keep");
  EXPECT_EQ(entries(d.path()), 2u);
}

// The attack of issue 14: the temporary used to be ".<name>.tmp.<pid>",
// opened O_CREAT|O_TRUNC, so a link planted there made root overwrite the
// link's target.
TEST(AtomicFile, LinkPlantedAtTheOldPredictableTempNameIsNotFollowed) {
  TempDir d;
  const std::string victim = d.file("victim");
  write_file(victim, "precious");
  const std::string planted = d.file(".r.json.tmp." + std::to_string(::getpid()));
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  write_file_atomic(d.file("r.json"), "report");
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_EQ(read_file(d.file("r.json")), "report");
  EXPECT_TRUE(is_link(planted));  // left alone, not written through
}

TEST(AtomicFile, TemporaryIsFreshExclusiveAndUnpredictable) {
  TempDir d;
  AtomicFile a(d.file("r.json")), b(d.file("r.json"));
  EXPECT_NE(a.temp_path(), b.temp_path());
  const std::string name = a.temp_path().substr(a.temp_path().rfind('/') + 1);
  ASSERT_EQ(name.rfind(".r.json.tmp-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string(".r.json.tmp-").size() + 12);  // 48 random bits
  struct stat st {};
  ASSERT_EQ(::lstat(a.temp_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  // What the temporary is created with: O_CREAT|O_EXCL|O_NOFOLLOW refuses a planted link.
  const std::string link = d.file("planted");
  ASSERT_EQ(::symlink(d.file("elsewhere").c_str(), link.c_str()), 0);
  EXPECT_LT(create_new_file(AT_FDCWD, link), 0);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_FALSE(std::filesystem::exists(d.file("elsewhere")));
}

TEST(AtomicFile, DestinationThatIsALinkIsRefusedNotFollowedNorReplaced) {
  TempDir d;
  const std::string victim = d.file("victim");
  write_file(victim, "precious");
  const std::string dest = d.file("r.json");
  ASSERT_EQ(::symlink(victim.c_str(), dest.c_str()), 0);
  try {
    write_file_atomic(dest, "report");
    FAIL() << "wrote through a link";
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_TRUE(is_link(dest));
  EXPECT_EQ(entries(d.path()), 2u);  // no temporary left
  EXPECT_NE(check_output_path(dest).find("symbolic link"), std::string::npos);
  // A dangling link too: following it would create a file wherever it points.
  const std::string dangling = d.file("d.json");
  ASSERT_EQ(::symlink(d.file("nowhere").c_str(), dangling.c_str()), 0);
  EXPECT_THROW(write_file_atomic(dangling, "x"), ApiError);
  EXPECT_FALSE(std::filesystem::exists(d.file("nowhere")));
}

TEST(AtomicFile, LinkPlantedAtTheDestinationBeforeCommitIsRefused) {
  TempDir d;
  const std::string victim = d.file("victim");
  write_file(victim, "precious");
  const std::string dest = d.file("r.json");
  AtomicFile f(dest);
  f.write("report");
  ASSERT_EQ(::symlink(victim.c_str(), dest.c_str()), 0);
  EXPECT_THROW(f.commit(), ApiError);
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_FALSE(std::filesystem::exists(f.temp_path()));
}

TEST(AtomicFile, UncommittedTemporaryIsRemoved) {
  TempDir d;
  std::string tmp;
  {
    AtomicFile f(d.file("r.json"));
    f.write("half");
    tmp = f.temp_path();
    EXPECT_TRUE(std::filesystem::exists(tmp));
  }
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_FALSE(std::filesystem::exists(d.file("r.json")));
}

TEST(AtomicFile, CreateNewFileNeverReplaces) {
  TempDir d;
  const int fd = create_new_file(AT_FDCWD, d.file("a"));
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_LT(create_new_file(AT_FDCWD, d.file("a")), 0);
  EXPECT_EQ(errno, EEXIST);
}

}  // namespace
}  // namespace nodeprobe
