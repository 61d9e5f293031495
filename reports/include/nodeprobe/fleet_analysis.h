#pragma once
/// The fleet's judgement: the pairwise schedule, robust outliers (median and
/// MAD) over nodes, GPUs and pairs with the slowness of a pair attributed to
/// a node or to the link, limits that differ between nodes, one action per
/// node, the drain list and the verdict.

#include <string>
#include <vector>

#include "nodeprobe/fleet.h"
#include "nodeprobe/report.h"

namespace nodeprobe {

/// When a value counts as an outlier.
struct OutlierOptions {
  double share = 0.85;         ///< below this share of the fleet median (above 1/share when lower is better)
  double mad_k = 5;            ///< or beyond this many scaled MADs (1.4826 x MAD) from the median ...
  double min_deviation = 0.05; ///< ... and at least this far from it (relative), so a tight fleet's jitter is not flagged
  /// The MAD rule needs at least this many values: the MAD of a handful of
  /// numbers estimates no spread (with Gaussian noise alone, "5 MADs below"
  /// names a node in 10 % of 3-node, 4 % of 6-node and 3 % of 8-node
  /// fleets); smaller groups are judged by the share rule alone.
  std::size_t mad_min_n = 8;
};

/// Median and median absolute deviation of a sample (n = 0: zeros).
struct RobustSpread {
  double median = 0, mad = 0;
  std::size_t n = 0;
};
RobustSpread robust_spread(std::vector<double> values);

/// True when `v` lies on the bad side of `s` by the rules of `o`; `why` gets
/// "0.25 x the fleet median (below 85 %)" or "7.1 MADs below the median".
bool is_outlier(double v, const RobustSpread& s, Better better, const OutlierOptions& o, std::string* why = nullptr);

/// One pair of a round: indices into the node list.
struct PairSlot {
  int a = 0, b = 0;
};

/// The passing pairs the judge would call link outliers as the pairs stand
/// (indices into r.pairs): even their best allreduce is below `o.share` of
/// what both ends reach with the other nodes. The fleet measures these again,
/// alone, before the judgement (fleet_phases.cpp). Needs 3 or more nodes.
std::vector<std::size_t> link_suspects(const FleetReport& r, const OutlierOptions& o);

/// The hosts the judge would call node outliers as the pairs stand: slow in
/// (most of) their pairs, by typical and by best allreduce. The fleet
/// measures their pairs again, alone, before the judgement: a node judged
/// on a few pairs must not be sent to reboot for one noisy round. Needs 3 or
/// more nodes.
std::vector<std::string> node_suspects(const FleetReport& r, const OutlierOptions& o);

/// A perfect-matching schedule (the circle method of round-robin
/// tournaments): n-1 rounds of n/2 disjoint pairs for even n, n rounds of
/// (n-1)/2 pairs for odd n (each node sits out one round: the bye). Every
/// pair appears exactly once; no node is in two pairs of one round.
std::vector<std::vector<PairSlot>> pair_schedule(int n);

/// Rank of a node action, least to most severe: none, tune, restart-job,
/// reset-gpu, reboot, replace, contact-support; -1 for an unknown word.
int fleet_action_rank(const std::string& action);
/// The more severe of two actions.
std::string worse_action(const std::string& a, const std::string& b);
/// Whether a node with this action should be drained (taken out of the
/// scheduler): reset-gpu, reboot, replace, contact-support.
bool action_drains(const std::string& action);
/// The action a finding asks for, by its severity: info none, warn tune,
/// error reboot (the diagnosis' own per-finding actions replace this when
/// findings carry them).
std::string finding_action(const Finding& f);

/// What one run measured, for the run-time model.
struct FleetTimings {
  int nodes = 0;
  double startup_s = 0;             ///< launch to the first phase
  double local_s = 0, mesh_s = 0;   ///< phases that run on every node at once
  std::vector<double> round_s;      ///< each pairwise round
  int repeats = 1;                  ///< schedule repeats (--pairs exhaustive)
  std::vector<double> ring_point_s; ///< each ring scaling point
  int ring_first = 4;               ///< smallest ring measured (2 when no pairs gave the 2-node point)
};

/// The run-time model: the measured phases and, for each of `sizes`, the
/// predicted total and per phase. local and startup stay as measured (every
/// node at once); mesh grows with the peers each node connects to (64 at a
/// time); pairs cost rounds(N) = N-1 (N even) or N (odd) times the median
/// round; the ring runs one point per power of two from ring_first up to N, each as long as
/// the median measured point (bandwidth-bound: the ring's time hardly depends on N).
Json fleet_time_model(const FleetTimings& t, const std::vector<int>& sizes = {16, 64, 256});

/// Judges a fleet whose nodes, pairs, ring and mesh are filled in:
/// `node_reports[i]` is the local accept report of `r.nodes[i]` (nullptr when
/// none arrived). Sets pair ratios, outliers, node findings, verdicts and
/// actions, fleet findings, the drain list and the verdict.
void judge_fleet(FleetReport& r, const std::vector<const Report*>& node_reports, const OutlierOptions& o);

}  // namespace nodeprobe
