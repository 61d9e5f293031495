#include <gtest/gtest.h>

#include "cache.h"

namespace nodeprobe::io {
namespace {

const char* kMountinfo =
    "22 1 259:1 / / rw,relatime shared:1 - xfs /dev/nvme0n1p1 rw,attr2,inode64\n"
    "30 22 0:26 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw,size=65536k\n"
    "40 22 259:3 / /opt/dlami/nvme rw,noatime,nodiratime shared:9 - ext4 /dev/nvme1n1 rw\n"
    "41 22 259:4 / /mnt/my\\040data rw,strictatime - xfs /dev/nvme2n1 rw\n"
    "42 40 0:50 / /opt/dlami/nvme/cache rw,relatime - tmpfs tmpfs rw\n";

TEST(IoMountInfo, LongestPrefixWins) {
  auto m = mount_from_text(kMountinfo, "/opt/dlami/nvme/imagenet/train");
  EXPECT_EQ(m.mount_point, "/opt/dlami/nvme");
  EXPECT_EQ(m.fs_type, "ext4");
  EXPECT_EQ(m.source, "/dev/nvme1n1");
  EXPECT_NE(m.options.find("noatime"), std::string::npos);
  m = mount_from_text(kMountinfo, "/opt/dlami/nvme/cache/x");
  EXPECT_EQ(m.fs_type, "tmpfs");
  m = mount_from_text(kMountinfo, "/opt/dlami/nvmeX");  // a prefix of the string, not of the path
  EXPECT_EQ(m.mount_point, "/");
  EXPECT_EQ(m.fs_type, "xfs");
}

TEST(IoMountInfo, EscapesAndSuperOptions) {
  const auto m = mount_from_text(kMountinfo, "/mnt/my data/set");
  EXPECT_EQ(m.mount_point, "/mnt/my data");
  EXPECT_NE(m.options.find("strictatime"), std::string::npos);
  const auto shm = mount_from_text(kMountinfo, "/dev/shm");
  EXPECT_EQ(shm.fs_type, "tmpfs");
  EXPECT_NE(shm.options.find("size=65536k"), std::string::npos);
}

TEST(IoMountInfo, MemoryBacked) {
  EXPECT_TRUE(memory_backed("tmpfs"));
  EXPECT_TRUE(memory_backed("ramfs"));
  EXPECT_FALSE(memory_backed("xfs"));
  EXPECT_FALSE(memory_backed("lustre"));
  EXPECT_TRUE(mount_from_text("garbage line\n", "/x").mount_point.empty());
}

}  // namespace
}  // namespace nodeprobe::io
