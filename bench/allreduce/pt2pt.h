#pragma once
/// --pt2pt: point-to-point latency and bandwidth between every pair of ranks,
/// in the style of osu_latency / osu_bw and fabtests' fi_pingpong: for each
/// pair (one pair at a time, the others wait at a barrier) and each size,
/// ping-pong round trips (latency = half a round trip, p50 and p99) and
/// windows of 64 messages one way, each acknowledged (bandwidth).

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "backend.h"

namespace nodeprobe::allreduce {

/// Messages per bandwidth window (osu_bw's default).
inline constexpr int kPt2ptWindow = 64;

/// Runs the sweep over `b` (set up for the largest size); rows complete on rank 0.
/// `phase` names what runs. Collective.
std::vector<Pt2ptRow> run_pt2pt(Backend& b, MPI_Comm comm, const std::vector<std::size_t>& sizes, int warmup,
                                int iters, const std::function<void(const std::string&)>& phase);

/// People's text: one line per pair and size.
std::string pt2pt_text(const std::vector<Pt2ptRow>& rows, const std::string& label);

/// One row as JSON and back (how ranks hand their results to rank 0).
Json pt2pt_json(const Pt2ptRow& r);
Pt2ptRow pt2pt_from_json(const Json& j);

}  // namespace nodeprobe::allreduce
