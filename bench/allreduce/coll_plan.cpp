#include "coll_plan.h"

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

}  // namespace

std::string to_string(Algo a) {
  switch (a) {
    case Algo::kAuto: return "auto";
    case Algo::kRecursiveDoubling: return "rd";
    case Algo::kRabenseifner: return "rabenseifner";
    case Algo::kRing: return "ring";
  }
  return "auto";
}

bool algo_from_string(const std::string& s, Algo* out) {
  if (s == "auto") *out = Algo::kAuto;
  else if (s == "rd" || s == "recursive_doubling") *out = Algo::kRecursiveDoubling;
  else if (s == "rabenseifner") *out = Algo::kRabenseifner;
  else if (s == "ring") *out = Algo::kRing;
  else return false;
  return true;
}

Algo choose_algo(Algo requested, std::size_t bytes, std::size_t rd_max, std::size_t ring_min) {
  if (requested != Algo::kAuto) return requested;
  if (bytes <= rd_max) return Algo::kRecursiveDoubling;
  if (bytes >= ring_min) return Algo::kRing;
  return Algo::kRabenseifner;
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
    const int r = f.newrank;
    // Segments [lo, hi) of P: halved each step, this rank keeps the half its
    // bit says (lower half when the bit is 0), so it ends with segment r.
    auto elems = [&](int a, int b) {
      return segment_offset(count, P, b) - segment_offset(count, P, a);
    };
    int lo = 0, hi = P, tag = 1;
    for (int mask = P / 2; mask >= 1; mask /= 2) {
      const int mid = lo + (hi - lo) / 2;
      const bool lower = (r & mask) == 0;
      const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
      const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
      XferStep s;
      s.tag = tag++;
      s.send_peer = s.recv_peer = f.real(r ^ mask);
      s.send_offset = segment_offset(count, P, give_lo);
      s.send_count = elems(give_lo, give_hi);
      s.recv_offset = segment_offset(count, P, keep_lo);
      s.recv_count = elems(keep_lo, keep_hi);
      s.reduce = true;
      steps.push_back(s);
      lo = keep_lo;
      hi = keep_hi;
    }
    // Allgather: the owned range doubles each step, growing towards the partner's side.
    for (int mask = 1; mask < P; mask *= 2) {
      const bool lower = (r & mask) == 0;
      const int other_lo = lower ? hi : lo - mask, other_hi = lower ? hi + mask : lo;
      XferStep s;
      s.tag = tag++;
      s.send_peer = s.recv_peer = f.real(r ^ mask);
      s.send_offset = segment_offset(count, P, lo);
      s.send_count = elems(lo, hi);
      s.recv_offset = segment_offset(count, P, other_lo);
      s.recv_count = elems(other_lo, other_hi);
      steps.push_back(s);
      lo = lower ? lo : other_lo;
      hi = lower ? other_hi : hi;
    }
  }
  add_fold(steps, f, rank, count, 1 + 2 * k, false);
  return steps;
}

}  // namespace nodeprobe::allreduce
