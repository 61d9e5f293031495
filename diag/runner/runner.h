#pragma once
/// Runs probe executables as child processes (argv, own process group,
/// deadline) and turns whatever happened into probe results: their own report
/// when they wrote one, else timeout / crash / error naming the probe.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::diag {

/// One probe executable to run.
struct ProbeSpec {
  std::string name;              ///< probe key as it appears in the report ("limits")
  std::string executable;        ///< file name beside `nodeprobe` ("nodeprobe-limits")
  std::vector<std::string> args; ///< extra arguments
  double deadline_s = 30;        ///< wall-clock budget; the group is killed after it
  std::vector<std::string> env_set;  ///< NAME=VALUE for the child
  /// argv prefix that launches the executable (e.g. {"/usr/bin/mpirun", "-np", "2"}); empty: direct.
  std::vector<std::string> launcher;
  /// SIGTERM -> SIGKILL delay: longer than the probe's own stop grace, so a
  /// stopped probe writes what it measured (and removes what it made) first.
  double kill_grace_s = 3;
};

/// What running one probe executable produced.
struct ProbeOutcome {
  std::vector<ProbeResult> probes;  ///< usually one; executables may hold several probes
  std::vector<Finding> findings;    ///< findings the child raised (its checks' ones included)
  HostInfo host;                    ///< the child's host block (versions it knows)
  bool have_host = false;
  std::string stderr_tail;          ///< last lines the child printed on stderr
  bool interrupted = false;
};

/// Runs `spec` with `bin_dir` + executable, writing the child's JSON into
/// `work_dir`. Never throws for the child's behaviour. When the run is told
/// to stop (stop.h) the child gets SIGTERM and the kill grace to report what
/// it measured; its entries are then marked stopped.
ProbeOutcome run_probe_executable(const ProbeSpec& spec, const std::string& bin_dir,
                                  const std::string& work_dir);

/// Copies host fields the runner could not know (driver, CUDA, NCCL,
/// libfabric, MPI versions, GPUs) from a probe's host block.
void merge_host(HostInfo& into, const HostInfo& from);

/// The last `max_lines` non-empty lines of `text`, joined with " | ".
std::string tail_lines(const std::string& text, std::size_t max_lines);

}  // namespace nodeprobe::diag
