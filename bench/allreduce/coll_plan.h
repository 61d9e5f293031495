#pragma once
/// Latency-bound allreduce schedules of the fabric backend, apart from the
/// endpoint that runs them (so a unit test can run every rank in memory):
///
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
enum class Algo { kAuto, kRecursiveDoubling, kRabenseifner, kRing };

/// "auto", "rd", "rabenseifner", "ring".
std::string to_string(Algo a);
/// Accepts the names above and "recursive_doubling"; false when unknown.
bool algo_from_string(const std::string& s, Algo* out);

/// What auto picks for `bytes`: recursive doubling up to `rd_max`, the ring
/// from `ring_min`, Rabenseifner between. One rank or no element: ring (a no-op).
Algo choose_algo(Algo requested, std::size_t bytes, std::size_t rd_max, std::size_t ring_min);

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
};

/// The steps of `rank` among `nranks` for `count` elements.
std::vector<XferStep> plan_recursive_doubling(int nranks, int rank, std::size_t count);
std::vector<XferStep> plan_rabenseifner(int nranks, int rank, std::size_t count);

/// The fabric backend's schedule of a collective other than allreduce, for
/// the call's `count` (the per-rank block of allgather, reducescatter and
/// alltoall), on a working buffer laid out as the result is:
/// - allgather: ring, n-1 steps; the rank's own block in place beforehand;
/// - reducescatter: ring, n-1 reducing steps; the result in the rank's block;
/// - broadcast, reduce: binomial tree from / to `root` (log2 n rounds), or
///   with `pieces` > 0 a chain through the ranks from / to the root,
///   pipelined in that many pieces (n - 2 + pieces steps of a piece each);
/// - alltoall: pairwise exchange, n-1 steps, each sending a block of the
///   input buffer (send_from_input); the rank's own block copied beforehand;
/// - sendrecv: one step, the input to rank + 1, the result from rank - 1.
/// Empty for one rank. "allreduce" is not one of them (see choose_algo).
std::vector<XferStep> plan_collective(Coll c, int nranks, int rank, int root, std::size_t count,
                                      std::size_t pieces = 0);
/// The name of that schedule ("ring", "binomial", "chain", "pairwise"; "" for sendrecv).
std::string collective_algorithm(Coll c, std::size_t pieces = 0);
/// The pieces of the chain for `bytes` when broadcast and reduce pipeline
/// (from `chain_min` bytes, --chain-min; 0 below: the binomial tree): 1 MiB
/// each, 16 to 256. Measured on 4 netns hosts at 1 Gbit/s (docs/allreduce.md):
/// the chain 0.83-1.2 of the link from 64 KB, the tree 0.45-0.52; at 16 KB
/// the tree ahead (1.0 against 0.32-0.45).
std::size_t chain_pieces(Coll c, std::size_t bytes, std::size_t count, std::size_t chain_min);

}  // namespace nodeprobe::allreduce
