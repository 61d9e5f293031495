#include "data.h"

#include <algorithm>
#include <cmath>

namespace nodeprobe::allreduce {
namespace {

constexpr std::size_t kBases = 31;

// A per-element, per-repetition base in [0, 31): hashed so that a chunk that
// lands at the wrong offset almost surely differs from what belongs there.
std::size_t base(std::size_t i, int rep) {
  constexpr std::uint64_t kA = 0x9E3779B97F4A7C15u, kB = 0xBF58476D1CE4E5B9u, kC = 0x94D049BB133111EBu;
  const std::uint64_t r = static_cast<std::uint32_t>(rep);
  std::uint64_t x = static_cast<std::uint64_t>(i) * kA + r * kB;
  x ^= x >> 31;
  x *= kC;
  x ^= x >> 29;
  return static_cast<std::size_t>(x % kBases);
}

double value_for_base(RedOp op, int rank, std::size_t b0) {
  const std::size_t b = b0 + static_cast<std::size_t>(rank);
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg:
      // 1..31, and 31 distinct sums for any rank count: a misplaced element shows.
      return static_cast<double>(1 + (b0 * 7 + static_cast<std::size_t>(rank) * 11) % 31);
    case RedOp::kProd:
      return b % 3 == 0 ? -1.0 : 1.0;  // products stay +-1
    case RedOp::kMin:
    case RedOp::kMax:
      return static_cast<double>((b0 * 3 + static_cast<std::size_t>(rank) * 5) % 97) - 40.0;
  }
  return 0;
}

double expected_for_base(RedOp op, int nranks, std::size_t b) {
  double acc = value_for_base(op, 0, b);
  for (int r = 1; r < nranks; ++r) {
    const double v = value_for_base(op, r, b);
    switch (op) {
      case RedOp::kProd: acc *= v; break;
      case RedOp::kMin: acc = std::min(acc, v); break;
      case RedOp::kMax: acc = std::max(acc, v); break;
      default: acc += v; break;
    }
  }
  return op == RedOp::kAvg ? acc / nranks : acc;
}

// The op is chosen once per call, outside the element loop, so the loops vectorize.
template <typename T, typename Load, typename Store, typename F>
void reduce_with(T* d, const T* s, std::size_t n, Load load, Store store, F f) {
  for (std::size_t i = 0; i < n; ++i) d[i] = store(f(load(d[i]), load(s[i])));
}

template <typename T, typename Load, typename Store>
void reduce_loop(void* dst, const void* src, std::size_t n, RedOp op, Load load, Store store) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  using V = decltype(load(d[0]));
  switch (op) {
    case RedOp::kProd: reduce_with(d, s, n, load, store, [](V a, V b) { return a * b; }); break;
    case RedOp::kMin: reduce_with(d, s, n, load, store, [](V a, V b) { return b < a ? b : a; }); break;
    case RedOp::kMax: reduce_with(d, s, n, load, store, [](V a, V b) { return a < b ? b : a; }); break;
    case RedOp::kSum:
    case RedOp::kAvg:
    default: reduce_with(d, s, n, load, store, [](V a, V b) { return a + b; }); break;
  }
}

template <typename T>
T ident(T v) { return v; }

double load_elem(const void* buf, std::size_t i, DType type) {
  switch (type) {
    case DType::kFloat32: return static_cast<double>(static_cast<const float*>(buf)[i]);
    case DType::kInt32: return static_cast<const std::int32_t*>(buf)[i];
    case DType::kBFloat16:
      return static_cast<double>(bf16_to_float(static_cast<const std::uint16_t*>(buf)[i]));
    case DType::kFloat16:
      return static_cast<double>(half_to_float(static_cast<const std::uint16_t*>(buf)[i]));
  }
  return 0;
}

void store_elem(void* buf, std::size_t i, DType type, double v) {
  switch (type) {
    case DType::kFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case DType::kInt32: static_cast<std::int32_t*>(buf)[i] = static_cast<std::int32_t>(v); break;
    case DType::kBFloat16:
      static_cast<std::uint16_t*>(buf)[i] = float_to_bf16(static_cast<float>(v));
      break;
    case DType::kFloat16:
      static_cast<std::uint16_t*>(buf)[i] = float_to_half(static_cast<float>(v));
      break;
  }
}

}  // namespace

double input_value(RedOp op, int rank, std::size_t i, int rep) {
  return value_for_base(op, rank, base(i, rep));
}

double expected_value(RedOp op, int nranks, std::size_t i, int rep) {
  return expected_for_base(op, nranks, base(i, rep));
}

void fill_input(void* buf, std::size_t count, DType type, RedOp op, int rank, int rep) {
  for (std::size_t i = 0; i < count; ++i) store_elem(buf, i, type, input_value(op, rank, i, rep));
}

void fill_poison(void* buf, std::size_t count, DType type) {
  for (std::size_t i = 0; i < count; ++i) store_elem(buf, i, type, -12345.0);
}

double tolerance(DType type, int nranks) {
  const double n = std::max(1, nranks);
  switch (type) {
    case DType::kInt32: return 0;
    case DType::kFloat32: return n * 1.2e-7;
    case DType::kBFloat16: return n * 7.9e-3;
    case DType::kFloat16: return n * 9.8e-4;
  }
  return 0;
}

long count_wrong(const void* buf, std::size_t count, DType type, RedOp op, int nranks, int rep) {
  const double tol = tolerance(type, nranks);
  long wrong = 0;
  // Expected values depend only on the element's base: computed once per base.
  double expect[kBases];
  for (std::size_t b = 0; b < kBases; ++b) expect[b] = expected_for_base(op, nranks, b);
  for (std::size_t i = 0; i < count; ++i) {
    double e = expect[base(i, rep)];
    if (type == DType::kInt32 && op == RedOp::kAvg) e = std::trunc(e);
    const double got = load_elem(buf, i, type);
    const double diff = std::fabs(got - e);
    if (!(diff <= tol * std::max(1.0, std::fabs(e)))) ++wrong;
  }
  return wrong;
}

namespace {

// Values of the collectives that move data without reducing: 1..31, exact
// in every type, depending on the rank that sent them and the element.
double moved_value(int from_rank, std::size_t i, int rep) { return input_value(RedOp::kSum, from_rank, i, rep); }

// What element i of this rank's result must hold.
double coll_expected(const CollData& d, std::size_t i, int rep) {
  const std::size_t block = d.counts.param;
  switch (d.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce: return expected_value(d.op, d.nranks, i, rep);
    case Coll::kReduceScatter:
      return expected_value(d.op, d.nranks, static_cast<std::size_t>(d.rank) * block + i, rep);
    case Coll::kAllGather: return block ? moved_value(static_cast<int>(i / block), i % block, rep) : 0;
    case Coll::kBroadcast: return moved_value(d.root, i, rep);
    case Coll::kAllToAll:
      // Block q came from rank q: its element j was that rank's element rank x block + j.
      return block ? moved_value(static_cast<int>(i / block), static_cast<std::size_t>(d.rank) * block + i % block, rep)
                   : 0;
    case Coll::kSendRecv: return moved_value((d.rank + d.nranks - 1) % d.nranks, i, rep);
  }
  return 0;
}

}  // namespace

void fill_coll_input(void* send, const CollData& d, int rep) {
  const std::size_t n = d.counts.send;
  if (coll_reduces(d.coll)) return fill_input(send, n, d.type, d.op, d.rank, rep);
  if (d.coll == Coll::kBroadcast && d.rank != d.root) return fill_poison(send, n, d.type);
  for (std::size_t i = 0; i < n; ++i) store_elem(send, i, d.type, moved_value(d.rank, i, rep));
}

CollLayout coll_layout(const CollData& d, bool in_place) {
  const std::size_t own = static_cast<std::size_t>(d.rank) * d.counts.param;
  CollLayout l;
  l.input_in_result = in_place;
  l.input_at = in_place && d.coll == Coll::kAllGather ? own : 0;
  l.poison = !in_place || d.coll == Coll::kAllGather ? d.counts.recv : 0;
  l.result_at = in_place && d.coll == Coll::kReduceScatter ? own : 0;
  return l;
}

bool coll_has_result(const CollData& d) { return d.coll != Coll::kReduce || d.rank == d.root; }

long count_coll_wrong(const void* recv, const CollData& d, int rep) {
  if (!coll_has_result(d)) return 0;
  if (d.coll == Coll::kAllReduce || d.coll == Coll::kReduce)
    return count_wrong(recv, d.counts.recv, d.type, d.op, d.nranks, rep);
  const double tol = coll_reduces(d.coll) ? tolerance(d.type, d.nranks) : 0;
  long wrong = 0;
  for (std::size_t i = 0; i < d.counts.recv; ++i) {
    double e = coll_expected(d, i, rep);
    if (d.type == DType::kInt32 && d.op == RedOp::kAvg && coll_reduces(d.coll)) e = std::trunc(e);
    const double diff = std::fabs(load_elem(recv, i, d.type) - e);
    if (!(diff <= tol * std::max(1.0, std::fabs(e)))) ++wrong;
  }
  return wrong;
}

void reduce_into(void* dst, const void* src, std::size_t count, DType type, RedOp op) {
  switch (type) {
    case DType::kFloat32:
      reduce_loop<float>(dst, src, count, op, ident<float>, ident<float>);
      break;
    case DType::kInt32:
      reduce_loop<std::int32_t>(dst, src, count, op, ident<std::int32_t>, ident<std::int32_t>);
      break;
    case DType::kBFloat16:
      reduce_loop<std::uint16_t>(dst, src, count, op, bf16_to_float, float_to_bf16);
      break;
    case DType::kFloat16:
      reduce_loop<std::uint16_t>(dst, src, count, op, half_to_float, float_to_half);
      break;
  }
}

void reduce_ordered(void* own, void* const* parts, std::size_t nparts, std::size_t own_at, std::size_t count,
                    DType type, RedOp op) {
  own_at = std::min(own_at, nparts);
  for (std::size_t i = 1; i < own_at; ++i) reduce_into(parts[0], parts[i], count, type, op);
  if (own_at > 0) reduce_into(own, parts[0], count, type, op);  // own op acc == acc op own
  for (std::size_t i = own_at; i < nparts; ++i) reduce_into(own, parts[i], count, type, op);
}

void finish_avg(void* buf, std::size_t count, DType type, int nranks) {
  for (std::size_t i = 0; i < count; ++i)
    store_elem(buf, i, type, load_elem(buf, i, type) / nranks);
}

}  // namespace nodeprobe::allreduce
