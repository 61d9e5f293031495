#pragma once
/// The stable finding vocabulary (../shared/DESIGN.md): ids are added, never
/// renamed. Titles here are defaults; the playbook (diag/playbook) adds
/// message templates and remedy steps.

#include <string_view>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe {

struct FindingKind {
  std::string_view id;
  std::string_view title;
  Severity severity;  ///< default severity when raised
};

/// Every id of the vocabulary, in DESIGN.md order.
const std::vector<FindingKind>& finding_vocabulary();

/// The entry for `id`, or nullptr when the id is not in the vocabulary.
const FindingKind* find_finding_kind(std::string_view id);

/// Findings for every non-passing check that names a finding id: one finding
/// per (probe, id), the checks as evidence, their fixes as remedy steps.
/// Severity: error when a check failed, warn otherwise.
std::vector<Finding> findings_from_checks(const std::vector<ProbeResult>& probes);

/// probe.timeout / probe.crash findings for probes that timed out or crashed
/// (a crash is an error whose reason starts with "crashed").
std::vector<Finding> findings_from_probe_status(const std::vector<ProbeResult>& probes);

}  // namespace nodeprobe
