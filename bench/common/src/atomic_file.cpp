#include "nodeprobe/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nodeprobe/error.h"
#include "nodeprobe/stop.h"

namespace nodeprobe {
namespace {

[[noreturn]] void fail(int err, const std::string& what, const char* call, int line) {
  throw_api_error("posix", err, errno_name(err), std::strerror(err) + (": " + what), call, __FILE__, line);
}

void split(const std::string& path, std::string* dir, std::string* base) {
  const auto slash = path.rfind('/');
  *dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  *base = slash == std::string::npos ? path : path.substr(slash + 1);
}

// "" or why `base` in `dir_fd` must not be replaced.
std::string destination_problem(int dir_fd, const std::string& base, const std::string& path) {
  struct stat st {};
  if (::fstatat(dir_fd, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  if (S_ISLNK(st.st_mode))
    return path + " is a symbolic link; nodeprobe never writes through or replaces a link (name the file itself)";
  if (S_ISDIR(st.st_mode)) return path + " is a directory";
  return {};
}

}  // namespace

bool write_all(int fd, const char* data, std::size_t size) noexcept {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

AtomicFile::AtomicFile(std::string path, mode_t mode) : path_(std::move(path)) {
  std::string dir;
  split(path_, &dir, &base_);
  if (base_.empty() || base_ == "." || base_ == "..") fail(EISDIR, path_ + " names no file", "AtomicFile", __LINE__);
  dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) fail(errno, "directory of " + path_, "open(dir)", __LINE__);
  if (auto why = destination_problem(dir_fd_, base_, path_); !why.empty()) {
    ::close(dir_fd_);
    dir_fd_ = -1;
    fail(EEXIST, why, "AtomicFile", __LINE__);
  }
  // A planted name (link or file) makes O_EXCL fail: try fresh names a few times.
  for (int attempt = 0; attempt < 8 && fd_ < 0; ++attempt) {
    // 48 random bits: planting a link at the name ahead of time does not work.
    tmp_name_ = "." + base_.substr(0, 200) + ".tmp-" + random_hex(6);
    fd_ = ::openat(dir_fd_, tmp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int e = errno;
    ::close(dir_fd_);
    dir_fd_ = -1;
    fail(e, "temporary file for " + path_, "openat(O_CREAT|O_EXCL|O_NOFOLLOW)", __LINE__);
  }
  tmp_path_ = (dir == "/" ? "" : dir) + "/" + tmp_name_;
  cleanup_id_ = register_stop_cleanup(tmp_path_, CleanupKind::kFile);
}

AtomicFile::~AtomicFile() {
  if (!committed_) abandon();
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void AtomicFile::abandon() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_name_.empty()) ::unlinkat(dir_fd_, tmp_name_.c_str(), 0);
  tmp_name_.clear();
  unregister_stop_cleanup(cleanup_id_);
  cleanup_id_ = -1;
}

void AtomicFile::write(std::string_view data) {
  if (fd_ < 0) fail(EBADF, path_ + " is already committed", "AtomicFile::write", __LINE__);
  if (!write_all(fd_, data.data(), data.size())) fail(errno, path_, "write(temporary)", __LINE__);
}

void AtomicFile::commit() {
  if (fd_ < 0) fail(EBADF, path_ + " is already committed", "AtomicFile::commit", __LINE__);
  int e = 0;
  const char* call = "fsync(temporary)";
  if (::fsync(fd_) != 0) e = errno;
  if (::close(fd_) != 0 && e == 0) {
    e = errno;  // where NFS reports a failed write
    call = "close(temporary)";
  }
  fd_ = -1;
  std::string why;
  if (e == 0) why = destination_problem(dir_fd_, base_, path_);
  if (e == 0 && why.empty() && ::renameat(dir_fd_, tmp_name_.c_str(), dir_fd_, base_.c_str()) != 0) {
    e = errno;
    call = "renameat";
  }
  if (e != 0 || !why.empty()) {
    abandon();
    if (!why.empty()) fail(EEXIST, why, "AtomicFile::commit", __LINE__);
    fail(e, path_, call, __LINE__);
  }
  tmp_name_.clear();
  committed_ = true;
  unregister_stop_cleanup(cleanup_id_);
  cleanup_id_ = -1;
  // The rename itself is only durable once the directory is on disk.
  ::fsync(dir_fd_);
}

void write_file_atomic(const std::string& path, std::string_view content, mode_t mode) {
  if (path == "-") {
    if (!write_all(STDOUT_FILENO, content.data(), content.size())) fail(errno, "stdout", "write(stdout)", __LINE__);
    return;
  }
  AtomicFile f(path, mode);
  f.write(content);
  f.commit();
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(errno ? errno : EIO, "getrandom", "getrandom()", __LINE__);
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  char two[3];
  for (char c : raw) {
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    hex += two;
  }
  return hex;
}

int create_new_file(int dir_fd, const std::string& rel, mode_t mode) noexcept {
  return ::openat(dir_fd, rel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

std::string check_output_path(const std::string& path) {
  if (path.empty() || path == "-") return {};
  std::string dir, base;
  split(path, &dir, &base);
  const std::string head = "cannot write report " + path + ": ";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return head + "directory " + dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return head + dir + " is not a directory";
  if (::access(dir.c_str(), W_OK) != 0) return head + "directory " + dir + " is not writable";
  struct stat target {};
  if (::lstat(path.c_str(), &target) == 0) {
    if (S_ISLNK(target.st_mode)) return head + "it is a symbolic link (nodeprobe never writes through a link)";
    if (S_ISDIR(target.st_mode)) return head + "it is a directory";
  }
  return {};
}

}  // namespace nodeprobe
