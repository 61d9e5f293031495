#pragma once
/// Tolerances and comparisons for GPU results against the CPU references.
///
/// Two tests, both must pass:
/// - per element, a rounding-error bound (Higham, "Accuracy and Stability of
///   Numerical Algorithms", ch. 3): |got - ref| <= 2 * ((2 u_in + gamma_K(u_acc))
///   * sum|a*b| + u_out * |ref|), gamma_K(u) = K u / (1 - K u). It holds for any
///   summation order (split-K, tensor-core blocking), so a violation is a wrong
///   result, never rounding;
/// - overall, ||got - ref||_2 / ||ref||_2 <= rel_norm, which catches smaller
///   systematic errors the worst-case bound is too loose to see.
/// NaN or infinity where the reference is finite always fails.

#include <cstddef>
#include <string>
#include <vector>

#include "cpu_reference.h"
#include "numeric.h"

namespace nodeprobe::gemm {

struct Tolerance {
  double u_in = 0;      ///< unit roundoff applied to each input inside the GPU (TF32: 2^-10)
  double u_acc = 0;     ///< unit roundoff of the accumulation (FP32: 2^-23, truncation allowed)
  double u_out = 0;     ///< unit roundoff of the stored output (FP16: 2^-11, BF16: 2^-8)
  double rel_norm = 0;  ///< bound on the relative 2-norm error
};

/// Tolerance of a GEMM with inputs and output of precision `p`.
Tolerance gemm_tolerance(Precision p);
/// Tolerance of a cuDNN convolution in precision `p` (FP32 without TF32);
/// wider than GEMM's because Winograd and FFT algorithms transform the inputs.
Tolerance conv_tolerance(Precision p);

struct Comparison {
  std::size_t n = 0;            ///< elements compared
  std::size_t bad = 0;          ///< elements outside their bound (incl. non-finite)
  std::size_t non_finite = 0;   ///< NaN / inf where the reference is finite
  std::size_t first_bad = 0;    ///< index of the first bad element
  double first_bad_got = 0, first_bad_ref = 0;
  double max_abs_err = 0;
  double max_bound_ratio = 0;   ///< max |err| / bound (<= 1 passes)
  double rel_norm_err = 0;      ///< ||got - ref|| / ||ref||
  double rel_norm_limit = 0;
  bool size_mismatch = false;

  bool ok() const { return !size_mismatch && bad == 0 && rel_norm_err <= rel_norm_limit; }
  /// One line for a check's detail ("65536 elements, 0 outside bound, ...").
  std::string describe() const;
};

/// Compares `got` with `ref`; `terms` is the number of products summed per
/// element (K of a GEMM).
Comparison compare_results(const std::vector<float>& got, const RefResult& ref, std::size_t terms,
                           const Tolerance& tol);

/// The training loop's GPU losses against the CPU reference: each within
/// `rel_tol` relative (FP32 vs double over 100 SGD steps).
struct LossComparison {
  bool ok = false;
  std::size_t worst_step = 0;
  double worst_rel = 0;
  std::string describe() const;
};
LossComparison compare_losses(const std::vector<double>& gpu, const std::vector<double>& cpu,
                              double rel_tol = 1e-3);

}  // namespace nodeprobe::gemm
