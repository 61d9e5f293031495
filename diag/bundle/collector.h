#pragma once
/// Gathers what the diagnosis reads from a live system into a directory of
/// artifacts plus manifest.json: the same directory `nodeprobe collect` packs
/// into a bundle and live `nodeprobe diag` analyses, so a bundle read on
/// another machine gives the findings the live diagnosis gave.
///
/// Reads what it may without root and records what it skipped and why.
/// Every command runs by argv with a deadline. Secrets are never collected:
/// only allowlisted environment variables, audit records limited to SELinux
/// denials, and every byte written into the directory (files, command
/// output, reports) passes the one redaction of nodeprobe/redact.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nodeprobe/fs_root.h"
#include "nodeprobe/input.h"
#include "nodeprobe/report.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::diag {

/// Spawns helper commands; the default runs them for real (tests use fakes).
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  /// Runs `argv` with a deadline, stdout (and stderr, merged) into `out_path`.
  virtual SpawnResult run(const std::vector<std::string>& argv, double timeout_s,
                          const std::string& out_path) = 0;
};

class ProcessRunner final : public CommandRunner {
 public:
  SpawnResult run(const std::vector<std::string>& argv, double timeout_s, const std::string& out_path) override;
};

/// One collected item.
struct Artifact {
  std::string path;    ///< relative path in the bundle ("kernel/kmsg.log")
  std::string origin;  ///< what it came from ("/dev/kmsg", "command: nvidia-smi -q")
  std::string status;  ///< ok | truncated | skipped | error
  std::string reason;  ///< why skipped, truncated or failed
  std::uint64_t bytes = 0;
};

struct Manifest {
  std::string schema = "nodeprobe.bundle/1";
  std::string tool_version;
  std::string created;          ///< ISO 8601 UTC
  double created_epoch = 0;
  long utc_offset_s = 0;        ///< the collecting host's zone (syslog times)
  double boot_epoch = 0;        ///< the collecting host's boot (/proc/stat btime); 0 unknown
  std::string hostname, kernel, os, instance_type;
  bool root = false;
  std::vector<Artifact> files;
};

/// The PCIe ACS control register from a function's config space as sysfs gives it
/// (4096 bytes for root; 64 without, which has no extended capabilities).
std::optional<std::uint16_t> acs_control(const std::string& config);
/// Fact lines "pci_acs: BRIDGE GPU CTL root_port|switch_port" for every
/// bridge with ACS above each GPU, "pci_acs_unreadable: BRIDGE" where its
/// extended config space cannot be read.
std::string acs_facts(const FsRoot& fs, const std::vector<std::string>& gpus);

/// The "edac:" fact lines of /sys/devices/system/edac/mc: each memory
/// controller's corrected/uncorrected counts since boot ("edac: mc0 - ce=12
/// ue=0") and each DIMM's ("edac: mc0 dimm3 ce=12 ue=0 label=..."); "" when
/// no EDAC driver is loaded.
std::string edac_facts(const FsRoot& fs);

Json manifest_to_json(const Manifest& m);
/// Throws std::runtime_error with a one-line reason on a malformed manifest.
Manifest manifest_from_json(const Json& j);

struct CollectOptions {
  const FsRoot* fs = nullptr;             ///< "/" for the live system
  CommandRunner* runner = nullptr;        ///< nullptr: run nothing (only files)
  double command_timeout_s = 15;
  std::uint64_t max_log_bytes = 64ULL << 20;  ///< tail kept of each system log
  std::string report_path;                ///< a report to include (collect --report)
  std::string limits_exe;                 ///< nodeprobe-limits to run ("" = don't)
  /// nodeprobe-nvml to run ("" = next to this executable, or in $NODEPROBE_PROBE_DIR)
  std::string nvml_exe;
  const char* const* envp = nullptr;      ///< for the allowlisted environment
  double now = 0;                         ///< epoch seconds (0: the clock)
  bool live_kmsg = true;                  ///< read /dev/kmsg when fs is live
  InputOverrides input;                   ///< limits for report_path
};

/// Collects into `dir` (created if needed, mode 0700) and writes manifest.json.
Manifest collect_artifacts(const CollectOptions& opt, const std::string& dir);

}  // namespace nodeprobe::diag
