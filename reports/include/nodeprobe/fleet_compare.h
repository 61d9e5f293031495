#pragma once
/// Before/after of two fleet reports (a fleet-wide change: driver, AMI,
/// placement group): nodes paired by host, each node's key metrics judged as
/// `nodeprobe compare` judges a node report's (compare.h: spread-aware,
/// direction-aware), pairs matched by their two hosts, the ring by node
/// count, and every verdict or action that changed.

#include <ostream>
#include <string>
#include <vector>

#include "nodeprobe/compare.h"
#include "nodeprobe/fleet.h"

namespace nodeprobe {

struct FleetNodeChange {
  std::string host;
  Status before = Status::kUnknown, after = Status::kUnknown;
  std::string action_before, action_after;
};

struct FleetComparison {
  CompareOptions options;
  std::string origin_before, origin_after;
  Status verdict_before = Status::kUnknown, verdict_after = Status::kUnknown;
  std::vector<MetricDiff> metrics;  ///< probe "node:HOST", "pair" (labels a, b) or "ring" (label nodes)
  std::vector<std::string> only_before, only_after;  ///< hosts in one report only
  std::vector<FleetNodeChange> changes;              ///< nodes whose verdict or action changed
  /// Run settings that differ ("pair_target fabric:tcp -> nccl"): what carries
  /// the pairs and the ring, their sizes and iterations, the profile and the
  /// nodes' accept arguments. Pair and ring numbers measured another way
  /// are not the same measurement; these are the likely cause of what moved.
  std::vector<std::string> settings;
  std::size_t count(Verdict v) const;
  bool any_worse() const { return count(Verdict::kWorse) > 0; }
};

FleetComparison compare_fleets(const FleetReport& before, const FleetReport& after, const CompareOptions& opt,
                               const std::string& origin_before = "before", const std::string& origin_after = "after");

void render_fleet_compare_text(const FleetComparison& c, std::ostream& out);
void render_fleet_compare_markdown(const FleetComparison& c, std::ostream& out);
/// "schema": "nodeprobe.fleet-compare/1".
Json fleet_compare_to_json(const FleetComparison& c);

}  // namespace nodeprobe
