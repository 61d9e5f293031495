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

/// Node actions, least to most severe: none, tune, restart-job, reset-gpu,
/// reboot, replace, contact-support. A reboot resets every GPU, so it
/// outranks reset-gpu; replacing hardware outranks any restart; and a fault
/// the catalogue cannot place goes to the vendor's support last.
const std::vector<std::string_view>& node_actions();

/// Rank of an action in node_actions(), -1 for "" or an unknown word.
int action_rank(std::string_view action);

/// The node's action: the most severe action of its warn and error findings
/// ("none" when there is none; info findings never ask for action).
std::string node_action(const std::vector<Finding>& findings);

/// Findings for every non-passing check that names a finding id: one finding
/// per (probe, id), the checks as evidence, their fixes as remedy steps.
/// Severity: error when a check failed, warn otherwise.
std::vector<Finding> findings_from_checks(const std::vector<ProbeResult>& probes);

/// probe.timeout / probe.crash findings for probes that timed out or crashed
/// (a crash is an error whose reason starts with "crashed").
std::vector<Finding> findings_from_probe_status(const std::vector<ProbeResult>& probes);

}  // namespace nodeprobe
