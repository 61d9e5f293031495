#include "nodeprobe/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nodeprobe/error.h"

namespace nodeprobe {
namespace {

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

}  // namespace

bool write_file_atomic_nothrow(const char* path, const char* tmp_path, const char* data,
                               std::size_t size) noexcept {
  if (std::strcmp(path, "-") == 0) return write_all(STDOUT_FILENO, data, size);
  const int fd = ::open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = write_all(fd, data, size) && ::fsync(fd) == 0;
  if (::close(fd) != 0 || !ok || ::rename(tmp_path, path) != 0) {
    ::unlink(tmp_path);
    return false;
  }
  return true;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  if (path == "-") {
    if (!write_all(STDOUT_FILENO, content.data(), content.size()))
      throw_api_error("posix", errno, errno_name(errno), std::strerror(errno), "write(stdout)",
                      __FILE__, __LINE__);
    return;
  }
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string tmp = (slash == std::string::npos ? "" : dir) + "." + base + ".tmp." +
                          std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    throw_api_error("posix", e, errno_name(e), std::strerror(e) + (": " + tmp), "open(report)",
                    __FILE__, __LINE__);
  }
  int e = 0;
  if (!write_all(fd, content.data(), content.size()) || ::fsync(fd) != 0) e = errno;
  if (::close(fd) != 0 && e == 0) e = errno;
  if (e == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) e = errno;
  if (e != 0) {
    ::unlink(tmp.c_str());
    throw_api_error("posix", e, errno_name(e), std::strerror(e) + (": " + path), "write(report)",
                    __FILE__, __LINE__);
  }
}

}  // namespace nodeprobe
