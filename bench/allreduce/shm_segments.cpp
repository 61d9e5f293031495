#include "shm_segments.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "nodeprobe/fd.h"
#include "nodeprobe/safe_remove.h"

namespace nodeprobe::allreduce {
namespace {

constexpr const char* kPidPrefix = "pid-";

// Our names carry the pid at a fixed width: every rank's endpoint name must
// have the same length (FabricEndpoint::connect), whatever its pid.
std::string padded_pid(pid_t pid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%07ld", static_cast<long>(pid));
  return buf;
}

std::vector<std::string> remove_of(pid_t pid) {
  try {
    return remove_own_files_in(kShmDir, [pid](const std::string& n) { return is_pid_segment(n, pid); });
  } catch (const std::exception&) {
    return {};  // no /dev/shm: nothing to clean
  }
}

}  // namespace

bool is_pid_segment(const std::string& name, pid_t pid) {
  return name.rfind(std::to_string(pid) + ":", 0) == 0 || name.rfind("nodeprobe-" + padded_pid(pid) + "-", 0) == 0;
}

std::string own_segment_name(const std::string& random) {
  return "nodeprobe-" + padded_pid(::getpid()) + "-" + random;
}

std::vector<std::string> prepare_rank_segments() {
  const pid_t me = ::getpid();
  auto removed = remove_of(me);
  if (const char* dir = std::getenv(kRankPidDirEnv); dir && *dir) {
    const std::string path = std::string(dir) + "/" + kPidPrefix + std::to_string(me);
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    (void)fd;  // best effort: without it the launcher cleans less, nothing else changes
  }
  return removed;
}

std::vector<std::string> remove_dead_rank_segments(const std::string& dir) {
  std::vector<std::string> removed;
  // The pid notes stay: the launcher's own temporary directory goes as a whole.
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::string(e->d_name).rfind(kPidPrefix, 0) == 0) names.push_back(e->d_name);
    ::closedir(d);
  }
  for (const auto& n : names) {
    char* end = nullptr;
    const long pid = std::strtol(n.c_str() + 4, &end, 10);
    if (!end || *end || pid <= 1) continue;
    // A live process with that pid (the rank still exiting, or a new one) keeps its regions.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    for (auto& r : remove_of(static_cast<pid_t>(pid))) removed.push_back(r);
  }
  return removed;
}

}  // namespace nodeprobe::allreduce
