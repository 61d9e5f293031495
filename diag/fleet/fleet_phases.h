#pragma once
/// The phases rank 0 drives through the coordinator, each under its own
/// deadline: local accept on every node at once, mesh preflight, pairwise
/// bandwidth on a perfect-matching schedule, the ring over 2, 4 ... all nodes.
/// A node lost in one phase is left out of the next ones.

#include <ostream>
#include <string>
#include <vector>

#include "coordinator.h"
#include "fleet_options.h"
#include "mpi_util.h"
#include "nodeprobe/fleet.h"
#include "nodeprobe/fleet_analysis.h"

namespace nodeprobe::fleet {

struct FleetContext {
  const diag::FleetOptions* opt = nullptr;
  Coordinator* co = nullptr;
  FleetReport* report = nullptr;
  allreduce::HostMap hosts;
  std::vector<Report> node_reports;     ///< by rank
  std::vector<bool> have_report;        ///< by rank
  double deadline_s = 0;                ///< --timeout as a steady-clock time (0: none)
  bool out_of_time = false;             ///< --timeout passed: later phases are not run
  std::string provider;                 ///< libfabric provider of the ring (and of the pairs over fabric)
  std::string pair_backend = "fabric";  ///< what carries the pairs: fabric | nccl
  FleetTimings timings;
  std::ostream* log = nullptr;          ///< progress lines (verbose), may be null
};

/// The judge's outlier rules from the flags (--share, --mad-k).
OutlierOptions outlier_options(const diag::FleetOptions& opt);

void phase_local(FleetContext& c);
void phase_mesh(FleetContext& c);
void phase_pairs(FleetContext& c);
void phase_ring(FleetContext& c);

/// --provider, else efa when every live node offers it, else tcp.
std::string choose_provider(const FleetContext& c);
// The choice itself: `forced` when given, else efa when every node's hello
// lists it (one node without it would measure tcp against efa), else tcp.
std::string choose_provider(const std::string& forced, const std::vector<Json>& hellos);

/// What carries the pairs: `requested` (--pair-backend auto|fabric|nccl)
/// against what every node's hello says of NCCL ({usable, why, version}).
/// auto: nccl when every node has a usable GPU and libnccl, else fabric;
/// nccl: nccl, or no backend (empty) when a node cannot; fabric: fabric. The
/// reason says why, naming the first node that cannot.
struct PairBackendChoice {
  std::string backend;  ///< fabric | nccl | "" (the request cannot be met)
  std::string reason;
};
PairBackendChoice choose_pair_backend(const std::string& requested, const std::vector<Json>& hellos);
PairBackendChoice choose_pair_backend(const FleetContext& c);

/// Copies every rank the coordinator lost into the report's nodes (verdict
/// timeout or error, the phase, the reason).
void mark_lost_nodes(FleetContext& c);

}  // namespace nodeprobe::fleet
