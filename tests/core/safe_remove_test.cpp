// The safe deletion helper: only marked trees, never across a link.
#include "nodeprobe/safe_remove.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "nodeprobe/error.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

// Files outside the tree that a link inside points to.
struct Outside {
  TempDir d;
  Outside() {
    fs::create_directories(d.file("data/0000"));
    write_file(d.file("data/0000/00000001.bin"), "precious");
    write_file(d.file("keep.txt"), "precious");
  }
};

TEST(SafeRemove, OwnedTreeGoesAndLinksInsideAreNotCrossed) {
  TempDir parent;
  Outside out;
  const std::string dir = make_owned_temp_dir(parent.path(), "np-test");
  fs::create_directories(dir + "/a/b");
  write_file(dir + "/a/b/f", "x");
  write_file(dir + "/g", "yy");
  ASSERT_EQ(::symlink(out.d.file("data").c_str(), (dir + "/a/link-dir").c_str()), 0);
  ASSERT_EQ(::symlink(out.d.file("keep.txt").c_str(), (dir + "/link-file").c_str()), 0);
  const RemoveResult r = remove_tree(dir);
  EXPECT_TRUE(r.root_removed);
  EXPECT_TRUE(r.left.empty());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_EQ(read_file(out.d.file("data/0000/00000001.bin")), "precious");
  EXPECT_EQ(read_file(out.d.file("keep.txt")), "precious");
  EXPECT_EQ(r.files, 5u);  // f, g, two links, the marker
}

TEST(SafeRemove, TreeWithoutTheMarkerIsNotTouched) {
  TempDir d;
  fs::create_directories(d.file("t/sub"));
  write_file(d.file("t/sub/f"), "x");
  EXPECT_THROW(remove_tree(d.file("t")), NotOwnedError);
  EXPECT_TRUE(fs::exists(d.file("t/sub/f")));
  // A marker that is a link is no marker.
  ASSERT_EQ(::symlink(d.file("t/sub/f").c_str(), d.file(std::string("t/") + kOwnedMarker).c_str()), 0);
  EXPECT_THROW(remove_tree(d.file("t")), NotOwnedError);
  EXPECT_TRUE(fs::exists(d.file("t/sub/f")));
}

TEST(SafeRemove, RootThatIsALinkIsNotFollowed) {
  TempDir parent;
  const std::string dir = make_owned_temp_dir(parent.path(), "np-test");
  write_file(dir + "/f", "x");
  ASSERT_EQ(::symlink(dir.c_str(), parent.file("alias").c_str()), 0);
  EXPECT_THROW(remove_tree(parent.file("alias")), NotOwnedError);
  EXPECT_TRUE(fs::exists(dir + "/f"));
}

TEST(SafeRemove, FilterKeepsEntriesAndTheirDirectories) {
  TempDir parent;
  const std::string dir = make_owned_temp_dir(parent.path(), "np-test");
  fs::create_directories(dir + "/s/t");
  write_file(dir + "/s/t/ours.bin", "x");
  write_file(dir + "/s/t/theirs.txt", "y");
  RemoveOptions o;
  o.filter = [](const std::string& rel, EntryKind k) {
    return k == EntryKind::kDir || rel.size() < 4 || rel.substr(rel.size() - 4) == ".bin";
  };
  const RemoveResult r = remove_tree(dir, o);
  EXPECT_FALSE(r.root_removed);
  ASSERT_EQ(r.left.size(), 1u);
  EXPECT_EQ(r.left[0], "s/t/theirs.txt");
  EXPECT_TRUE(fs::exists(dir + "/s/t/theirs.txt"));
  EXPECT_FALSE(fs::exists(dir + "/s/t/ours.bin"));
  EXPECT_FALSE(fs::exists(dir + "/" + kOwnedMarker));  // the marker goes in any case
}

TEST(SafeRemove, OwnedTempDirGoesWithItsScope) {
  TempDir parent;
  std::string path;
  {
    OwnedTempDir t(parent.path(), "np-test");
    path = t.path();
    write_file(path + "/f", "x");
    EXPECT_TRUE(fs::exists(path + "/" + kOwnedMarker));
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_all);
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace nodeprobe
