#include <gtest/gtest.h>

#include <cmath>

#include "verify.h"

namespace nodeprobe::gemm {
namespace {

// A GPU-like GEMM on the CPU: inputs as the GPU sees them (TF32 rounds the
// FP32 inputs), FP32 split-K accumulation in another order than the
// reference, then the output rounded to the precision's output type.
std::vector<float> emulated_gemm(Precision p, const std::vector<float>& a, const std::vector<float>& b,
                                 int m, int n, int k) {
  std::vector<float> c(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  const int splits = 4;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float total = 0;
      for (int s = splits - 1; s >= 0; --s) {
        float part = 0;
        for (int kk = s * k / splits; kk < (s + 1) * k / splits; ++kk) {
          float x = a[static_cast<std::size_t>(i * k + kk)], y = b[static_cast<std::size_t>(j * k + kk)];
          if (p == Precision::kTf32) {
            x = round_to_tf32(x);
            y = round_to_tf32(y);
          }
          part = std::fma(x, y, part);
        }
        total += part;
      }
      c[static_cast<std::size_t>(j * m + i)] = round_output(p, total);
    }
  return c;
}

struct Case {
  std::vector<float> a, b;
  RefResult ref;
  int m = 48, n = 40, k = 256;
};

Case make_case(Precision p) {
  Case c;
  random_inputs(p, static_cast<std::size_t>(c.k * c.m), 11, &c.a);
  random_inputs(p, static_cast<std::size_t>(c.k * c.n), 12, &c.b);
  c.ref = gemm_reference(c.a, c.b, c.m, c.n, c.k);
  return c;
}

class VerifyPrecision : public ::testing::TestWithParam<Precision> {};

TEST_P(VerifyPrecision, CorrectGpuLikeResultPasses) {
  const Precision p = GetParam();
  const Case c = make_case(p);
  const Comparison cmp = compare_results(emulated_gemm(p, c.a, c.b, c.m, c.n, c.k), c.ref,
                                         static_cast<std::size_t>(c.k), gemm_tolerance(p));
  EXPECT_TRUE(cmp.ok()) << cmp.describe();
  EXPECT_EQ(cmp.n, static_cast<std::size_t>(c.m * c.n));
  EXPECT_LT(cmp.max_bound_ratio, 1.0);
}

TEST_P(VerifyPrecision, OneWrongElementFails) {
  const Precision p = GetParam();
  const Case c = make_case(p);
  auto got = emulated_gemm(p, c.a, c.b, c.m, c.n, c.k);
  // Typical |c| ~ sqrt(k)/3 ~ 5. FP8's worst-case accumulation bound is
  // loose (~4 here), so the wrong value is far off, as a broken tile would be.
  got[123] += p == Precision::kFp8 ? 20.0f : 0.5f;
  const Comparison cmp = compare_results(got, c.ref, static_cast<std::size_t>(c.k), gemm_tolerance(p));
  EXPECT_FALSE(cmp.ok());
  EXPECT_EQ(cmp.first_bad, 123u);
  EXPECT_NE(cmp.describe().find("first bad element 123"), std::string::npos);
}

TEST_P(VerifyPrecision, NanFails) {
  const Precision p = GetParam();
  const Case c = make_case(p);
  auto got = emulated_gemm(p, c.a, c.b, c.m, c.n, c.k);
  got.back() = std::nanf("");
  const Comparison cmp = compare_results(got, c.ref, static_cast<std::size_t>(c.k), gemm_tolerance(p));
  EXPECT_FALSE(cmp.ok());
  EXPECT_EQ(cmp.non_finite, 1u);
}

TEST_P(VerifyPrecision, ZerosAndTransposedResultFail) {
  const Precision p = GetParam();
  const Case c = make_case(p);
  const std::vector<float> zeros(c.ref.value.size(), 0.0f);
  EXPECT_FALSE(compare_results(zeros, c.ref, static_cast<std::size_t>(c.k), gemm_tolerance(p)).ok());
  // A result in the wrong layout (row-major instead of column-major).
  const auto good = emulated_gemm(p, c.a, c.b, c.m, c.n, c.k);
  std::vector<float> swapped(good.size());
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j)
      swapped[static_cast<std::size_t>(i * c.n + j)] = good[static_cast<std::size_t>(j * c.m + i)];
  EXPECT_FALSE(compare_results(swapped, c.ref, static_cast<std::size_t>(c.k), gemm_tolerance(p)).ok());
}

INSTANTIATE_TEST_SUITE_P(All, VerifyPrecision, ::testing::ValuesIn(kAllPrecisions),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(Verify, TolerancesDiscriminate) {
  // TF32 results are not FP32-accurate: judged as FP32 they fail.
  const Case c = make_case(Precision::kTf32);
  const auto tf32 = emulated_gemm(Precision::kTf32, c.a, c.b, c.m, c.n, c.k);
  EXPECT_TRUE(compare_results(tf32, c.ref, 256, gemm_tolerance(Precision::kTf32)).ok());
  EXPECT_FALSE(compare_results(tf32, c.ref, 256, gemm_tolerance(Precision::kFp32)).ok());
  // A 1 % systematic scale error is far outside FP16's rounding.
  const Case h = make_case(Precision::kFp16);
  auto scaled = emulated_gemm(Precision::kFp16, h.a, h.b, h.m, h.n, h.k);
  for (float& v : scaled) v *= 1.01f;
  const Comparison cmp = compare_results(scaled, h.ref, 256, gemm_tolerance(Precision::kFp16));
  EXPECT_FALSE(cmp.ok());
  EXPECT_GT(cmp.rel_norm_err, cmp.rel_norm_limit);
}

TEST(Verify, SizeMismatchFails) {
  const Case c = make_case(Precision::kFp32);
  const Comparison cmp = compare_results({1.0f}, c.ref, 256, gemm_tolerance(Precision::kFp32));
  EXPECT_FALSE(cmp.ok());
  EXPECT_TRUE(cmp.size_mismatch);
}

TEST(Verify, ConvTolerancesAreWiderThanGemm) {
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kBf16}) {
    EXPECT_GE(conv_tolerance(p).u_in, gemm_tolerance(p).u_in);
    EXPECT_GE(conv_tolerance(p).rel_norm, gemm_tolerance(p).rel_norm);
  }
}

TEST(Verify, Losses) {
  const std::vector<double> cpu = {1.0, 0.9, 0.8};
  EXPECT_TRUE(compare_losses({1.0, 0.9, 0.8000001}, cpu).ok);
  const LossComparison bad = compare_losses({1.0, 0.95, 0.8}, cpu);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.worst_step, 1u);
  EXPECT_FALSE(compare_losses({1.0, std::nan(""), 0.8}, cpu).ok);
  EXPECT_FALSE(compare_losses({1.0}, cpu).ok);
}

}  // namespace
}  // namespace nodeprobe::gemm
