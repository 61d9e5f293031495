#pragma once
/// Probe results as evidence: non-passing checks that name a finding id and
/// probes that timed out or crashed become playbook-backed findings (the
/// check's exact fix first, then the playbook's steps).

#include <vector>

#include "finding_set.h"
#include "nodeprobe/report.h"

namespace nodeprobe::diag {

/// Adds one accumulator per (probe check finding, probe status) to `set`.
/// `source` names where the probes came from ("probes", "report/last.json").
void add_probe_findings(const std::vector<ProbeResult>& probes, const std::string& source,
                        FindingSet& set);

}  // namespace nodeprobe::diag
