#pragma once
// Helpers for the allreduce integration tests: launching nodeprobe-allreduce
// under the real mpirun, reading its report, and a netns test cluster.

#include <string>
#include <vector>

#include "nodeprobe/report.h"
#include "test_support.h"

namespace nodeprobe::allreduce::testing {

using nodeprobe::testing::TempDir;

/// mpirun (find_mpirun(): the build's MPI) with local-run flags, then nodeprobe-allreduce and `args`.
std::vector<std::string> local_mpirun(int np, const std::vector<std::string>& args);

struct ArRun {
  SpawnResult proc;
  bool have_report = false;
  Json report;             ///< the whole report
  Json probe;              ///< report.probes[0]
  std::string status() const { return probe.value("status", ""); }
  std::string reason() const { return probe.value("reason", ""); }
  /// Checks of the probe with this id (null when absent).
  Json check(const std::string& id) const;
  /// "id: status" of every check that did not pass.
  std::vector<std::string> checks_not_passing() const;
  /// Value of the first metric with this name whose labels contain `labels`.
  double metric(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
  /// Samples behind that metric (stats.n; -1 when absent or without stats).
  long stats_n(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
};

/// Runs argv with "--json <tmp>/r.json" appended and parses the report.
ArRun run_ar(std::vector<std::string> argv, const TempDir& dir, double timeout_s = 90,
             std::vector<std::string> env_set = {});

/// Ids of the report's findings.
std::vector<std::string> finding_ids(const Json& report);

/// A netns cluster for one test (scripts/netns-cluster.sh), torn down by the
/// destructor whatever happens. `skip_reason()` is set when this machine
/// cannot create one (no root, no netns).
class NetnsCluster {
 public:
  NetnsCluster(int hosts, const std::vector<std::string>& extra = {});
  ~NetnsCluster();
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;
  const std::string& skip_reason() const { return skip_; }
  int id() const { return id_; }
  /// "198.18.K.1,..."
  std::string hosts() const;
  /// mpirun -np N -H hosts <cluster flags> nodeprobe-allreduce args
  std::vector<std::string> mpirun(int np, const std::vector<std::string>& args) const;
  /// Runs a command inside host i (1-based); true on exit 0.
  bool exec(int host, const std::vector<std::string>& cmd) const;

 private:
  int id_ = 0;
  std::string skip_;
  bool up_ = false;
};

}  // namespace nodeprobe::allreduce::testing
