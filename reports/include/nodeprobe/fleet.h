#pragma once
/// The fleet report (schema nodeprobe.fleet/1, reports/schema/fleet.schema.json):
/// what `nodeprobe fleet` found on N nodes at once. Plain aggregates; the
/// judgement (outliers, actions, drain list, verdict) is fleet_analysis.h, JSON
/// is fleet_json.h, people's text and HTML are fleet_render.h.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// Schema identifier written into and required from every fleet report.
inline constexpr const char* kFleetSchema = "nodeprobe.fleet/1";

/// The keys of a fleet report's config that change what a pair, ring or node
/// number measures: `nodeprobe compare` names a change in any of them; every
/// fleet run writes them all (FleetCli.* checks a real report). Run-specific
/// ones (deadlines, the interface address, output paths, outlier thresholds,
/// the wording of why a backend was chosen) are not among them.
inline constexpr const char* kFleetMeasurementKeys[] = {"profile",    "pairs",     "skip",        "target",
                                                        "pair_target", "pair_bytes", "min_iters", "min_seconds",
                                                        "accept_args"};

/// A finding as the fleet summary carries it (the node's own report has the rest).
struct FleetFinding {
  std::string id;
  Severity severity = Severity::kWarn;
  std::string title;
  std::string action;  ///< none, tune, restart-job, reset-gpu, reboot, replace, contact-support
};

/// One node (one rank).
struct FleetNode {
  std::string host;
  int rank = 0;
  Status verdict = Status::kSkip;  ///< its own checks plus the fleet's judgement; timeout when it stopped answering
  std::string action = "none";
  std::string reason;              ///< why timeout / error; else the first problem ("" when none)
  std::string timed_out_in;        ///< phase it was lost in: stopped answering (verdict timeout) or died (error); "" when not lost
  std::vector<FleetFinding> findings;
  std::vector<Metric> metrics;     ///< key metrics: its local ones and its pair score
  std::string report;              ///< path of its own report (--node-json), "" when not kept
  Json local = Json::object();     ///< its local accept: {status, duration_s, verdict, probes: [{name, status}]}
};

/// One pair measured in the pairwise phase.
struct FleetPair {
  std::string a, b;        ///< hosts
  int rank_a = 0, rank_b = 0;
  int round = 0;           ///< schedule round (0-based) of the first measurement
  Status status = Status::kPass;  ///< pass when measured; timeout / error with the reason
  std::string reason;
  double busbw = 0;        ///< GB/s, median over the timed iterations
  Stats stats;             ///< over the timed iterations (and repeats with --pairs exhaustive)
  double ratio_to_median = 0;  ///< busbw / median over the measured pairs
  std::string transport;   ///< what carried it: the libfabric provider ("tcp;ofi_rxm", "efa") or "nccl 2.28.5 ..."
};

/// A value far from the fleet's.
struct FleetOutlier {
  std::string kind;        ///< node | gpu | link
  std::string host;
  std::string gpu;         ///< kind gpu: the GPU ("0", or its label)
  std::string peer;        ///< kind link: the other end
  std::string metric;      ///< "pair_busbw", "gemm/gemm.tflops{precision=bf16}", "limits:limits.nofile.soft"
  double value = 0;
  double fleet_median = 0;
  double ratio = 0;        ///< value / fleet_median (link: / what the two ends reach elsewhere)
  std::string reason;
  std::string action;      ///< what to do about it
};

/// One phase of the run and its deadline.
struct FleetPhase {
  std::string name;        ///< local, mesh, pairs, ring
  Status status = Status::kSkip;
  double duration_s = 0, deadline_s = 0;
  std::string reason;
  int nodes = 0;           ///< nodes that took part
};

/// A ring allreduce over the first `nodes` nodes (scaling points; the last is all of them).
struct FleetRingPoint {
  int nodes = 0;
  std::string source = "ring";  ///< ring: measured over the first `nodes` nodes; pairs: the median pair (2 nodes)
  double bytes = 0;
  Status status = Status::kPass;
  std::string reason;
  double time_s = 0;       ///< median per allreduce
  double busbw = 0;        ///< GB/s
  Stats stats;             ///< busbw over the timed iterations
  double retention = 0;    ///< busbw / busbw of the 2-node ring (1 = no loss as the ring grows)
};

/// A node to take out of service, and why.
struct FleetDrain {
  std::string host, action, reason;
};

struct FleetReport {
  std::string schema = kFleetSchema;
  ToolInfo tool;
  RunInfo run;
  Json config = Json::object();   ///< flags the run used (profile, pairs, sizes, thresholds, provider)
  std::vector<FleetPhase> phases;
  std::vector<FleetNode> nodes;
  std::vector<FleetPair> pairs;
  std::vector<FleetRingPoint> ring;
  Json mesh = Json::object();     ///< the mesh preflight: latency matrix and failures (as nodeprobe-allreduce's data.mesh)
  std::vector<FleetOutlier> outliers;
  std::vector<FleetFinding> findings;  ///< fleet-wide (link outliers, unreachable pairs)
  std::vector<FleetDrain> drain;
  Json model = Json::object();    ///< measured phase times and the run-time model for larger fleets
  Status verdict = Status::kSkip;
  std::string reason;             ///< why the run could not run or ended early ("" when it ran)
};

/// The node entry for `host` (nullptr when absent).
const FleetNode* find_fleet_node(const FleetReport& r, const std::string& host);

}  // namespace nodeprobe
