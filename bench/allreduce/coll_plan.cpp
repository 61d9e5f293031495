#include "coll_plan.h"

#include <algorithm>

#include "ring.h"

namespace nodeprobe::allreduce {
namespace {

// The fold: P = largest power of two <= n, rem = n - P. Of ranks below 2 rem,
// even ones give their vector to rank + 1 and sit out; the others take part
// with a new rank in [0, P).
struct Fold {
  int pof2 = 1, rem = 0;
  int newrank = -1;  ///< -1: sits out
  int real(int nr) const { return nr < rem ? nr * 2 + 1 : nr + rem; }
};

Fold fold_of(int nranks, int rank) {
  Fold f;
  while (f.pof2 * 2 <= nranks) f.pof2 *= 2;
  f.rem = nranks - f.pof2;
  if (rank < 2 * f.rem) f.newrank = rank % 2 ? rank / 2 : -1;
  else f.newrank = rank - f.rem;
  return f;
}

// Tags: 0 the fold, 1.. the algorithm's steps, the last one the unfold.
constexpr int kFoldTag = 0;

// The fold's first step (`in`: even ranks below 2 rem give their vector to
// the next odd one) or its last (the odd ones hand the result back). Returns
// false when this rank sits out (its whole schedule is the two fold steps).
bool add_fold(std::vector<XferStep>& steps, const Fold& f, int rank, std::size_t count, int tag, bool in) {
  if (rank >= 2 * f.rem) return true;
  const bool gives = (f.newrank < 0) == in;  // in: the one sitting out sends; out: it receives
  XferStep s;
  s.tag = tag;
  (gives ? s.send_peer : s.recv_peer) = f.newrank < 0 ? rank + 1 : rank - 1;
  (gives ? s.send_count : s.recv_count) = count;
  s.reduce = in && !gives;
  steps.push_back(s);
  return f.newrank >= 0;
}

int log2_of(int pof2) {
  int k = 0;
  while ((1 << k) < pof2) ++k;
  return k;
}

// Rabenseifner's two phases: the reduce-scatter halves the segments a rank
// owns each step, the allgather doubles them.
enum class Phase { kHalving, kDoubling };

// One step of either phase with the partner across `mask`, on the segments
// [lo, hi) of P this rank owns, which it updates. Halving: send the partner's
// half, reduce the own half (the lower one when the bit is 0) and keep it.
// Doubling: send the owned range and receive the partner's, next to it (on
// the partner's side), and own both. Segment i is the elements
// [bounds[i], bounds[i + 1]) of the working buffer (P + 1 bounds).
XferStep halving_doubling_step(const Fold& f, const std::vector<std::size_t>& bounds, int mask, int tag,
                               Phase phase, int& lo, int& hi) {
  const bool lower = (f.newrank & mask) == 0;
  int send_lo = lo, send_hi = hi, recv_lo, recv_hi;
  if (phase == Phase::kHalving) {
    const int mid = lo + (hi - lo) / 2;
    (lower ? send_lo : send_hi) = mid;
    recv_lo = lower ? lo : mid;
    recv_hi = lower ? mid : hi;
  } else {
    recv_lo = lower ? hi : lo - mask;
    recv_hi = lower ? hi + mask : lo;
  }
  XferStep s;
  s.tag = tag;
  s.send_peer = s.recv_peer = f.real(f.newrank ^ mask);
  s.send_offset = bounds[static_cast<std::size_t>(send_lo)];
  s.send_count = bounds[static_cast<std::size_t>(send_hi)] - s.send_offset;
  s.recv_offset = bounds[static_cast<std::size_t>(recv_lo)];
  s.recv_count = bounds[static_cast<std::size_t>(recv_hi)] - s.recv_offset;
  s.reduce = phase == Phase::kHalving;
  lo = phase == Phase::kHalving ? recv_lo : std::min(lo, recv_lo);
  hi = phase == Phase::kHalving ? recv_hi : std::max(hi, recv_hi);
  return s;
}

}  // namespace

std::string to_string(Algo a) {
  switch (a) {
    case Algo::kAuto: return "auto";
    case Algo::kOneShot: return "oneshot";
    case Algo::kRecursiveDoubling: return "rd";
    case Algo::kRabenseifner: return "rabenseifner";
    case Algo::kRing: return "ring";
    case Algo::kLinear: return "linear";
    case Algo::kTwoShot: return "twoshot";
  }
  return "auto";
}

bool algo_from_string(const std::string& s, Algo* out) {
  if (s == "auto") *out = Algo::kAuto;
  else if (s == "oneshot" || s == "one_shot") *out = Algo::kOneShot;
  else if (s == "rd" || s == "recursive_doubling") *out = Algo::kRecursiveDoubling;
  else if (s == "rabenseifner") *out = Algo::kRabenseifner;
  else if (s == "ring") *out = Algo::kRing;
  else if (s == "linear") *out = Algo::kLinear;
  else if (s == "twoshot" || s == "two_shot") *out = Algo::kTwoShot;
  else return false;
  return true;
}

Algo choose_algo(Algo requested, std::size_t bytes, int nranks, const AlgoSizes& sizes) {
  // The one-shot's pair tags have 20 bits: beyond 1023 ranks it would alias.
  if (requested == Algo::kOneShot && nranks > kOneShotTagRanks) return Algo::kRecursiveDoubling;
  if (requested == Algo::kTwoShot && nranks > kTwoShotTagRanks) return Algo::kRabenseifner;
  if (requested != Algo::kAuto) return requested;
  if (bytes <= sizes.oneshot_max && nranks <= kOneShotMaxRanks) return Algo::kOneShot;
  if (bytes <= sizes.linear_max && nranks >= kLinearMinRanks && nranks <= kLinearMaxRanks) return Algo::kLinear;
  if (bytes <= sizes.rd_max) return Algo::kRecursiveDoubling;
  if (bytes >= sizes.ring_min) return Algo::kRing;
  return Algo::kRabenseifner;
}

std::vector<XferStep> plan_oneshot(int nranks, int rank, std::size_t count) {
  std::vector<XferStep> steps;
  if (nranks <= 1 || count == 0) return steps;
  // Peers in rank order: the reduction runs in this order too.
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    XferStep s;
    // Receives match by tag alone (any sender): a tag per pair of ranks keeps
    // each peer's vector in its own place.
    s.tag = 1 + std::min(rank, peer) * nranks + std::max(rank, peer);
    s.send_peer = s.recv_peer = peer;
    s.send_count = s.recv_count = count;
    s.reduce = true;
    s.with_next = true;
    s.reduce_before_own = peer < rank;
    steps.push_back(s);
  }
  steps.back().with_next = false;
  return steps;
}

std::vector<XferStep> plan_twoshot(int nranks, int rank, std::size_t count) {
  std::vector<XferStep> steps;
  if (nranks <= 1 || count == 0) return steps;
  const int n = nranks;
  auto at = [&](int r) { return segment_offset(count, n, r); };
  auto len = [&](int r) { return segment_offset(count, n, r + 1) - segment_offset(count, n, r); };
  // One group of exchanges with every peer: send block `send(peer)`, receive
  // block `recv(peer)`. Pair tags as the one-shot's (receives match by tag
  // alone), the allgather's after all of the reduce-scatter's.
  auto group = [&](int tag_base, bool reduce, auto send, auto recv) {
    for (int peer = 0; peer < n; ++peer) {
      if (peer == rank) continue;
      XferStep s;
      s.tag = tag_base + 1 + std::min(rank, peer) * n + std::max(rank, peer);
      s.send_peer = s.recv_peer = peer;
      s.send_offset = at(send(peer));
      s.send_count = len(send(peer));
      s.recv_offset = at(recv(peer));
      s.recv_count = len(recv(peer));
      s.reduce = reduce;
      s.reduce_before_own = reduce && peer < rank;
      s.with_next = true;
      steps.push_back(s);
    }
    steps.back().with_next = false;
  };
  const auto peers_block = [](int peer) { return peer; };
  const auto own_block = [rank](int) { return rank; };
  // Reduce-scatter: block p to rank p, every peer's copy of the own block
  // received and reduced in rank order; then allgather: the reduced own
  // block to every peer, theirs into place.
  group(0, true, peers_block, own_block);
  group(n * n, false, own_block, peers_block);
  return steps;
}

std::vector<XferStep> plan_recursive_doubling(int nranks, int rank, std::size_t count) {
  std::vector<XferStep> steps;
  if (nranks <= 1 || count == 0) return steps;
  const Fold f = fold_of(nranks, rank);
  const int k = log2_of(f.pof2);
  if (add_fold(steps, f, rank, count, kFoldTag, true)) {
    for (int i = 0; i < k; ++i) {
      const int peer = f.real(f.newrank ^ (1 << i));
      XferStep s;
      s.tag = 1 + i;
      s.send_peer = s.recv_peer = peer;
      s.send_count = s.recv_count = count;
      s.reduce = true;
      steps.push_back(s);
    }
  }
  add_fold(steps, f, rank, count, 1 + k, false);
  return steps;
}

std::vector<XferStep> plan_rabenseifner(int nranks, int rank, std::size_t count) {
  std::vector<XferStep> steps;
  if (nranks <= 1 || count == 0) return steps;
  const Fold f = fold_of(nranks, rank);
  const int P = f.pof2;
  const int k = log2_of(P);
  if (add_fold(steps, f, rank, count, kFoldTag, true)) {
    // Segments [lo, hi) of P: halved each step down to segment newrank, then
    // doubled back to all P.
    std::vector<std::size_t> bounds(static_cast<std::size_t>(P) + 1);
    for (int i = 0; i <= P; ++i) bounds[static_cast<std::size_t>(i)] = segment_offset(count, P, i);
    int lo = 0, hi = P, tag = 1;
    for (int mask = P / 2; mask >= 1; mask /= 2)
      steps.push_back(halving_doubling_step(f, bounds, mask, tag++, Phase::kHalving, lo, hi));
    for (int mask = 1; mask < P; mask *= 2)
      steps.push_back(halving_doubling_step(f, bounds, mask, tag++, Phase::kDoubling, lo, hi));
  }
  add_fold(steps, f, rank, count, 1 + 2 * k, false);
  return steps;
}

std::vector<XferStep> plan_linear(int nranks, int rank, std::size_t count) {
  std::vector<XferStep> steps;
  if (nranks <= 1 || count == 0) return steps;
  // Receives match by tag alone: a tag per sender keeps the reduction in rank order.
  const int bcast_tag = nranks + 1;
  if (rank == 0) {
    for (int peer = 1; peer < nranks; ++peer) {
      XferStep s;
      s.tag = 1 + peer;
      s.recv_peer = peer;
      s.recv_count = count;
      s.reduce = true;
      steps.push_back(s);
    }
    for (int peer = 1; peer < nranks; ++peer) {
      XferStep s;
      s.tag = bcast_tag;
      s.send_peer = peer;
      s.send_count = count;
      s.with_next = peer + 1 < nranks;
      steps.push_back(s);
    }
    return steps;
  }
  XferStep up;
  up.tag = 1 + rank;
  up.send_peer = 0;
  up.send_count = count;
  steps.push_back(up);
  XferStep down;
  down.tag = bcast_tag;
  down.recv_peer = 0;
  down.recv_count = count;
  steps.push_back(down);
  return steps;
}

namespace {

std::size_t mod(long a, int n) { return static_cast<std::size_t>(((a % n) + n) % n); }

void ring_steps(std::vector<XferStep>& steps, int n, int rank, std::size_t block, bool reduce) {
  // Allgather: step s passes on block rank - s and takes block rank - s - 1.
  // Reduce-scatter is one block behind, so the last block reduced is the rank's own.
  const long shift = reduce ? 1 : 0;
  for (int s = 0; s < n - 1; ++s) {
    XferStep x;
    x.tag = 1 + s;
    x.send_peer = (rank + 1) % n;
    x.recv_peer = (rank + n - 1) % n;
    x.send_offset = mod(rank - s - shift, n) * block;
    x.recv_offset = mod(rank - s - 1 - shift, n) * block;
    x.send_count = x.recv_count = block;
    x.reduce = reduce;
    steps.push_back(x);
  }
}

// Allgather by recursive doubling and reduce-scatter by recursive halving
// (MPICH's choices for short messages), on n blocks of `count`: log2 P steps
// instead of the ring's n - 1, the same bytes per rank on a power of two.
// Other rank counts fold as the allreduce does: virtual rank v < rem stands
// for real ranks 2v and 2v + 1 and so for their two blocks, the others for
// one, so every range of virtual ranks is one range of blocks. Allgather:
// the even rank below 2 rem gives its block to the odd one first and gets
// the whole result back last; reduce-scatter: it gives its whole vector
// (reduced there) and gets its reduced block back.
void log_steps(std::vector<XferStep>& steps, Coll c, int n, int rank, std::size_t count) {
  const Fold f = fold_of(n, rank);
  const int P = f.pof2, k = log2_of(P);
  const bool rs = c == Coll::kReduceScatter;
  const std::size_t all = static_cast<std::size_t>(n) * count;
  const std::size_t own = static_cast<std::size_t>(rank) * count;
  const bool folded = rank < 2 * f.rem, sits_out = f.newrank < 0;
  if (folded) {
    XferStep x;
    x.tag = kFoldTag;
    if (sits_out) {
      x.send_peer = rank + 1;
      x.send_offset = rs ? 0 : own;
      x.send_count = rs ? all : count;
    } else {
      x.recv_peer = rank - 1;
      x.recv_offset = rs ? 0 : own - count;
      x.recv_count = rs ? all : count;
      x.reduce = rs;
    }
    steps.push_back(x);
  }
  if (!sits_out) {
    std::vector<std::size_t> bounds(static_cast<std::size_t>(P) + 1);
    for (int v = 0; v <= P; ++v)
      bounds[static_cast<std::size_t>(v)] = static_cast<std::size_t>(v < f.rem ? 2 * v : v + f.rem) * count;
    int lo = rs ? 0 : f.newrank, hi = rs ? P : f.newrank + 1, tag = 1;
    if (rs) {
      for (int mask = P / 2; mask >= 1; mask /= 2)
        steps.push_back(halving_doubling_step(f, bounds, mask, tag++, Phase::kHalving, lo, hi));
    } else {
      for (int mask = 1; mask < P; mask *= 2)
        steps.push_back(halving_doubling_step(f, bounds, mask, tag++, Phase::kDoubling, lo, hi));
    }
  }
  if (folded) {
    XferStep x;
    x.tag = 1 + k;
    if (sits_out) {
      x.recv_peer = rank + 1;
      x.recv_offset = rs ? own : 0;
      x.recv_count = rs ? count : all;
    } else {
      x.send_peer = rank - 1;
      x.send_offset = rs ? own - count : 0;
      x.send_count = rs ? count : all;
    }
    steps.push_back(x);
  }
}

// Binomial trees over ranks relative to the root (MPICH's): a rank receives
// from the one its lowest set bit away, then sends to each below that bit.
void binomial_broadcast(std::vector<XferStep>& steps, int n, int rank, int root, std::size_t count) {
  const int v = static_cast<int>(mod(rank - root, n));
  auto real = [&](int rel) { return (rel + root) % n; };
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if (v & mask) {
      XferStep x;
      x.tag = mask;
      x.recv_peer = real(v - mask);
      x.recv_count = count;
      steps.push_back(x);
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask >= n) continue;
    XferStep x;
    x.tag = mask;
    x.send_peer = real(v + mask);
    x.send_count = count;
    steps.push_back(x);
  }
}

void binomial_reduce(std::vector<XferStep>& steps, int n, int rank, int root, std::size_t count) {
  const int v = static_cast<int>(mod(rank - root, n));
  auto real = [&](int rel) { return (rel + root) % n; };
  for (int mask = 1; mask < n; mask <<= 1) {
    XferStep x;
    x.tag = mask;
    if (v & mask) {
      x.send_peer = real(v & ~mask);
      x.send_count = count;
      steps.push_back(x);
      break;
    }
    if ((v | mask) < n) {
      x.recv_peer = real(v | mask);
      x.recv_count = count;
      x.reduce = true;
      steps.push_back(x);
    }
  }
}

// A chain through the ranks, pipelined in `pieces`: broadcast from the root
// (relative rank 0) to the last, or reduce from the last to the root. The
// rank `d` links from its chain's start receives piece p at step p + d - 1
// and passes it on at step p + d: sender and receiver meet at one step
// number, the tag of both halves.
void chain(std::vector<XferStep>& steps, int n, int rank, int root, std::size_t count, std::size_t pieces,
           bool reduce) {
  const int v = static_cast<int>(mod(rank - root, n));
  const int d = reduce ? n - 1 - v : v;  // links from the start of the data's way
  auto real = [&](int rel) { return (rel + root) % n; };
  const int prev = reduce ? real(v + 1) : real(v - 1), next = reduce ? real(v - 1) : real(v + 1);
  const bool receives = d > 0, sends = d < n - 1;
  const auto k = static_cast<long>(pieces);
  auto piece = [&](long p, std::size_t* off, std::size_t* len) {
    const std::size_t a = count * static_cast<std::size_t>(p) / pieces;
    const std::size_t b = count * static_cast<std::size_t>(p + 1) / pieces;
    *off = a;
    *len = b - a;
  };
  for (long t = receives ? d - 1 : 0; t <= k - 1 + d; ++t) {
    XferStep x;
    x.tag = static_cast<int>(t + 1);
    const long in = t - d + 1, out = t - d;
    if (receives && in >= 0 && in < k) {
      x.recv_peer = prev;
      piece(in, &x.recv_offset, &x.recv_count);
      x.reduce = reduce;
    }
    if (sends && out >= 0 && out < k) {
      x.send_peer = next;
      piece(out, &x.send_offset, &x.send_count);
    }
    if (x.recv_peer >= 0 || x.send_peer >= 0) steps.push_back(x);
  }
}

}  // namespace

std::size_t chain_pieces(Coll c, std::size_t bytes, std::size_t count, std::size_t chain_min) {
  if ((c != Coll::kBroadcast && c != Coll::kReduce) || bytes < chain_min) return 0;
  return std::min(count, std::clamp<std::size_t>(bytes >> 20, 16, 256));
}

Algo choose_collective_algo(Coll c, Algo requested, std::size_t bytes, const AlgoSizes& sizes) {
  if (c != Coll::kAllGather && c != Coll::kReduceScatter) return Algo::kRing;
  if (requested == Algo::kRing || requested == Algo::kRecursiveDoubling) return requested;
  return bytes >= sizes.ring_min ? Algo::kRing : Algo::kRecursiveDoubling;
}

std::vector<XferStep> plan_collective(Coll c, int nranks, int rank, int root, std::size_t count,
                                      std::size_t pieces, Algo algo) {
  std::vector<XferStep> steps;
  if (nranks <= 1 || count == 0) return steps;
  if (pieces > 0 && (c == Coll::kBroadcast || c == Coll::kReduce)) {
    chain(steps, nranks, rank, root, count, std::min(pieces, count), c == Coll::kReduce);
    return steps;
  }
  if ((c == Coll::kAllGather || c == Coll::kReduceScatter) && algo == Algo::kRecursiveDoubling) {
    log_steps(steps, c, nranks, rank, count);
    return steps;
  }
  switch (c) {
    case Coll::kAllGather: ring_steps(steps, nranks, rank, count, false); break;
    case Coll::kReduceScatter: ring_steps(steps, nranks, rank, count, true); break;
    case Coll::kBroadcast: binomial_broadcast(steps, nranks, rank, root, count); break;
    case Coll::kReduce: binomial_reduce(steps, nranks, rank, root, count); break;
    case Coll::kAllToAll:
      for (int s = 1; s < nranks; ++s) {
        XferStep x;
        x.tag = s;
        x.send_peer = (rank + s) % nranks;
        x.recv_peer = (rank + nranks - s) % nranks;
        x.send_offset = static_cast<std::size_t>(x.send_peer) * count;
        x.recv_offset = static_cast<std::size_t>(x.recv_peer) * count;
        x.send_count = x.recv_count = count;
        x.send_from_input = true;
        steps.push_back(x);
      }
      break;
    case Coll::kSendRecv: {
      XferStep x;
      x.tag = 1;
      x.send_peer = (rank + 1) % nranks;
      x.recv_peer = (rank + nranks - 1) % nranks;
      x.send_count = x.recv_count = count;
      x.send_from_input = true;
      steps.push_back(x);
      break;
    }
    case Coll::kAllReduce: break;
  }
  return steps;
}

std::string collective_algorithm(Coll c, std::size_t pieces, Algo algo) {
  if (pieces > 0 && (c == Coll::kBroadcast || c == Coll::kReduce)) return "chain";
  const bool log = algo == Algo::kRecursiveDoubling;
  switch (c) {
    case Coll::kAllGather: return log ? "rd" : "ring";
    case Coll::kReduceScatter: return log ? "rh" : "ring";
    case Coll::kBroadcast:
    case Coll::kReduce: return "binomial";
    case Coll::kAllToAll: return "pairwise";
    default: return "";
  }
}

}  // namespace nodeprobe::allreduce
