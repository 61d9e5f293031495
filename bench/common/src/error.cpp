#include "nodeprobe/error.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace nodeprobe {
namespace {

std::string format(const ApiErrorInfo& i) {
  std::string s = i.api + ": " + i.call + " failed: " + i.code_name + " (" +
                  std::to_string(i.code) + ")";
  if (!i.message.empty()) s += ": " + i.message;
  s += " [" + i.file + ":" + std::to_string(i.line) + " host " + i.host;
  if (i.rank >= 0) s += " rank " + std::to_string(i.rank);
  s += "]";
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

ApiError::ApiError(ApiErrorInfo info) : std::runtime_error(format(info)), info_(std::move(info)) {}

void throw_api_error(std::string api, long long code, std::string code_name, std::string message,
                     const char* call, const char* file, int line) {
  ApiErrorInfo i;
  i.api = std::move(api);
  i.code = code;
  i.code_name = std::move(code_name);
  i.message = std::move(message);
  i.call = call;
  const char* base = std::strrchr(file, '/');
  i.file = base ? base + 1 : file;
  i.line = line;
  i.host = process_hostname();
  i.rank = process_rank();
  throw ApiError(std::move(i));
}

const std::string& process_hostname() {
  static const std::string name = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return std::string("unknown");
    return std::string(buf);
  }();
  return name;
}

int process_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) {
      char* end = nullptr;
      const long r = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && r >= 0) return static_cast<int>(r);
    }
  }
  return -1;
}

std::string errno_name(int err) {
  switch (err) {
#define NP_E(x) \
  case x: return #x;
    NP_E(EPERM) NP_E(ENOENT) NP_E(ESRCH) NP_E(EINTR) NP_E(EIO) NP_E(ENXIO) NP_E(E2BIG)
    NP_E(ENOEXEC) NP_E(EBADF) NP_E(ECHILD) NP_E(EAGAIN) NP_E(ENOMEM) NP_E(EACCES) NP_E(EFAULT)
    NP_E(EBUSY) NP_E(EEXIST) NP_E(EXDEV) NP_E(ENODEV) NP_E(ENOTDIR) NP_E(EISDIR) NP_E(EINVAL)
    NP_E(ENFILE) NP_E(EMFILE) NP_E(ENOTTY) NP_E(EFBIG) NP_E(ENOSPC) NP_E(ESPIPE) NP_E(EROFS)
    NP_E(EMLINK) NP_E(EPIPE) NP_E(ERANGE) NP_E(ENAMETOOLONG) NP_E(ENOSYS) NP_E(ENOTEMPTY)
    NP_E(ELOOP) NP_E(EOVERFLOW) NP_E(EOPNOTSUPP) NP_E(EADDRINUSE) NP_E(EADDRNOTAVAIL)
    NP_E(ENETDOWN) NP_E(ENETUNREACH) NP_E(ECONNABORTED) NP_E(ECONNRESET) NP_E(ENOBUFS)
    NP_E(ETIMEDOUT) NP_E(ECONNREFUSED) NP_E(EHOSTUNREACH) NP_E(EDQUOT) NP_E(ECANCELED)
#undef NP_E
    default: break;
  }
  return "E" + std::to_string(err);
}

void report_cleanup_failure(const std::string& what) noexcept {
  try {
    std::cerr << "nodeprobe: cleanup: " << what << "\n";
  } catch (...) {
  }
}

}  // namespace nodeprobe
