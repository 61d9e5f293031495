#include "limits_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "nodeprobe/clock.h"
#include "nodeprobe/error.h"

namespace nodeprobe::limits {
namespace {

std::string errno_text(int e) { return errno_name(e) + " (" + std::strerror(e) + ")"; }

std::uint64_t from_rlim(rlim_t v) {
  return v == RLIM_INFINITY ? kUnlimited : static_cast<std::uint64_t>(v);
}

}  // namespace

std::optional<RLimit> LiveSystem::rlimit(int resource) const {
  struct rlimit rl {};
  if (::getrlimit(static_cast<__rlimit_resource_t>(resource), &rl) != 0) return std::nullopt;
  return RLimit{from_rlim(rl.rlim_cur), from_rlim(rl.rlim_max)};
}

std::optional<FsSpace> LiveSystem::fs_usage(const std::string& path) const { return fs_space(path); }

BoundedFsSpace LiveSystem::fs_usage_within(const std::string& path, int limit_ms) const {
  return fs_space_within(path, limit_ms);
}

std::uint64_t LiveSystem::open_descriptors() const {
  std::uint64_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

bool LiveSystem::has_cap_ipc_lock() const {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      const unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
      return (caps >> 14) & 1ULL;  // CAP_IPC_LOCK = 14
    }
  }
  return false;
}

Active LiveSystem::try_mlock(std::uint64_t bytes) {
  Active a;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    a.error = "mmap: " + errno_text(errno);
    return a;
  }
  const double t0 = steady_clock().now_s();
  if (::mlock(p, bytes) == 0) {
    a.seconds = steady_clock().now_s() - t0;
    a.ok = true;
    a.achieved = bytes;
    ::munlock(p, bytes);
  } else {
    a.error = errno_text(errno);
  }
  ::munmap(p, bytes);
  return a;
}

Active LiveSystem::try_open_files(std::uint64_t n) {
  Active a;
  const int base = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (base < 0) {
    a.error = "open(/dev/null): " + errno_text(errno);
    return a;
  }
  std::vector<int> fds;
  fds.reserve(n);
  int err = 0;
  while (fds.size() + 1 < n) {  // `base` counts as one
    const int fd = ::fcntl(base, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      err = errno;
      break;
    }
    fds.push_back(fd);
  }
  a.achieved = fds.size() + 1;
  a.ok = err == 0;
  if (err) a.error = errno_text(err);
  for (int fd : fds) ::close(fd);
  ::close(base);
  return a;
}

Active LiveSystem::try_posix_shm(std::uint64_t bytes) {
  Active a;
  std::random_device rd;
  const std::string name = "/nodeprobe-limits-" + std::to_string(::getpid()) + "-" +
                           std::to_string(rd() & 0xffffff);
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    a.error = "shm_open: " + errno_text(errno);
    return a;
  }
  // Unlinked at once: nothing is left behind even if we are killed below.
  ::shm_unlink(name.c_str());
  const double t0 = steady_clock().now_s();
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc == 0) {
    a.seconds = steady_clock().now_s() - t0;
    a.ok = true;
    a.achieved = bytes;
  } else {
    a.error = "posix_fallocate: " + errno_text(rc);
  }
  ::close(fd);
  return a;
}

Active LiveSystem::try_sysv_shm(std::uint64_t bytes) {
  Active a;
  const int id = ::shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (id < 0) {
    a.error = "shmget: " + errno_text(errno);
    return a;
  }
  a.ok = true;
  a.achieved = bytes;
  ::shmctl(id, IPC_RMID, nullptr);
  return a;
}

}  // namespace nodeprobe::limits
