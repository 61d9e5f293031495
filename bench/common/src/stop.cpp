#include "nodeprobe/stop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "nodeprobe/clock.h"
#include "nodeprobe/safe_remove.h"
#include "nodeprobe/status.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe {
namespace {

// Written by the signal handler: lock-free atomics and a pipe only.
std::atomic<int> g_events{0};  // signals and the deadline, counted
std::atomic<int> g_cause{0};
std::atomic<int> g_signal{0};
int g_pipe[2] = {-1, -1};

// The detached watcher thread outlives main(): it may still say() or write a
// partial report while static destructors run. So the state it reads lives on
// the heap and is never destroyed (as steady_clock() is).
struct State {
  std::mutex mu;  // the members up to cleanup_mu
  StopOptions opt;
  double deadline = 0;  // steady-clock seconds, 0: none
  std::function<void()> writer;
  bool final_write = false;
  bool emergency = false;
  std::once_flag started;

  std::mutex cleanup_mu;
  std::map<int, std::pair<std::string, CleanupKind>> cleanups;
  int next_cleanup = 1;
};

State& st() {
  static State* s = new State();  // never deleted, on purpose
  return *s;
}

static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

void wake() noexcept {
  const char b = 1;
  if (g_pipe[1] >= 0) {
    ssize_t rc = ::write(g_pipe[1], &b, 1);
    (void)rc;
  }
}

// The first event decides the cause; every event counts (a second one means "now").
void note_event(StopCause cause, int sig) noexcept {
  int none = 0;
  if (g_cause.compare_exchange_strong(none, static_cast<int>(cause))) g_signal.store(sig);
  g_events.fetch_add(1);
  wake();
}

extern "C" void on_stop_signal(int sig) {
  const int saved = errno;
  note_event(StopCause::kSignal, sig);
  errno = saved;
}

void say(const std::string& line) {
  std::string tool;
  {
    std::lock_guard<std::mutex> lk(st().mu);
    tool = st().opt.tool;
  }
  const std::string s = tool + ": " + line + "\n";
  ssize_t rc = ::write(STDERR_FILENO, s.data(), s.size());
  (void)rc;
}

void remove_registered() noexcept {
  std::map<int, std::pair<std::string, CleanupKind>> todo;
  {
    std::lock_guard<std::mutex> lk(st().cleanup_mu);
    todo.swap(st().cleanups);
  }
  for (const auto& [id, what] : todo) {
    try {
      if (what.second == CleanupKind::kFile) ::unlink(what.first.c_str());
      else remove_tree(what.first);
    } catch (const std::exception& e) {
      say("could not remove " + what.first + ": " + e.what());
    }
  }
}

// The work did not stop in time: write what finished, clean up, exit.
// Returns when the main thread is already writing the final report.
void emergency(bool third_signal) {
  std::function<void()> writer;
  {
    std::lock_guard<std::mutex> lk(st().mu);
    if (st().final_write && !third_signal) return;
    st().emergency = true;
    if (!st().final_write) writer = st().writer;
  }
  const int code = stop_exit_code();
  if (writer) {
    try {
      writer();
      say("the work did not stop in time; wrote what finished");
    } catch (const std::exception& e) {
      say(std::string("could not write the partial report: ") + e.what());
    }
  }
  remove_registered();
  ::_exit(code);
}

void watch() {
  double stop_at = 0;
  bool said = false;
  for (;;) {
    double deadline, grace;
    bool final_write;
    {
      std::lock_guard<std::mutex> lk(st().mu);
      deadline = st().deadline;
      grace = st().opt.grace_s;
      final_write = st().final_write;
    }
    const double now = steady_clock().now_s();
    auto ms_until = [&](double t) { return static_cast<int>(std::ceil(std::max(0.0, t - now) * 1e3)); };
    int wait_ms = -1;
    if (final_write) wait_ms = -1;
    else if (stop_at > 0) wait_ms = ms_until(stop_at + grace);
    else if (deadline > 0) wait_ms = ms_until(deadline);
    pollfd p{g_pipe[0], POLLIN, 0};
    ::poll(&p, 1, wait_ms);
    char buf[64];
    while (::read(g_pipe[0], buf, sizeof buf) > 0) {
    }
    const double t = steady_clock().now_s();
    if (!final_write && deadline > 0 && t >= deadline && !stop_requested()) note_event(StopCause::kDeadline, 0);
    if (!stop_requested()) {
      stop_at = 0;  // a new run (install_stop_handlers) starts afresh
      said = false;
      continue;
    }
    if (stop_at == 0) stop_at = t;
    const int events = g_events.load();
    if (final_write) {
      // The final report is being written; only a third signal cuts it short.
      if (events >= 3) emergency(true);
      continue;
    }
    if (!said) {
      said = true;
      bool announce;
      {
        std::lock_guard<std::mutex> lk(st().mu);
        announce = st().opt.announce;
      }
      if (announce)
        say(stop_reason() + ": stopping and writing what finished" +
            (stop_cause() == StopCause::kSignal ? " (again to stop at once)" : ""));
    }
    if (events >= 2 || t >= stop_at + grace) emergency(false);
  }
}

}  // namespace

void install_stop_handlers(const StopOptions& opt) {
  {
    // A new run (tests run several in one process): nothing of the last one's
    // stop, checkpoint or final write carries over.
    std::lock_guard<std::mutex> lk(st().mu);
    st().opt = opt;
    st().deadline = opt.timeout_s > 0 ? steady_clock().now_s() + opt.timeout_s : 0;
    st().writer = nullptr;
    st().final_write = false;
    g_cause.store(0);
    g_signal.store(0);
    g_events.store(0);
  }
  std::call_once(st().started, [] {
    if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    // Work blocked in a system call carries on and notices the stop when it polls.
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
    // A report is still written when the reader of a pipe went away.
    ::signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    if (g_pipe[0] >= 0) std::thread(watch).detach();
  });
  wake();
}

void set_stop_deadline(double timeout_s, double started_s) {
  {
    std::lock_guard<std::mutex> lk(st().mu);
    st().deadline = timeout_s > 0 ? (started_s > 0 ? started_s : steady_clock().now_s()) + timeout_s : 0;
    st().opt.timeout_s = timeout_s;
  }
  wake();
}

bool stop_requested() noexcept { return g_cause.load() != 0; }
StopCause stop_cause() noexcept { return static_cast<StopCause>(g_cause.load()); }
int stop_signal() noexcept { return g_signal.load(); }

int stop_exit_code() noexcept {
  switch (stop_cause()) {
    case StopCause::kSignal: return exit_code::kInterrupted;
    case StopCause::kDeadline: return exit_code::kTimeout;
    case StopCause::kNone: break;
  }
  return 0;
}

std::string stop_reason() {
  switch (stop_cause()) {
    case StopCause::kSignal: return "interrupted by " + signal_name(stop_signal());
    case StopCause::kDeadline: {
      double t;
      {
        std::lock_guard<std::mutex> lk(st().mu);
        t = st().opt.timeout_s;
      }
      char buf[96];
      std::snprintf(buf, sizeof buf, "deadline of --timeout %g s passed", t);
      return buf;
    }
    case StopCause::kNone: break;
  }
  return {};
}

void request_stop(StopCause cause, int sig) {
  if (cause != StopCause::kNone) note_event(cause, sig);
}

void set_emergency_writer(std::function<void()> fn) {
  std::lock_guard<std::mutex> lk(st().mu);
  st().writer = std::move(fn);
}

StopCause begin_final_write() {
  {
    std::lock_guard<std::mutex> lk(st().mu);
    if (!st().emergency) {
      st().final_write = true;
      st().writer = nullptr;
      wake();
      return stop_cause();
    }
  }
  for (;;) ::pause();  // the watcher is writing the partial report and exits
}

int register_stop_cleanup(const std::string& path, CleanupKind kind) {
  std::lock_guard<std::mutex> lk(st().cleanup_mu);
  const int id = st().next_cleanup++;
  st().cleanups[id] = {path, kind};
  return id;
}

void run_stop_cleanups() noexcept { remove_registered(); }

void unregister_stop_cleanup(int id) noexcept {
  if (id <= 0) return;
  std::lock_guard<std::mutex> lk(st().cleanup_mu);
  st().cleanups.erase(id);
}

}  // namespace nodeprobe
