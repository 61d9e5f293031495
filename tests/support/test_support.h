#pragma once
// Helpers shared by the test suites.

#include <string>
#include <vector>

#include "nodeprobe/report.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::testing {

/// A fresh directory under $TMPDIR, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
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

/// Validates a document against reports/schema/report.schema.json (or
/// `schema_file`) with an independent validator (valijson). Returns "" when
/// valid, else the errors. Sets `available` false when this build has no validator.
std::string schema_errors(const nlohmann::json& doc, bool* available = nullptr, const std::string& schema_file = {});

/// True when a process with this pid exists (zombies count as gone).
bool process_alive(int pid);

}  // namespace nodeprobe::testing
