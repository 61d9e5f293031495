#pragma once
/// The diagnosis: evidence (logs, a support bundle, the live system, probe
/// results) -> rules -> playbook-backed findings with evidence and remedies.
///
/// `nodeprobe diag` and `nodeprobe collect` are thin commands over this; the
/// runner calls diagnose() from `nodeprobe accept` so probe checks and the
/// live system become findings with the playbook's titles, steps and refs.

#include <optional>
#include <string>
#include <vector>

#include "collector.h"
#include "nodeprobe/fs_root.h"
#include "nodeprobe/input.h"
#include "nodeprobe/report.h"

namespace nodeprobe::diag {

class RuleEngine;

struct DiagInputs {
  std::vector<std::string> logs;     ///< files to analyse ("-" = stdin); gzip is read directly
  std::string bundle;                ///< a support bundle: FILE.tar.gz or its extracted directory
  bool live = false;                 ///< also read the live system
  std::optional<double> since_s;     ///< only events newer than this many seconds (older ones dropped)
  /// accept: events older than this many seconds are kept as info with
  /// their age, not judged against the node now.
  std::optional<double> judge_since_s;
  /// Live system and bundles: events before the collecting host's boot are
  /// info with their age (the node has rebooted since).
  bool judge_from_boot = true;
  std::vector<std::string> rule_files;  ///< site rules (nodeprobe.rules/1) added to the built-in ones
  std::string expect;                ///< instance type to judge against ("" = the host's own)
  const FsRoot* fs = nullptr;        ///< live root (nullptr: "/")
  CommandRunner* runner = nullptr;   ///< nullptr: real processes
  double command_timeout_s = 15;     ///< deadline of every spawned command
  std::string limits_exe;            ///< live: run this nodeprobe-limits too ("" = don't)
  const char* const* envp = nullptr; ///< live: environment for the allowlist
  std::string tmp_dir;               ///< scratch space ("" = $TMPDIR or /tmp)
  double now = 0;                    ///< epoch seconds (0: the clock)
  InputOverrides input;              ///< --max-input-size / --read-timeout for logs and bundles
  RuleEngine* engine = nullptr;      ///< compiled rules to reuse (fuzzing); nullptr: compile them
};

/// How the diagnosis went, besides the findings it wrote into the report.
struct DiagOutcome {
  std::vector<std::string> input_errors;  ///< one line each: missing file, truncated gzip, bad bundle
  int sources_analysed = 0;
  int sources_skipped = 0;
  bool scanner_available = true;          ///< false: built without RE2 (logs were not scanned)
  std::string action;                     ///< the node's action (most severe of its findings)
};

/// Diagnoses everything `in` names plus the probes already in `report`:
/// replaces report.findings with playbook-backed findings (checks, probe
/// statuses, logs, live facts), sets report.action, and appends a "diag"
/// probe entry that lists every source read or skipped, with the reason. The caller recomputes the
/// verdict (compute_verdict). Never throws for bad input: it lands in the
/// outcome's input_errors and in the diag entry.
DiagOutcome diagnose(Report& report, const DiagInputs& in);

}  // namespace nodeprobe::diag
