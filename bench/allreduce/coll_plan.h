#pragma once
/// Latency-bound allreduce schedules of the fabric backend, apart from the
/// endpoint that runs them (so a unit test can run every rank in memory):
///
/// - one-shot: every rank sends its whole vector to every other rank at once
///   and reduces the n vectors itself, in rank order (so every rank gets the
///   same bits): one latency step instead of log2(P), n-1 messages of S per
///   rank (the smallest sizes on few ranks; TensorRT-LLM's custom allreduce
///   and NCCL's NVLS one-shot do the same within a node);
/// - recursive doubling: log2(P) exchanges of the whole vector (small sizes:
///   fewest steps; each rank sends log2(P) x S);
/// - Rabenseifner: reduce-scatter by recursive halving, then allgather by
///   recursive doubling: 2 log2(P) steps and 2(P-1)/P x S per rank, like a ring
///   but with log2(P) instead of P-1 latencies per phase.
///
/// Rank counts that are not a power of two use the fold of MPICH
/// (Thakur, Rabenseifner, Gropp 2005): of the first 2r ranks (r = n - P, P the
/// largest power of two <= n), each even one sends its vector to the next odd
/// one and sits out; the P remaining ranks run the algorithm; at the end each
/// odd one hands the result back.

#include <cstddef>
#include <string>
#include <vector>

#include "ar_types.h"

namespace nodeprobe::allreduce {

/// The allreduce algorithms of the fabric backend.
enum class Algo { kAuto, kOneShot, kRecursiveDoubling, kRabenseifner, kRing, kLinear, kTwoShot };

/// "auto", "oneshot", "rd", "rabenseifner", "ring", "linear", "twoshot".
std::string to_string(Algo a);
/// Accepts the names above, "one_shot" and "recursive_doubling"; false when unknown.
bool algo_from_string(const std::string& s, Algo* out);

/// The thresholds of --algo auto, in bytes of the vector.
struct AlgoSizes {
  std::size_t oneshot_max = 0;  ///< one-shot up to this (on at most kOneShotMaxRanks ranks); 0: never
  std::size_t rd_max = 0;       ///< then recursive doubling up to this
  std::size_t ring_min = 0;     ///< the ring from this; Rabenseifner between
  /// Linear up to this (on kLinearMinRanks..kLinearMaxRanks ranks, ahead of
  /// recursive doubling); 0: never.
  std::size_t linear_max = 0;
};
/// Auto uses one-shot on at most this many ranks: each rank sends n-1
/// messages, so the one latency step it saves stops paying beyond a few peers.
constexpr int kOneShotMaxRanks = 8;
/// Auto uses linear on 3 and 4 ranks: two latency steps where recursive
/// doubling takes three with the fold (3 ranks) or two with 8 messages
/// instead of 6 (4 ranks); on 2 ranks recursive doubling takes one step, and
/// beyond 4 rank 0's serial receives cost more than the steps they save.
constexpr int kLinearMinRanks = 3;
constexpr int kLinearMaxRanks = 4;
/// A forced one-shot runs on at most this many ranks (its tags name the pair
/// of ranks in 20 bits); beyond, recursive doubling runs (and is reported).
constexpr int kOneShotTagRanks = 1023;
/// A forced two-shot runs on at most this many ranks (its two phases' pair
/// tags take 2 n^2 of the 20 bits); beyond, Rabenseifner runs (and is reported).
constexpr int kTwoShotTagRanks = 512;

/// What auto picks for `bytes` on `nranks` ranks (see AlgoSizes).
Algo choose_algo(Algo requested, std::size_t bytes, int nranks, const AlgoSizes& sizes);

/// One exchange of a schedule. Both halves are optional (peer -1). The
/// receive goes to scratch and is reduced into the buffer when `reduce`,
/// else it lands in the buffer; a step's send and receive ranges never
/// overlap unless the receive reduces.
struct XferStep {
  int tag = 0;  ///< the same number on the sending and the receiving rank
  int send_peer = -1;
  std::size_t send_offset = 0, send_count = 0;
  int recv_peer = -1;
  std::size_t recv_offset = 0, recv_count = 0;
  bool reduce = false;
  /// The send reads the separate input buffer (alltoall, sendrecv), not the working one.
  bool send_from_input = false;
  /// Runs at the same time as the next step: a group of such steps is posted
  /// at once and ends when all of them have. The receives of a group's
  /// reducing steps (same recv range) are reduced once all have arrived, in
  /// the group's order, with the rank's own vector placed after those marked
  /// reduce_before_own (reduce_ordered, data.h).
  bool with_next = false;
  /// In a group: what this step receives comes before the rank's own vector
  /// in the reduction order (the one-shot's lower ranks).
  bool reduce_before_own = false;
};

/// The steps of `rank` among `nranks` for `count` elements.
std::vector<XferStep> plan_oneshot(int nranks, int rank, std::size_t count);
std::vector<XferStep> plan_recursive_doubling(int nranks, int rank, std::size_t count);
std::vector<XferStep> plan_rabenseifner(int nranks, int rank, std::size_t count);
/// Two-shot: a reduce-scatter in which every rank sends block p of its
/// vector straight to rank p and reduces the n copies of its own block in
/// rank order, then an allgather in which it sends that block straight to
/// every rank: 2 latency steps on any rank count (no fold), n-1 messages of
/// S/n per rank in each, 2(n-1)/n x S per rank in all (as the ring and
/// Rabenseifner). Recursive doubling's steps with Rabenseifner's bytes, at
/// the price of n-1 messages per step (few ranks; NCCL's and TensorRT-LLM's
/// two-shot allreduce do the same within a node).
std::vector<XferStep> plan_twoshot(int nranks, int rank, std::size_t count);
/// Reduce to rank 0 (its receives in rank order, each reduced as it lands),
/// then rank 0 sends the result to all at once: 2 latency steps on any rank
/// count, 2(n-1) messages in all (Open MPI's basic linear allreduce).
std::vector<XferStep> plan_linear(int nranks, int rank, std::size_t count);

/// The fabric backend's schedule of a collective other than allreduce, for
/// the call's `count` (the per-rank block of allgather, reducescatter and
/// alltoall), on a working buffer laid out as the result is:
/// - allgather: `algo` kRing: ring, n-1 steps; kRecursiveDoubling: recursive
///   doubling, log2 P steps (P the largest power of two <= n, the others
///   folded in and out: 2 more steps); the rank's own block in place beforehand;
/// - reducescatter: ring, n-1 reducing steps, or (kRecursiveDoubling)
///   recursive halving, log2 P reducing steps (folded as allgather); the
///   result in the rank's block;
/// - broadcast, reduce: binomial tree from / to `root` (log2 n rounds), or
///   with `pieces` > 0 a chain through the ranks from / to the root,
///   pipelined in that many pieces (n - 2 + pieces steps of a piece each);
/// - alltoall: pairwise exchange, n-1 steps, each sending a block of the
///   input buffer (send_from_input); the rank's own block copied beforehand;
/// - sendrecv: one step, the input to rank + 1, the result from rank - 1.
/// Empty for one rank. "allreduce" is not one of them (see choose_algo).
std::vector<XferStep> plan_collective(Coll c, int nranks, int rank, int root, std::size_t count,
                                      std::size_t pieces = 0, Algo algo = Algo::kRing);
/// The name of that schedule ("ring", "rd" (allgather's recursive doubling),
/// "rh" (reducescatter's recursive halving), "binomial", "chain", "pairwise";
/// "" for sendrecv).
std::string collective_algorithm(Coll c, std::size_t pieces = 0, Algo algo = Algo::kRing);
/// Allgather's and reducescatter's schedule for `bytes` (the whole result,
/// resp. input: nccl-tests' size): `requested` when forced (kRing or
/// kRecursiveDoubling), else the log-step one below `sizes.ring_min` and the
/// ring from it. kRing for the other collectives (one schedule each).
Algo choose_collective_algo(Coll c, Algo requested, std::size_t bytes, const AlgoSizes& sizes);
/// The pieces of the chain for `bytes` when broadcast and reduce pipeline
/// (from `chain_min` bytes, --chain-min; 0 below: the binomial tree): 1 MiB
/// each, 16 to 256. Measured on 4 netns hosts at 1 Gbit/s (docs/allreduce.md):
/// the chain 0.83-1.2 of the link from 64 KB, the tree 0.45-0.52; at 16 KB
/// the tree ahead (1.0 against 0.32-0.45).
std::size_t chain_pieces(Coll c, std::size_t bytes, std::size_t count, std::size_t chain_min);

}  // namespace nodeprobe::allreduce
