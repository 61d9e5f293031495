#include "verify.h"

#include <cmath>
#include <cstdio>

namespace nodeprobe::gemm {
namespace {

constexpr double kU23 = 1.0 / 8388608.0;  // 2^-23: FP32 unit roundoff, doubled for truncation

double gamma(std::size_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku >= 1 ? 1e300 : ku / (1 - ku);
}

}  // namespace

Tolerance gemm_tolerance(Precision p) {
  switch (p) {
    case Precision::kFp32: return {0, kU23, 0, 1e-5};
    // TF32 rounds (or truncates) each FP32 input to 10 mantissa bits.
    case Precision::kTf32: return {std::ldexp(1.0, -10), kU23, 0, 4e-3};
    case Precision::kFp16: return {0, kU23, std::ldexp(1.0, -11), 2e-3};
    case Precision::kBf16: return {0, kU23, std::ldexp(1.0, -8), 1.2e-2};
    // FP8 tensor cores accumulate with fewer bits than FP32 between cuBLAS's
    // promotions to FP32 (Hopper keeps ~14): allow 2^-13.
    case Precision::kFp8: return {0, std::ldexp(1.0, -13), std::ldexp(1.0, -8), 2e-2};
  }
  return {0, kU23, 0, 1e-5};
}

Tolerance conv_tolerance(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return {std::ldexp(1.0, -17), kU23, 0, 1e-4};
    case Precision::kFp16: return {std::ldexp(1.0, -10), kU23, std::ldexp(1.0, -11), 5e-3};
    case Precision::kBf16:
    case Precision::kFp8: return {std::ldexp(1.0, -7), kU23, std::ldexp(1.0, -8), 3e-2};
  }
  return {0, kU23, 0, 1e-4};
}

Comparison compare_results(const std::vector<float>& got, const RefResult& ref, std::size_t terms,
                           const Tolerance& tol) {
  Comparison c;
  c.rel_norm_limit = tol.rel_norm;
  if (got.size() != ref.value.size() || ref.abs_sum.size() != ref.value.size()) {
    c.size_mismatch = true;
    return c;
  }
  c.n = got.size();
  const double k_term = 2 * tol.u_in + gamma(terms, tol.u_acc);
  double err2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < c.n; ++i) {
    const double r = ref.value[i];
    const double g = got[i];
    const double err = std::fabs(g - r);
    const double bound = 2 * (k_term * ref.abs_sum[i] + tol.u_out * std::fabs(r)) + 1e-30;
    const bool finite = std::isfinite(g);
    if (!finite) ++c.non_finite;
    if (!finite || err > bound) {
      if (c.bad == 0) {
        c.first_bad = i;
        c.first_bad_got = g;
        c.first_bad_ref = r;
      }
      ++c.bad;
    }
    if (finite) {
      c.max_abs_err = std::max(c.max_abs_err, err);
      c.max_bound_ratio = std::max(c.max_bound_ratio, err / bound);
      err2 += err * err;
    }
    ref2 += r * r;
  }
  c.rel_norm_err = c.non_finite ? HUGE_VAL : (ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  return c;
}

std::string Comparison::describe() const {
  if (size_mismatch) return "result size differs from the reference";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%zu elements, %zu outside the rounding bound (%zu non-finite), max |err| %.3g "
                "(%.2f of bound), relative norm error %.3g (limit %.3g)",
                n, bad, non_finite, max_abs_err, max_bound_ratio, rel_norm_err, rel_norm_limit);
  std::string s = buf;
  if (bad) {
    std::snprintf(buf, sizeof buf, "; first bad element %zu: got %.6g, expected %.6g", first_bad,
                  first_bad_got, first_bad_ref);
    s += buf;
  }
  return s;
}

LossComparison compare_losses(const std::vector<double>& gpu, const std::vector<double>& cpu,
                              double rel_tol) {
  LossComparison c;
  if (gpu.size() != cpu.size() || gpu.empty()) return c;
  c.ok = true;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    const double rel = std::isfinite(gpu[i]) ? std::fabs(gpu[i] - cpu[i]) / std::fabs(cpu[i])
                                             : HUGE_VAL;
    if (rel > c.worst_rel || !std::isfinite(rel)) {
      c.worst_rel = rel;
      c.worst_step = i;
    }
    if (!(rel <= rel_tol)) c.ok = false;
  }
  return c;
}

std::string LossComparison::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "largest difference from the CPU reference %.3g (relative) at step %zu",
                worst_rel, worst_step);
  return buf;
}

}  // namespace nodeprobe::gemm
