#include "data.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace nodeprobe::allreduce {
namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

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
      return static_cast<double>(fp16_to_float(static_cast<const std::uint16_t*>(buf)[i]));
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
      static_cast<std::uint16_t*>(buf)[i] = float_to_fp16(static_cast<float>(v));
      break;
  }
}

}  // namespace

std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_to_float(std::uint16_t h) { return float_of(static_cast<std::uint32_t>(h) << 16); }

std::uint16_t float_to_fp16(float f) {
  const std::uint32_t u = bits_of(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (absu >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absu < 0x38800000u) {  // subnormal or zero in half
    const float a = float_of(absu);
    const float scaled = a * 16777216.0f;  // 2^24: half subnormal unit
    const auto m = static_cast<std::uint32_t>(std::nearbyint(scaled));
    return static_cast<std::uint16_t>(sign | m);
  }
  std::uint32_t e = ((absu >> 23) - 112u) << 10;
  std::uint32_t m = absu & 0x7fffffu;
  std::uint32_t h = e | (m >> 13);
  const std::uint32_t rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  const std::uint32_t m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) / 16777216.0f;
    return sign ? -v : v;
  }
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
  return float_of(sign | ((e + 112u) << 23) | (m << 13));
}

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
      reduce_loop<std::uint16_t>(dst, src, count, op, fp16_to_float, float_to_fp16);
      break;
  }
}

void finish_avg(void* buf, std::size_t count, DType type, int nranks) {
  for (std::size_t i = 0; i < count; ++i)
    store_elem(buf, i, type, load_elem(buf, i, type) / nranks);
}

}  // namespace nodeprobe::allreduce
