#include <gtest/gtest.h>

#include <cmath>

#include "cpu_reference.h"
#include "numeric.h"

namespace nodeprobe::gemm {
namespace {

std::vector<float> randoms(std::size_t n, std::uint64_t seed) {
  std::vector<float> v;
  random_inputs(Precision::kFp32, n, seed, &v);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

TEST(GemmReference, MatchesTheDefinitionInTnLayout) {
  const int m = 7, n = 5, k = 9;
  const auto a = randoms(static_cast<std::size_t>(k * m), 1), b = randoms(static_cast<std::size_t>(k * n), 2);
  const RefResult r = gemm_reference(a, b, m, n, k, 1);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      // op(A)(i, kk) = A_stored(kk, i) = a[i * k + kk]; B(kk, j) = b[j * k + kk]; C(i, j) = c[j * m + i].
      double s = 0, sa = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double p = static_cast<double>(a[static_cast<std::size_t>(i * k + kk)]) *
                         static_cast<double>(b[static_cast<std::size_t>(j * k + kk)]);
        s += p;
        sa += std::fabs(p);
      }
      EXPECT_DOUBLE_EQ(r.value[static_cast<std::size_t>(j * m + i)], s);
      EXPECT_DOUBLE_EQ(r.abs_sum[static_cast<std::size_t>(j * m + i)], sa);
    }
}

TEST(GemmReference, ThreadCountDoesNotChangeTheResult) {
  const int m = 33, n = 17, k = 64;
  const auto a = randoms(static_cast<std::size_t>(k * m), 3), b = randoms(static_cast<std::size_t>(k * n), 4);
  const RefResult one = gemm_reference(a, b, m, n, k, 1);
  const RefResult many = gemm_reference(a, b, m, n, k, 5);
  EXPECT_EQ(one.value, many.value);
  EXPECT_EQ(one.abs_sum, many.abs_sum);
}

std::size_t volume(int a, int b, int c, int d) {
  return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c) *
         static_cast<std::size_t>(d);
}

class ConvReference : public ::testing::TestWithParam<std::tuple<ConvShape, Layout>> {};

// Forward against a direct evaluation of the definition at every output.
TEST_P(ConvReference, ForwardMatchesDefinition) {
  const auto [sh, l] = GetParam();
  const auto x = randoms(volume(sh.n, sh.c, sh.h, sh.w), 5);
  const auto w = randoms(volume(sh.k, sh.c, sh.r, sh.s), 6);
  const RefResult y = conv_forward_ref(sh, l, x, w);
  ASSERT_EQ(y.value.size(), volume(sh.n, sh.k, sh.p(), sh.q()));
  for (int n = 0; n < sh.n; ++n)
    for (int k = 0; k < sh.k; ++k)
      for (int p = 0; p < sh.p(); ++p)
        for (int q = 0; q < sh.q(); ++q) {
          double s = 0;
          for (int c = 0; c < sh.c; ++c)
            for (int r = 0; r < sh.r; ++r)
              for (int t = 0; t < sh.s; ++t) {
                const int h = p * sh.stride + r - sh.pad, ww = q * sh.stride + t - sh.pad;
                if (h < 0 || h >= sh.h || ww < 0 || ww >= sh.w) continue;
                s += static_cast<double>(x[act_offset(l, sh.c, sh.h, sh.w, n, c, h, ww)]) *
                     static_cast<double>(w[filter_offset(l, sh.c, sh.r, sh.s, k, c, r, t)]);
              }
          EXPECT_NEAR(y.value[act_offset(l, sh.k, sh.p(), sh.q(), n, k, p, q)], s, 1e-12);
        }
}

// The backward passes are the adjoints of the forward one:
// <conv(x, w), dy> = <x, bwd_data(w, dy)> = <w, bwd_filter(x, dy)>.
TEST_P(ConvReference, BackwardPassesAreAdjoints) {
  const auto [sh, l] = GetParam();
  const auto x = randoms(volume(sh.n, sh.c, sh.h, sh.w), 7);
  const auto w = randoms(volume(sh.k, sh.c, sh.r, sh.s), 8);
  const auto dy = randoms(volume(sh.n, sh.k, sh.p(), sh.q()), 9);
  const RefResult y = conv_forward_ref(sh, l, x, w);
  const RefResult dx = conv_backward_data_ref(sh, l, w, dy);
  const RefResult dw = conv_backward_filter_ref(sh, l, x, dy);
  const double lhs = dot(dy, y.value);
  EXPECT_NEAR(dot(x, dx.value), lhs, 1e-9 * (1 + std::fabs(lhs)));
  EXPECT_NEAR(dot(w, dw.value), lhs, 1e-9 * (1 + std::fabs(lhs)));
  for (std::size_t i = 0; i < dx.value.size(); ++i) ASSERT_GE(dx.abs_sum[i], std::fabs(dx.value[i]));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvReference,
    ::testing::Combine(::testing::Values(ConvShape{2, 3, 16, 16, 8, 7, 7, 3, 2},
                                         ConvShape{2, 8, 8, 8, 8, 3, 3, 1, 1},
                                         ConvShape{2, 16, 8, 8, 8, 1, 1, 0, 1},
                                         ConvShape{1, 4, 9, 7, 5, 3, 3, 0, 2}),
                       ::testing::Values(Layout::kNchw, Layout::kNhwc)));

TEST(ConvReference, LayoutsAgree) {
  const ConvShape sh{2, 5, 9, 9, 4, 3, 3, 1, 2};
  const auto x = randoms(volume(sh.n, sh.c, sh.h, sh.w), 10);
  const auto w = randoms(volume(sh.k, sh.c, sh.r, sh.s), 11);
  // Same logical tensors stored NCHW/KCRS and NHWC/KRSC.
  std::vector<float> xh(x.size()), wh(w.size());
  for (int n = 0; n < sh.n; ++n)
    for (int c = 0; c < sh.c; ++c)
      for (int h = 0; h < sh.h; ++h)
        for (int ww = 0; ww < sh.w; ++ww)
          xh[act_offset(Layout::kNhwc, sh.c, sh.h, sh.w, n, c, h, ww)] =
              x[act_offset(Layout::kNchw, sh.c, sh.h, sh.w, n, c, h, ww)];
  for (int k = 0; k < sh.k; ++k)
    for (int c = 0; c < sh.c; ++c)
      for (int r = 0; r < sh.r; ++r)
        for (int s = 0; s < sh.s; ++s)
          wh[filter_offset(Layout::kNhwc, sh.c, sh.r, sh.s, k, c, r, s)] =
              w[filter_offset(Layout::kNchw, sh.c, sh.r, sh.s, k, c, r, s)];
  const RefResult a = conv_forward_ref(sh, Layout::kNchw, x, w);
  const RefResult b = conv_forward_ref(sh, Layout::kNhwc, xh, wh);
  for (int n = 0; n < sh.n; ++n)
    for (int k = 0; k < sh.k; ++k)
      for (int p = 0; p < sh.p(); ++p)
        for (int q = 0; q < sh.q(); ++q)
          EXPECT_DOUBLE_EQ(a.value[act_offset(Layout::kNchw, sh.k, sh.p(), sh.q(), n, k, p, q)],
                           b.value[act_offset(Layout::kNhwc, sh.k, sh.p(), sh.q(), n, k, p, q)]);
  EXPECT_DOUBLE_EQ(sh.flops(), 2.0 * 2 * 4 * 5 * 5 * 5 * 9);
}

TEST(TrainReference, LossFallsMonotonically) {
  const TrainConfig cfg;
  const TrainData d = make_train_data(cfg);
  const std::vector<double> losses = train_reference(cfg, d);
  ASSERT_EQ(losses.size(), static_cast<std::size_t>(cfg.steps + 1));
  for (std::size_t i = 1; i < losses.size(); ++i) ASSERT_LT(losses[i], losses[i - 1]) << i;
  EXPECT_LT(losses.back(), 0.9 * losses.front());
  EXPECT_GT(losses.front(), 0.9);  // targets are N(0,1): the loss starts near 1 + var(y)
}

TEST(TrainReference, FirstLossIsTheMeanSquaredError) {
  TrainConfig cfg;
  cfg.batch = 3;
  cfg.in = 4;
  cfg.out = 2;
  cfg.steps = 1;
  const TrainData d = make_train_data(cfg);
  double loss = 0;
  for (int n = 0; n < 3; ++n)
    for (int o = 0; o < 2; ++o) {
      double y = d.b[static_cast<std::size_t>(o)];
      for (int i = 0; i < 4; ++i)
        y += static_cast<double>(d.x[static_cast<std::size_t>(i * 3 + n)]) *
             static_cast<double>(d.w[static_cast<std::size_t>(i * 2 + o)]);
      const double r = y - static_cast<double>(d.t[static_cast<std::size_t>(o * 3 + n)]);
      loss += r * r;
    }
  EXPECT_NEAR(train_reference(cfg, d).front(), loss / 6, 1e-12);
  cfg.lr = 0;  // no learning, no change
  const auto flat = train_reference(cfg, d);
  EXPECT_DOUBLE_EQ(flat.front(), flat.back());
}

}  // namespace
}  // namespace nodeprobe::gemm
