#include "nodeprobe/input.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "nodeprobe/size.h"

namespace nodeprobe {
namespace {

// "a FIFO", "a character device"...: what a non-regular file is, for messages.
std::string type_text(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

std::string errno_text(int e) { return std::strerror(e); }

// Components of a relative path; empty when it has "", "." or ".." parts or is absolute.
std::vector<std::string> components(const std::string& rel) {
  std::vector<std::string> out;
  if (rel.empty() || rel.front() == '/') return {};
  std::size_t start = 0;
  while (start <= rel.size()) {
    const std::size_t e = rel.find('/', start);
    std::string c = rel.substr(start, e == std::string::npos ? std::string::npos : e - start);
    if (c.empty() || c == "." || c == "..") return {};
    out.push_back(std::move(c));
    if (e == std::string::npos) break;
    start = e + 1;
  }
  return out;
}

[[noreturn]] void throw_too_big(const std::string& name, const InputLimits& l) {
  throw InputError(name + ": larger than the " + format_size(l.max_bytes) + " cap for " + l.kind +
                   " (raise it with --max-input-size)");
}

}  // namespace

std::uint64_t default_input_cap(InputKind kind) {
  switch (kind) {
    case InputKind::kReport: return 64ULL << 20;
    case InputKind::kConfig: return 16ULL << 20;
    case InputKind::kManifest: return 16ULL << 20;
    case InputKind::kLog: return 8ULL << 30;
    case InputKind::kArchive: return 8ULL << 30;
  }
  return 64ULL << 20;
}

InputLimits input_limits(InputKind kind, const InputOverrides& o) {
  static const char* kKinds[] = {"reports", "data files", "bundle manifests", "logs", "bundles"};
  InputLimits l;
  l.kind = kKinds[static_cast<int>(kind)];
  l.max_bytes = o.max_bytes > 0 ? o.max_bytes : default_input_cap(kind);
  if (o.read_timeout_s > 0 && std::isfinite(o.read_timeout_s)) l.read_timeout_s = o.read_timeout_s;
  return l;
}

InputFile::InputFile(int fd, bool own, std::string name, const InputLimits& limits)
    : fd_(fd), own_(own), name_(std::move(name)), limits_(limits) {}

InputFile::InputFile(InputFile&& o) noexcept
    : fd_(o.fd_), own_(o.own_), pipe_(o.pipe_), wait_(o.wait_), name_(std::move(o.name_)), limits_(o.limits_),
      read_(o.read_), size_(o.size_) {
  o.fd_ = -1;
  o.own_ = false;
}

InputFile& InputFile::operator=(InputFile&& o) noexcept {
  if (this != &o) {
    if (own_ && fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    own_ = o.own_;
    pipe_ = o.pipe_;
    wait_ = o.wait_;
    name_ = std::move(o.name_);
    limits_ = o.limits_;
    read_ = o.read_;
    size_ = o.size_;
    o.fd_ = -1;
    o.own_ = false;
  }
  return *this;
}

InputFile::~InputFile() {
  if (own_ && fd_ >= 0) ::close(fd_);
}

void InputFile::check_type() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw InputError(name_ + ": " + errno_text(errno));
  if (S_ISREG(st.st_mode)) {
    size_ = static_cast<std::uint64_t>(st.st_size);
    // Known to be too big before reading a byte.
    if (size_ > limits_.max_bytes && limits_.max_bytes > 0) throw_too_big(name_, limits_);
    // Regular files never block; clear O_NONBLOCK so reads are plain.
    const int fl = ::fcntl(fd_, F_GETFL);
    if (fl >= 0) ::fcntl(fd_, F_SETFL, fl & ~O_NONBLOCK);
    // Except pseudo files that say size 0 (/proc/kmsg waits for messages):
    // they get the read deadline too (poll returns at once for real files).
    wait_ = size_ == 0;
    return;
  }
  if (own_) throw InputError(name_ + ": is " + type_text(st.st_mode) + ", not a regular file" +
                             (S_ISFIFO(st.st_mode) ? " (to read a pipe, give '-' and redirect it to stdin)" : ""));
  // stdin: a pipe or socket is fine (read with a deadline); a terminal or device is not.
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    pipe_ = wait_ = true;
    return;
  }
  if (S_ISCHR(st.st_mode) && ::isatty(fd_))
    throw InputError("stdin is a terminal: redirect a file or a pipe into it ('- < FILE')");
  throw InputError("stdin is " + type_text(st.st_mode) + ", not a file or a pipe");
}

InputFile InputFile::open(const std::string& path, const InputLimits& limits) {
  if (path == "-") {
    InputFile f(STDIN_FILENO, false, "stdin", limits);
    f.check_type();
    return f;
  }
  // Look before opening: opening a device can have effects (a watchdog, a
  // tape), and opening a FIFO without a writer would wait for one.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError("cannot open " + path + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) {
    throw InputError(path + ": is " + type_text(st.st_mode) + ", not a regular file" +
                     (S_ISFIFO(st.st_mode) ? " (to read a pipe, give '-' and redirect it to stdin)" : ""));
  }
  // O_NONBLOCK: should the path have been swapped for a FIFO since the
  // stat, open still returns at once and check_type() refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw InputError("cannot open " + path + ": " + errno_text(errno));
  InputFile f(fd, true, path, limits);
  f.check_type();
  return f;
}

InputFile InputFile::open_beneath(int dir_fd, const std::string& rel, const InputLimits& limits,
                                  const std::string& shown) {
  const std::vector<std::string> parts = components(rel);
  if (parts.empty()) throw InputError(shown + ": not a safe relative path");
  int cur = dir_fd;
  auto close_cur = [&] {
    if (cur != dir_fd) ::close(cur);
  };
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    struct stat st {};
    if (::fstatat(cur, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int e = errno;
      close_cur();
      throw InputError("cannot open " + shown + ": " + errno_text(e));
    }
    if (!S_ISDIR(st.st_mode)) {
      close_cur();
      throw InputError(shown + ": " + parts[i] + " is " + type_text(st.st_mode) +
                       (S_ISLNK(st.st_mode) ? " (not followed inside a bundle)" : ", not a directory"));
    }
    const int next = ::openat(cur, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int e = errno;
    close_cur();
    if (next < 0) throw InputError("cannot open " + shown + ": " + errno_text(e));
    cur = next;
  }
  struct stat st {};
  if (::fstatat(cur, parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    const int e = errno;
    close_cur();
    throw InputError("cannot open " + shown + ": " + errno_text(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close_cur();
    throw InputError(shown + ": is " + type_text(st.st_mode) +
                     (S_ISLNK(st.st_mode) ? " (not followed inside a bundle)" : ", not a regular file"));
  }
  const int fd = ::openat(cur, parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  const int e = errno;
  close_cur();
  if (fd < 0) throw InputError("cannot open " + shown + ": " + errno_text(e));
  InputFile f(fd, true, shown, limits);
  struct stat now {};
  if (::fstat(fd, &now) == 0 && S_ISREG(now.st_mode) && now.st_nlink > 1)
    throw InputError(shown + ": has " + std::to_string(now.st_nlink) +
                     " hard links (a bundle's files have one; not read)");
  f.check_type();
  return f;
}

std::size_t InputFile::read(char* dst, std::size_t n) {
  if (fd_ < 0 || n == 0) return 0;
  const std::uint64_t cap = limits_.max_bytes;
  // Past the cap only to tell "exactly the cap" from "more than the cap".
  const std::size_t want = cap == 0 ? n : static_cast<std::size_t>(std::min<std::uint64_t>(n, cap - std::min(cap, read_) + 1));
  for (;;) {
    if (wait_) {
      pollfd p{fd_, POLLIN, 0};
      const double t = limits_.read_timeout_s;
      const int ms = t > 2e6 ? -1 : static_cast<int>(std::ceil(t * 1000));
      const int rc = ::poll(&p, 1, ms);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) throw InputError(name_ + ": " + errno_text(errno));
      if (rc == 0) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", t);
        throw InputError(name_ + ": no data for " + std::string(secs) + " s (raise it with --read-timeout)");
      }
    }
    const ssize_t k = ::read(fd_, dst, want);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k < 0) throw InputError(name_ + ": read error: " + errno_text(errno));
    read_ += static_cast<std::uint64_t>(k);
    if (cap > 0 && read_ > cap) throw_too_big(name_, limits_);
    return static_cast<std::size_t>(k);
  }
}

std::string InputFile::read_all() {
  std::string out;
  if (size_ > 0) out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(size_, limits_.max_bytes)));
  char buf[1 << 16];
  for (;;) {
    const std::size_t k = read(buf, sizeof buf);
    if (k == 0) break;
    out.append(buf, k);
  }
  return out;
}

void InputFile::seek(std::uint64_t offset) {
  if (pipe_) throw InputError(name_ + ": a pipe cannot be read from an offset");
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) throw InputError(name_ + ": " + errno_text(errno));
}

std::string read_input(const std::string& path, const InputLimits& limits) {
  return InputFile::open(path, limits).read_all();
}

DirHandle::DirHandle(const std::string& path) : name_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(path + ": cannot open directory: " + errno_text(errno));
}

DirHandle::DirHandle(const DirHandle& parent, const std::string& rel) : name_(parent.name_ + "/" + rel) {
  const std::vector<std::string> parts = components(rel);
  if (parts.empty()) throw InputError(name_ + ": not a safe relative path");
  int cur = parent.fd();
  for (const auto& p : parts) {
    const int next = ::openat(cur, p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int e = errno;
    if (cur != parent.fd()) ::close(cur);
    if (next < 0)
      throw InputError(name_ + ": " + (e == ELOOP || e == ENOTDIR ? p + " is a symbolic link or not a directory (not followed)"
                                                                  : "cannot open: " + errno_text(e)));
    cur = next;
  }
  fd_ = cur;
}

DirHandle::~DirHandle() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<DirEntryInfo> walk_dir(const DirHandle& dir, bool follow_links, int max_depth,
                                   std::size_t max_entries) {
  std::vector<DirEntryInfo> out;
  struct Pending {
    int fd;
    std::string rel;  // "" for the top
    int depth;
  };
  std::vector<Pending> stack;
  const int top = ::dup(dir.fd());
  if (top < 0) return {{"", false, "cannot read directory: " + errno_text(errno)}};
  stack.push_back({top, "", 0});
  bool full = false;
  while (!stack.empty()) {
    Pending cur = stack.back();
    stack.pop_back();
    DIR* d = ::fdopendir(cur.fd);
    if (!d) {
      out.push_back({cur.rel, false, "cannot read directory: " + errno_text(errno)});
      ::close(cur.fd);
      continue;
    }
    ::rewinddir(d);
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      if (full) break;
      if (out.size() >= max_entries) {
        full = true;
        break;
      }
      const std::string rel = cur.rel.empty() ? n : cur.rel + "/" + n;
      struct stat st {};
      if (::fstatat(::dirfd(d), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        out.push_back({rel, false, "cannot stat: " + errno_text(errno)});
        continue;
      }
      if (S_ISREG(st.st_mode)) {
        out.push_back({rel, true, ""});
      } else if (S_ISDIR(st.st_mode)) {
        if (cur.depth + 1 > max_depth) {
          out.push_back({rel, false, "deeper than " + std::to_string(max_depth) + " levels (not read)"});
          continue;
        }
        const int fd = ::openat(::dirfd(d), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) out.push_back({rel, false, "cannot read directory: " + errno_text(errno)});
        else stack.push_back({fd, rel, cur.depth + 1});
      } else if (S_ISLNK(st.st_mode)) {
        if (!follow_links) {
          out.push_back({rel, false, "symbolic link (not followed)"});
          continue;
        }
        struct stat target {};
        if (::fstatat(::dirfd(d), n.c_str(), &target, 0) != 0) {
          const int e = errno;
          out.push_back({rel, false, e == ELOOP ? "symbolic link loop"
                                     : e == ENOENT ? "dangling symbolic link"
                                                   : "symbolic link: " + errno_text(e)});
        } else if (S_ISREG(target.st_mode)) {
          out.push_back({rel, true, ""});
        } else {
          out.push_back({rel, false, "symbolic link to " + type_text(target.st_mode) + " (not followed)"});
        }
      } else {
        out.push_back({rel, false, "is " + type_text(st.st_mode) + ", not a regular file"});
      }
    }
    ::closedir(d);  // closes cur.fd
  }
  std::sort(out.begin(), out.end(), [](const DirEntryInfo& a, const DirEntryInfo& b) { return a.rel < b.rel; });
  if (full) out.push_back({"", false, "more than " + std::to_string(max_entries) + " entries: the rest not read"});
  return out;
}

}  // namespace nodeprobe
