#include "nodeprobe/fs_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "nodeprobe/atomic_file.h"

namespace nodeprobe {

FsRoot::FsRoot(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string FsRoot::resolve(const std::string& path) const { return root_ + path; }

std::optional<std::string> FsRoot::read(const std::string& path) const {
  // Plain read(2): /proc and /sys files report size 0, so no stat-based sizing.
  const int fd = ::open(resolve(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > (64u << 20)) break;  // never slurp something huge by mistake
  }
  ::close(fd);
  return out;
}

std::optional<std::string> FsRoot::read_line(const std::string& path) const {
  auto s = read(path);
  if (!s) return std::nullopt;
  const auto nl = s->find('\n');
  return trim(nl == std::string::npos ? *s : s->substr(0, nl));
}

std::optional<long long> FsRoot::read_int(const std::string& path) const {
  auto s = read_line(path);
  if (!s || s->empty()) return std::nullopt;
  const auto tok = split_ws(*s);
  if (tok.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(tok[0].c_str(), &end, 10);
  if (errno != 0 || end == tok[0].c_str() || *end != '\0') {
    // Values above LLONG_MAX (e.g. shmmax 18446744073692774399) saturate.
    if (errno == ERANGE) return v;
    return std::nullopt;
  }
  return v;
}

bool FsRoot::exists(const std::string& path) const {
  struct stat st {};
  return ::stat(resolve(path).c_str(), &st) == 0;
}

std::vector<std::string> FsRoot::list_dir(const std::string& path) const {
  std::vector<std::string> out;
  DIR* d = ::opendir(resolve(path).c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string FsRoot::why_unreadable(const std::string& real_path) {
  const int fd = ::open(real_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return "unreadable";
  }
  return std::strerror(errno);
}

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

std::string selected_word(const std::string& s) {
  const auto b = s.find('['), e = s.find(']');
  if (b != std::string::npos && e != std::string::npos && e > b) return s.substr(b + 1, e - b - 1);
  return trim(s);
}

namespace {

// The query: statfs(2), then stat(2) for the device; fs_space asks it in
// this process, fs_space_within in a child (async-signal-safe calls only).
int query_statfs(const char* path, RawFsAnswer* out) {
  struct statfs st {};
  if (::statfs(path, &st) != 0) return errno;
  out->frsize = static_cast<unsigned long long>(st.f_frsize ? st.f_frsize : st.f_bsize);
  out->blocks = st.f_blocks;
  out->bavail = st.f_bavail;
  out->files = st.f_files;
  out->ffree = st.f_ffree;
  out->flags = static_cast<unsigned long long>(st.f_flags);
  struct stat sb {};
  if (::stat(path, &sb) == 0) {
    out->device = static_cast<unsigned long long>(sb.st_dev);
    out->have_device = 1;
  }
  return 0;
}

// In the child: every descriptor but `keep` closed, so one left blocked in
// the kernel holds none of the parent's (its stdout pipe to accept's runner,
// sockets). close_range(2) where the kernel has it, else one close per slot.
void close_all_but(int keep) {
#ifdef SYS_close_range
  const bool below = keep == 0 || ::syscall(SYS_close_range, 0U, static_cast<unsigned>(keep - 1), 0U) == 0;
  if (below && ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U) == 0) return;
#endif
  rlimit rl{};
  int slots = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    slots = static_cast<int>(std::min<rlim_t>(rl.rlim_cur, 65536));
  for (int fd = 0; fd < slots; ++fd)
    if (fd != keep) ::close(fd);
}

// The one conversion of a statfs answer, in-process or from the child.
FsSpace space_from(const RawFsAnswer& a) {
  FsSpace s;
  s.block_size = a.frsize;
  s.size_bytes = a.blocks * a.frsize;
  s.free_bytes = a.bavail * a.frsize;
  s.read_only = (a.flags & ST_RDONLY) != 0;
  s.inodes = a.files;
  s.free_inodes = a.ffree;
  if (a.have_device) s.device = a.device;
  return s;
}

struct ChildReply {
  int error = 0;
  RawFsAnswer answer;
};

bool read_all(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

std::optional<FsSpace> fs_space(const std::string& path) {
  RawFsAnswer a;
  const int err = query_statfs(path.c_str(), &a);
  if (err != 0) {
    errno = err;
    return std::nullopt;
  }
  return space_from(a);
}

BoundedFsSpace fs_space_within(const std::string& path, int limit_ms) {
  return fs_space_within(path, limit_ms, &query_statfs);
}

BoundedFsSpace fs_space_within(const std::string& path, int limit_ms, ChildFsQuery query) {
  BoundedFsSpace out;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.error = errno;
    return out;
  }
  const char* cpath = path.c_str();
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {  // the child: async-signal-safe calls only
    close_all_but(fds[1]);
    ChildReply reply;
    reply.error = query(cpath, &reply.answer);
    (void)write_all(fds[1], reinterpret_cast<const char*>(&reply), sizeof reply);  // none: the parent sees EOF
    ::_exit(0);
  }
  ::close(fds[1]);
  pollfd pfd{fds[0], POLLIN, 0};
  int ready = 0, poll_errno = 0;
  for (int waited = 0;;) {  // EINTR: wait out the rest of the limit in 100 ms steps
    const int step = std::min(100, std::max(0, limit_ms - waited));
    ready = ::poll(&pfd, 1, step);
    poll_errno = errno;
    if (ready > 0 || (ready < 0 && poll_errno != EINTR)) break;
    waited += step;
    if (waited >= limit_ms) {
      ready = 0;
      break;
    }
  }
  ChildReply reply;
  const bool answered = ready > 0 && read_all(fds[0], &reply, sizeof reply);
  if (!answered) {
    if (ready == 0)
      out.timed_out = true;
    else
      out.error = ready < 0 ? poll_errno : EIO;  // poll failed, or the child died without a reply
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, WNOHANG);  // one blocked in the kernel is reaped by init after we exit
    ::close(fds[0]);
    return out;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (reply.error != 0) {
    out.error = reply.error;
    return out;
  }
  out.space = space_from(reply.answer);
  return out;
}

namespace {

std::string decode_octal(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool MountEntry::read_only() const { return ("," + options + ",").find(",ro,") != std::string::npos; }

std::vector<MountEntry> parse_mounts(const std::string& text) {
  std::vector<MountEntry> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto f = split_ws(line);
    if (f.size() < 4) continue;
    out.push_back({decode_octal(f[0]), decode_octal(f[1]), f[2], f[3]});
  }
  return out;
}

bool local_block_fs(const std::string& type) {
  static const char* kLocal[] = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "jfs"};
  return std::any_of(std::begin(kLocal), std::end(kLocal), [&](const char* k) { return type == k; });
}

bool network_fs(const std::string& type) {
  static const char* kNetwork[] = {"nfs", "nfs4", "lustre", "beegfs", "gpfs", "ceph", "cifs", "smb3", "wekafs",
                                   "fuse.glusterfs", "glusterfs"};
  return std::any_of(std::begin(kNetwork), std::end(kNetwork), [&](const char* k) { return type == k; });
}

bool system_mount_dir(const std::string& dir) {
  static const char* kSystem[] = {"/boot", "/efi", "/etc", "/usr", "/proc", "/sys", "/dev", "/run", "/var/run", "/snap"};
  for (const char* p : kSystem)
    if (dir == p || dir.rfind(std::string(p) + "/", 0) == 0) return true;
  return false;
}

namespace {
bool writable_outside_system(const MountEntry& m) { return !m.read_only() && m.dir != "/" && !system_mount_dir(m.dir); }
}  // namespace

bool data_volume(const MountEntry& m) { return local_block_fs(m.type) && writable_outside_system(m); }

bool network_data_volume(const MountEntry& m) { return network_fs(m.type) && writable_outside_system(m); }

}  // namespace nodeprobe
