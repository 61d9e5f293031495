// fs_space_within: a filesystem's room asked from a child process with a
// time limit, so a network filesystem whose server hangs costs the limit and
// not the caller (the limits probe asks FSx, EFS and NFS volumes this way).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "nodeprobe/fs_root.h"

namespace nodeprobe {
namespace {

// A server that never answers: the child waits for ever (the parent kills it).
int never_answers(const char*, RawFsAnswer*) {
  for (;;) ::pause();
}
int refuses(const char*, RawFsAnswer*) { return EACCES; }
int dies(const char*, RawFsAnswer*) {
  ::_exit(3);  // a child that ends without a reply
}
// Whether the parent's descriptor g_parent_fd is still open in the child.
int g_parent_fd = -1;
int parent_fd_state(const char*, RawFsAnswer*) { return ::fcntl(g_parent_fd, F_GETFD) == -1 ? ENOTCONN : EEXIST; }

TEST(FsSpaceWithin, AnswersAsStatvfsDoes) {
  const auto plain = fs_space("/");
  ASSERT_TRUE(plain.has_value());
  const BoundedFsSpace b = fs_space_within("/", 5000);
  ASSERT_TRUE(b.space.has_value()) << "error " << b.error << (b.timed_out ? " (timed out)" : "");
  EXPECT_FALSE(b.timed_out);
  EXPECT_EQ(b.error, 0);
  EXPECT_EQ(b.space->size_bytes, plain->size_bytes);
  EXPECT_EQ(b.space->block_size, plain->block_size);
  EXPECT_EQ(b.space->device, plain->device);
  EXPECT_EQ(b.space->read_only, plain->read_only);
}

TEST(FsSpaceWithin, AMissingPathIsItsErrno) {
  const BoundedFsSpace b = fs_space_within("/nonexistent/nodeprobe-fs-space-test", 5000);
  EXPECT_FALSE(b.space.has_value());
  EXPECT_FALSE(b.timed_out);
  EXPECT_EQ(b.error, ENOENT);
  EXPECT_EQ(fs_space_within("/", 5000, &refuses).error, EACCES);
}

TEST(FsSpaceWithin, NoAnswerWithinTheLimitIsATimeOutNotAHang) {
  const BoundedFsSpace b = fs_space_within("/", 200, &never_answers);
  EXPECT_TRUE(b.timed_out);
  EXPECT_FALSE(b.space.has_value());
  EXPECT_EQ(b.error, 0);
}

TEST(FsSpaceWithin, AChildThatDiesWithoutAReplyIsAnErrorNotATimeOut) {
  const BoundedFsSpace b = fs_space_within("/", 5000, &dies);
  EXPECT_FALSE(b.timed_out);
  EXPECT_FALSE(b.space.has_value());
  EXPECT_EQ(b.error, EIO);
}

// A child left blocked in the kernel must hold none of the parent's descriptors (a probe's stdout
// pipe to accept's runner would never see its end).
TEST(FsSpaceWithin, TheChildHoldsNoneOfTheParentsDescriptors) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  g_parent_fd = p[1];
  EXPECT_EQ(fs_space_within("/", 5000, &parent_fd_state).error, ENOTCONN);
  ::close(p[0]);
  ::close(p[1]);
}

TEST(NetworkDataVolume, NetworkFilesystemsAreTheirOwnKind) {
  const auto mounts = parse_mounts(
      "198.18.0.10@tcp:/abcd /fsx lustre rw,flock 0 0\n"
      "fs-1.efs.example:/ /efs nfs4 rw,vers=4.1 0 0\n"
      "198.18.0.23:/ro /reference nfs ro 0 0\n"
      "/dev/nvme1n1 /data xfs rw 0 0\n"
      "s3fs /mnt/s3 fuse.s3fs rw 0 0\n"
      "198.18.0.24:/ /run/shared nfs rw 0 0\n");
  ASSERT_EQ(mounts.size(), 6u);
  EXPECT_TRUE(network_data_volume(mounts[0]));
  EXPECT_TRUE(network_data_volume(mounts[1]));
  EXPECT_FALSE(network_data_volume(mounts[2]));  // read-only
  EXPECT_FALSE(network_data_volume(mounts[3]));  // local: data_volume's
  EXPECT_TRUE(data_volume(mounts[3]));
  EXPECT_FALSE(network_data_volume(mounts[4]));  // an object store through FUSE: no statfs worth asking
  EXPECT_FALSE(network_data_volume(mounts[5]));  // a system place
  EXPECT_FALSE(data_volume(mounts[0]));
}

}  // namespace
}  // namespace nodeprobe
