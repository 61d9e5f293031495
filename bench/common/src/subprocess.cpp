#include "nodeprobe/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "nodeprobe/error.h"
#include "nodeprobe/stop.h"

namespace nodeprobe {
namespace {

std::vector<std::string> build_env(const SpawnOptions& opt) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& name : opt.env_unset) env.erase(name);
  for (const auto& kv : opt.env_set) {
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_array(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Output files are created, never written through a planted link; /dev/null
// (not a link) still works.
constexpr int kCreateFlags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW;

// Child side, between fork and exec: async-signal-safe calls only.
[[noreturn]] void child_exec(const SpawnOptions& opt, char* const* argv, char* const* envp,
                             int err_pipe, int out_pipe, int errp_pipe) {
  ::setpgid(0, 0);
  if (opt.die_with_parent) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT, SIGALRM})
    ::signal(sig, SIG_DFL);
  auto redirect = [&](const std::string& path, int target, int flags) {
    if (path.empty()) return;
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, target) < 0) {
      const int e = errno;
      ssize_t rc = ::write(err_pipe, &e, sizeof e);
      (void)rc;
      ::_exit(127);
    }
  };
  redirect(opt.stdin_path, STDIN_FILENO, O_RDONLY);
  if (out_pipe >= 0) ::dup2(out_pipe, STDOUT_FILENO);
  else redirect(opt.stdout_path, STDOUT_FILENO, kCreateFlags);
  if (errp_pipe >= 0) ::dup2(errp_pipe, STDERR_FILENO);
  else redirect(opt.stderr_path, STDERR_FILENO, kCreateFlags);
  ::execvpe(argv[0], argv, envp);
  const int e = errno;
  ssize_t rc = ::write(err_pipe, &e, sizeof e);
  (void)rc;
  ::_exit(127);
}

void make_pipe(int fds[2]) { NP_CHECK_ERRNO(::pipe2(fds, O_CLOEXEC)); }

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
#define NP_S(x) \
  case x: return #x;
    NP_S(SIGHUP) NP_S(SIGINT) NP_S(SIGQUIT) NP_S(SIGILL) NP_S(SIGTRAP) NP_S(SIGABRT)
    NP_S(SIGBUS) NP_S(SIGFPE) NP_S(SIGKILL) NP_S(SIGUSR1) NP_S(SIGSEGV) NP_S(SIGUSR2)
    NP_S(SIGPIPE) NP_S(SIGALRM) NP_S(SIGTERM) NP_S(SIGCHLD) NP_S(SIGCONT) NP_S(SIGSTOP)
    NP_S(SIGTSTP) NP_S(SIGXCPU) NP_S(SIGXFSZ) NP_S(SIGSYS)
#undef NP_S
    default: break;
  }
  return "SIG" + std::to_string(sig);
}

std::string SpawnResult::describe() const {
  if (!started) return "did not start: " + start_error;
  char buf[64];
  if (timed_out) {
    std::snprintf(buf, sizeof buf, "timed out after %.1f s and was killed", duration_s);
    return buf;
  }
  if (cancelled) return "interrupted and killed";
  if (term_signal) return "killed by " + signal_name(term_signal) + " (signal " +
                          std::to_string(term_signal) + ")";
  return "exit " + std::to_string(exit_code);
}

std::string self_exe_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "./";
  std::string p(buf, static_cast<std::size_t>(n));
  return p.substr(0, p.rfind('/') + 1);
}

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const auto end = dirs.find(':', start);
    std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";
    const std::string full = dir + "/" + name;
    if (::access(full.c_str(), X_OK) == 0) return full;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return {};
}

SpawnResult run_process(const SpawnOptions& opt, Clock& clock) {
  SpawnResult r;
  if (opt.argv.empty()) {
    r.start_error = "empty argv";
    return r;
  }
  std::vector<std::string> argv_s = opt.argv;
  std::vector<std::string> env_s = build_env(opt);
  auto argv = c_array(argv_s);
  auto envp = c_array(env_s);

  int err_pipe[2], out_pipe[2] = {-1, -1}, errp_pipe[2] = {-1, -1};
  make_pipe(err_pipe);
  if (opt.capture_stdout) make_pipe(out_pipe);
  if (opt.capture_stderr) make_pipe(errp_pipe);

  const double t0 = clock.now_s();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {err_pipe[0], err_pipe[1], out_pipe[0], out_pipe[1], errp_pipe[0], errp_pipe[1]})
      if (fd >= 0) ::close(fd);
    throw_api_error("posix", e, errno_name(e), std::strerror(e), "fork()", __FILE__, __LINE__);
  }
  if (pid == 0) child_exec(opt, argv.data(), envp.data(), err_pipe[1], out_pipe[1], errp_pipe[1]);

  // Parent. Set the group here too, so a kill right after fork cannot miss it.
  ::setpgid(pid, pid);
  r.pid = pid;
  ::close(err_pipe[1]);
  if (out_pipe[1] >= 0) ::close(out_pipe[1]);
  if (errp_pipe[1] >= 0) ::close(errp_pipe[1]);

  int child_errno = 0;
  ssize_t got;
  do {
    got = ::read(err_pipe[0], &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  ::close(err_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (out_pipe[0] >= 0) ::close(out_pipe[0]);
    if (errp_pipe[0] >= 0) ::close(errp_pipe[0]);
    r.start_error = opt.argv[0] + ": " + std::strerror(child_errno);
    return r;
  }
  r.started = true;

  int fds[2] = {out_pipe[0], errp_pipe[0]};
  std::string* sinks[2] = {&r.out, &r.err};
  int status = 0;
  bool reaped = false;
  enum class Phase { kRunning, kTerm, kKill } phase = Phase::kRunning;
  double kill_at = 0;
  // Before the leader is reaped its pid cannot be reused, so falling back to
  // the pid alone (when setpgid lost a race with exec) is safe; afterwards only
  // the group is signalled.
  auto signal_group = [&](int sig) {
    if (::kill(-pid, sig) != 0 && errno == ESRCH && !reaped) ::kill(pid, sig);
  };
  while (!reaped) {
    pollfd pfd[2];
    nfds_t n = 0;
    int map[2];
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) {
        pfd[n] = {fds[i], POLLIN, 0};
        map[n++] = i;
      }
    const int wait_ms = 10;
    if (n > 0) {
      const int pr = ::poll(pfd, n, wait_ms);
      if (pr > 0) {
        for (nfds_t k = 0; k < n; ++k) {
          if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          char buf[65536];
          const ssize_t m = ::read(pfd[k].fd, buf, sizeof buf);
          if (m > 0) {
            std::string& s = *sinks[map[k]];
            const std::size_t room = opt.capture_limit > s.size() ? opt.capture_limit - s.size() : 0;
            s.append(buf, std::min(room, static_cast<std::size_t>(m)));
          } else if (m == 0 || (errno != EINTR && errno != EAGAIN)) {
            ::close(pfd[k].fd);
            fds[map[k]] = -1;
          }
        }
      }
    } else {
      clock.sleep_s(wait_ms / 1000.0);
    }
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    const double now = clock.now_s();
    if (phase == Phase::kRunning) {
      // The stop handlers (stop.h) end every child with the run.
      const bool cancel = (opt.cancel && *opt.cancel) || (opt.follow_stop && stop_requested());
      const bool late = opt.timeout_s > 0 && now - t0 >= opt.timeout_s;
      if (cancel || late) {
        r.cancelled = cancel && !late;
        r.timed_out = late;
        signal_group(SIGTERM);
        // A stopped process cannot act on SIGTERM until continued.
        signal_group(SIGCONT);
        phase = Phase::kTerm;
        kill_at = now + opt.kill_grace_s;
      }
    } else if (phase == Phase::kTerm && now >= kill_at) {
      signal_group(SIGKILL);
      phase = Phase::kKill;
    }
  }
  r.duration_s = clock.now_s() - t0;
  // Drain what is left in the pipes (writers in the group may still hold them).
  if (opt.kill_group_on_exit || phase != Phase::kRunning) signal_group(SIGKILL);
  for (int i = 0; i < 2; ++i) {
    if (fds[i] < 0) continue;
    ::fcntl(fds[i], F_SETFL, O_NONBLOCK);
    char buf[65536];
    for (;;) {
      const ssize_t m = ::read(fds[i], buf, sizeof buf);
      if (m <= 0) break;
      std::string& s = *sinks[i];
      const std::size_t room = opt.capture_limit > s.size() ? opt.capture_limit - s.size() : 0;
      s.append(buf, std::min(room, static_cast<std::size_t>(m)));
    }
    ::close(fds[i]);
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return r;
}

}  // namespace nodeprobe
