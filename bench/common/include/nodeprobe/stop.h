#pragma once
/// The one interruption path of every command (probes, accept, diag, collect,
/// the allreduce launcher and ranks).
///
/// SIGINT, SIGTERM and SIGHUP (an ssh session dropping) all mean "stop": the
/// handler only records the signal; a watcher thread announces it on stderr
/// and the work, which polls stop_requested() (ProbeContext::remaining_s()
/// turns 0, run_process kills its child group), winds down and writes what
/// finished as a valid report; the command then exits 130. Its own --timeout
/// deadline is the same path with exit 124.
///
/// When the work has not stopped within the grace period, or a second signal
/// arrives, the watcher runs the command's emergency writer (a report
/// prepared in advance: what finished, the step in flight marked
/// interrupted), removes the registered temporary files and directories, and
/// exits 130 / 124 itself. Once the final report is being written
/// (begin_final_write) the watcher leaves it alone.

#include <functional>
#include <string>

namespace nodeprobe {

enum class StopCause { kNone = 0, kSignal = 1, kDeadline = 2 };

struct StopOptions {
  std::string tool = "nodeprobe";  ///< prefix of the lines on stderr
  double timeout_s = 0;            ///< --timeout: deadline this many seconds from now (0: none)
  double grace_s = 1.5;            ///< time the work gets to stop by itself
  bool announce = true;            ///< say "stopping" on stderr (ranks leave it to rank 0)
};

/// Installs the INT/TERM/HUP handlers and starts the watcher (once per
/// process; a second call only updates the options and the deadline).
void install_stop_handlers(const StopOptions& opt);

/// Moves the deadline to `timeout_s` after `started_s` (steady-clock seconds;
/// 0: now). timeout_s 0: no deadline.
void set_stop_deadline(double timeout_s, double started_s = 0);

bool stop_requested() noexcept;
StopCause stop_cause() noexcept;
/// The signal that stopped the run (0 for none or the deadline).
int stop_signal() noexcept;
/// 130 after a signal, 124 after the deadline, 0 while running.
int stop_exit_code() noexcept;
/// "interrupted by SIGINT", "deadline of --timeout 5 s passed"; "" while running.
std::string stop_reason();

/// Stops the run from code (a rank heard of a signal elsewhere; tests).
void request_stop(StopCause cause, int sig = 0);

/// What the watcher writes when the work does not stop in time; replaces the
/// previous writer (nullptr: exit without writing). Runs on the watcher
/// thread; must not wait for the main thread.
void set_emergency_writer(std::function<void()> fn);

/// The run is over and its final report is being written: the watcher will
/// not replace it. Returns the stop cause at that moment (kNone: the run was
/// not stopped). Blocks for good when the emergency writer already started
/// (the process is about to exit).
StopCause begin_final_write();

/// Temporary things an emergency exit removes.
enum class CleanupKind { kFile, kOwnedDir };
/// Registers `path`; returns a handle for unregister_stop_cleanup.
int register_stop_cleanup(const std::string& path, CleanupKind kind);
void unregister_stop_cleanup(int id) noexcept;
/// Removes what is registered now: for code that ends the process itself
/// (_exit after writing its report) without going through the watcher.
void run_stop_cleanups() noexcept;

}  // namespace nodeprobe
