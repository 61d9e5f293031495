#pragma once
// Helpers shared by the test suites.

#include <functional>
#include <string>
#include <vector>

#include "nodeprobe/report.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::testing {

/// A fresh directory under `parent` ($TMPDIR, else /tmp, when empty), with
/// `mode`, removed with its contents on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& parent = "", unsigned mode = 0700);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& content);

/// Runs a program (argv, no shell), capturing stdout and stderr, with
/// NODEPROBE_NO_IMDS=1 (tests never contact the instance metadata service).
SpawnResult run(std::vector<std::string> argv, double timeout_s = 60,
                std::vector<std::string> env_set = {});

/// Path of one of our built executables ("nodeprobe-limits").
std::string bin(const std::string& name);

/// How much longer than normal a wall-clock deadline in a test may take:
/// NODEPROBE_TEST_TIME_FACTOR (>= 1), which scripts/test.sh --sanitize sets
/// because instrumented code starts and runs several times slower; 1 otherwise.
/// Scales only the slack a test grants, never what it checks.
double time_factor();

/// Validates a document against reports/schema/report.schema.json (or
/// `schema_file`) with an independent validator (valijson). Returns "" when
/// valid, else the errors. Sets `available` false when this build has no validator.
std::string schema_errors(const nlohmann::json& doc, bool* available = nullptr, const std::string& schema_file = {});

/// True when a process with this pid exists (zombies count as gone).
bool process_alive(int pid);

/// A program started in the background (argv, no shell) for signal tests:
/// its stdout and stderr go to files; killed and reaped on destruction.
class Background {
 public:
  Background(std::vector<std::string> argv, std::vector<std::string> env_set = {},
             const std::string& stdin_path = "/dev/null");
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  int pid() const { return pid_; }
  void signal(int sig) const;
  /// Waits for the exit: the exit code, 128 + the signal when one killed it,
  /// -1 when it still ran after `timeout_s` (it is then killed).
  int wait(double timeout_s = 60);
  std::string out() const;
  std::string err() const;

 private:
  TempDir io_;
  int pid_ = -1;
  bool reaped_ = false;
};

/// Polls `cond` every few milliseconds: true once it holds, false after `timeout_s`.
bool wait_for(const std::function<bool()>& cond, double timeout_s);

/// Names of the entries of `dir` that start with `prefix`.
std::vector<std::string> entries_with_prefix(const std::string& dir, const std::string& prefix);

/// A test cluster that `script` (scripts/netns-cluster.sh or slurm-cluster.sh)
/// brought up: its id, or why this machine cannot have one (not root, or what
/// the script said when it exited 77).
struct ClusterUp {
  int id = 0;
  std::string skip;
};

/// Runs `script up HOSTS --id K --owner-pid <this process> extra...` with an
/// id of this test process's own (tests run in parallel; `id_offset` keeps
/// the ids of one process's clusters of different scripts apart), the next
/// one while an id is taken. When `up` fails otherwise, runs `down` and throws.
ClusterUp cluster_up(const std::string& script, int hosts, const std::vector<std::string>& extra,
                     int id_offset, double timeout_s);

}  // namespace nodeprobe::testing
