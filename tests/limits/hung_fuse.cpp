// Test helper: a filesystem whose server never answers statfs, mounted as
// a network filesystem type (fuse.glusterfs) through the kernel's FUSE
// protocol on /dev/fuse, without libfuse. It answers INIT, GETATTR and
// anything else at once and keeps every STATFS request waiting: statfs(2) on
// the mount blocks as it does on an NFS or Lustre mount whose server hangs,
// until this process exits (the kernel then aborts the connection).
//
//   np_hung_fuse MOUNTDIR     (root; prints "mounted" once the mount is up)
#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

void reply(int fd, std::uint64_t unique, int error, const void* body, std::size_t n) {
  fuse_out_header h{};
  h.len = static_cast<std::uint32_t>(sizeof h + n);
  h.error = -error;
  h.unique = unique;
  std::vector<char> buf(sizeof h + n);
  std::memcpy(buf.data(), &h, sizeof h);
  if (n) std::memcpy(buf.data() + sizeof h, body, n);
  if (::write(fd, buf.data(), buf.size()) < 0) {
    // ENOENT: the request was interrupted; nothing to do
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: np_hung_fuse MOUNTDIR\n");
    return 2;
  }
  const int fd = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    std::perror("np_hung_fuse: /dev/fuse");
    return 1;
  }
  const std::string opts = "fd=" + std::to_string(fd) + ",rootmode=40000,user_id=0,group_id=0,allow_other";
  if (::mount("np-hung:/vol", argv[1], "fuse.glusterfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
    std::perror("np_hung_fuse: mount");
    return 1;
  }
  std::printf("mounted\n");
  std::fflush(stdout);
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == ENOENT)) continue;
    if (n < static_cast<ssize_t>(sizeof(fuse_in_header))) return 0;  // unmounted (ENODEV)
    fuse_in_header in{};
    std::memcpy(&in, buf.data(), sizeof in);
    switch (in.opcode) {
      case FUSE_INIT: {
        fuse_init_out out{};
        out.major = FUSE_KERNEL_VERSION;
        out.minor = FUSE_KERNEL_MINOR_VERSION;
        out.max_readahead = 65536;
        out.max_write = 65536;
        out.time_gran = 1;
        reply(fd, in.unique, 0, &out, sizeof out);
        break;
      }
      case FUSE_GETATTR: {
        fuse_attr_out out{};
        out.attr_valid = 1;
        out.attr.ino = 1;
        out.attr.mode = S_IFDIR | 0755;
        out.attr.nlink = 2;
        reply(fd, in.unique, 0, &out, sizeof out);
        break;
      }
      case FUSE_STATFS:
        break;  // the server that never answers
      case FUSE_FORGET:
      case FUSE_BATCH_FORGET:
        break;  // no reply expected
      default:
        reply(fd, in.unique, ENOSYS, nullptr, 0);
    }
  }
}
