#pragma once
/// Spawning helpers by argv (never through a shell), each in its own process
/// group, with a deadline. On timeout or interrupt the whole group is killed
/// (SIGTERM, a grace period, then SIGKILL), so nothing is left behind.

#include <sys/types.h>

#include <csignal>
#include <string>
#include <vector>

#include "nodeprobe/clock.h"

namespace nodeprobe {

struct SpawnOptions {
  std::vector<std::string> argv;     ///< argv[0]: a path, or a name looked up in PATH
  std::vector<std::string> env_set;  ///< NAME=VALUE added to (or replacing in) the environment
  std::vector<std::string> env_unset;  ///< names removed from the environment
  std::string stdin_path = "/dev/null";  ///< "" inherits
  std::string stdout_path;  ///< "" inherits unless capture_stdout
  std::string stderr_path;  ///< "" inherits unless capture_stderr
  bool capture_stdout = false;
  bool capture_stderr = false;
  std::size_t capture_limit = 1u << 20;  ///< bytes kept per captured stream (the first ones)
  double timeout_s = 0;      ///< 0: no deadline
  double kill_grace_s = 2;   ///< SIGTERM -> SIGKILL delay
  bool kill_group_on_exit = true;  ///< also kill leftovers of the group after a normal exit
  bool die_with_parent = true;     ///< PR_SET_PDEATHSIG(SIGKILL) in the child
  /// Polled while waiting; when it becomes non-zero the child group is killed.
  const volatile std::sig_atomic_t* cancel = nullptr;
};

struct SpawnResult {
  bool started = false;
  std::string start_error;  ///< why it did not start (exec failure: "No such file or directory")
  pid_t pid = -1;
  int exit_code = -1;       ///< when it exited
  int term_signal = 0;      ///< when a signal ended it
  bool timed_out = false;
  bool cancelled = false;
  double duration_s = 0;
  std::string out, err;     ///< captured streams

  bool exited_ok() const { return started && term_signal == 0 && exit_code == 0; }
  /// "exit 0", "killed by SIGSEGV (signal 11)", "timed out after 5 s", ...
  std::string describe() const;
};

/// Runs to completion, deadline or cancellation. Never throws for the child's
/// behaviour; throws ApiError only when the parent cannot fork or pipe.
SpawnResult run_process(const SpawnOptions& opt, Clock& clock = steady_clock());

/// "SIGSEGV" for 11 etc.
std::string signal_name(int sig);

/// Directory of the running executable (via /proc/self/exe), with a trailing '/'.
std::string self_exe_dir();

/// The full path of the executable `name` in $PATH (a default PATH when
/// unset; an empty entry is the current directory), or "".
std::string find_in_path(const std::string& name);

}  // namespace nodeprobe
