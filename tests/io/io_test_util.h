#pragma once
// Helpers for the nodeprobe-io integration tests: scratch directories on
// tmpfs and on disk, running the real executable, reading its report.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nodeprobe/subprocess.h"

namespace nodeprobe::io::testing {

/// A fresh directory under `base`, removed with its contents afterwards.
class Scratch {
 public:
  explicit Scratch(const std::string& base);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// A directory on a disk-backed filesystem (the build tree), or "" with `why`.
std::string disk_base(std::string* why);
/// /dev/shm when it is tmpfs, or "" with `why`.
std::string tmpfs_base(std::string* why);

struct IoRun {
  SpawnResult proc;
  nlohmann::json report;  ///< null when stdout held no JSON
  const nlohmann::json& probe() const { return report.at("probes").at(0); }
  /// Value of the first metric called `name` (NaN when absent).
  double metric(const std::string& name) const;
  /// The check with this id, or null.
  nlohmann::json check(const std::string& id) const;
  /// Non-empty stderr lines.
  std::vector<std::string> stderr_lines() const;
};

/// Runs nodeprobe-io with `args` plus `--json - --quiet`; `env` ("K=V")
/// entries are added to the environment.
IoRun run_io(std::vector<std::string> args, double timeout_s = 60, std::vector<std::string> env = {});

/// Prepares a dataset (or fails the test).
void prepare(const std::string& dir, const std::vector<std::string>& extra);

/// "" when the report is schema-valid (or no validator is built in), else the errors.
std::string report_problems(const nlohmann::json& report);

}  // namespace nodeprobe::io::testing
