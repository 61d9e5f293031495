#include "cpu_reference.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "numeric.h"

namespace nodeprobe::gemm {
namespace {

using std::size_t;

size_t idx(size_t row, size_t col, size_t ld) { return col * ld + row; }

// Calls f(y_off, x_off, w_off) for every (output, input, filter) triple a
// convolution multiplies, skipping padding.
template <class F>
void for_each_conv_term(const ConvShape& sh, Layout l, F&& f) {
  const int P = sh.p(), Q = sh.q();
  for (int n = 0; n < sh.n; ++n)
    for (int k = 0; k < sh.k; ++k)
      for (int p = 0; p < P; ++p)
        for (int q = 0; q < Q; ++q) {
          const size_t yo = act_offset(l, sh.k, P, Q, n, k, p, q);
          for (int r = 0; r < sh.r; ++r) {
            const int h = p * sh.stride - sh.pad + r;
            if (h < 0 || h >= sh.h) continue;
            for (int s = 0; s < sh.s; ++s) {
              const int w = q * sh.stride - sh.pad + s;
              if (w < 0 || w >= sh.w) continue;
              for (int c = 0; c < sh.c; ++c)
                f(yo, act_offset(l, sh.c, sh.h, sh.w, n, c, h, w),
                  filter_offset(l, sh.c, sh.r, sh.s, k, c, r, s));
            }
          }
        }
}

}  // namespace

RefResult gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                         int k, unsigned threads) {
  RefResult out;
  const auto M = static_cast<size_t>(m), N = static_cast<size_t>(n), K = static_cast<size_t>(k);
  out.value.assign(M * N, 0.0);
  out.abs_sum.assign(M * N, 0.0);
  if (threads == 0) threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max(1, n)));
  auto work = [&](size_t j0, size_t j1) {
    for (size_t j = j0; j < j1; ++j) {
      const float* bj = &b[j * K];
      for (size_t i = 0; i < M; ++i) {
        const float* ai = &a[i * K];  // column i of the stored k x m matrix = row i of op(A)
        double s = 0, sa = 0;
        for (size_t kk = 0; kk < K; ++kk) {
          const double prod = static_cast<double>(ai[kk]) * static_cast<double>(bj[kk]);
          s += prod;
          sa += std::fabs(prod);
        }
        out.value[idx(i, j, M)] = s;
        out.abs_sum[idx(i, j, M)] = sa;
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t chunk = (N + threads - 1) / threads;
  for (size_t j0 = 0; j0 < N; j0 += chunk) pool.emplace_back(work, j0, std::min(N, j0 + chunk));
  for (auto& t : pool) t.join();
  return out;
}

double ConvShape::flops() const {
  return 2.0 * n * k * p() * q() * static_cast<double>(c) * r * s;
}

size_t act_offset(Layout l, int C, int H, int W, int n, int c, int h, int w) {
  const auto N_ = static_cast<size_t>(n), C_ = static_cast<size_t>(C), H_ = static_cast<size_t>(H),
             W_ = static_cast<size_t>(W);
  if (l == Layout::kNchw) return ((N_ * C_ + static_cast<size_t>(c)) * H_ + static_cast<size_t>(h)) * W_ + static_cast<size_t>(w);
  return ((N_ * H_ + static_cast<size_t>(h)) * W_ + static_cast<size_t>(w)) * C_ + static_cast<size_t>(c);
}

size_t filter_offset(Layout l, int C, int R, int S, int k, int c, int r, int s) {
  const auto K_ = static_cast<size_t>(k), C_ = static_cast<size_t>(C), R_ = static_cast<size_t>(R),
             S_ = static_cast<size_t>(S);
  if (l == Layout::kNchw) return ((K_ * C_ + static_cast<size_t>(c)) * R_ + static_cast<size_t>(r)) * S_ + static_cast<size_t>(s);
  return ((K_ * R_ + static_cast<size_t>(r)) * S_ + static_cast<size_t>(s)) * C_ + static_cast<size_t>(c);
}

RefResult conv_forward_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                           const std::vector<float>& w) {
  RefResult y;
  const size_t n = static_cast<size_t>(sh.n) * static_cast<size_t>(sh.k) *
                   static_cast<size_t>(sh.p()) * static_cast<size_t>(sh.q());
  y.value.assign(n, 0.0);
  y.abs_sum.assign(n, 0.0);
  for_each_conv_term(sh, l, [&](size_t yo, size_t xo, size_t wo) {
    const double prod = static_cast<double>(x[xo]) * static_cast<double>(w[wo]);
    y.value[yo] += prod;
    y.abs_sum[yo] += std::fabs(prod);
  });
  return y;
}

RefResult conv_backward_data_ref(const ConvShape& sh, Layout l, const std::vector<float>& w,
                                 const std::vector<float>& dy) {
  RefResult dx;
  const size_t n = static_cast<size_t>(sh.n) * static_cast<size_t>(sh.c) *
                   static_cast<size_t>(sh.h) * static_cast<size_t>(sh.w);
  dx.value.assign(n, 0.0);
  dx.abs_sum.assign(n, 0.0);
  for_each_conv_term(sh, l, [&](size_t yo, size_t xo, size_t wo) {
    const double prod = static_cast<double>(dy[yo]) * static_cast<double>(w[wo]);
    dx.value[xo] += prod;
    dx.abs_sum[xo] += std::fabs(prod);
  });
  return dx;
}

RefResult conv_backward_filter_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                                   const std::vector<float>& dy) {
  RefResult dw;
  const size_t n = static_cast<size_t>(sh.k) * static_cast<size_t>(sh.c) *
                   static_cast<size_t>(sh.r) * static_cast<size_t>(sh.s);
  dw.value.assign(n, 0.0);
  dw.abs_sum.assign(n, 0.0);
  for_each_conv_term(sh, l, [&](size_t yo, size_t xo, size_t wo) {
    const double prod = static_cast<double>(x[xo]) * static_cast<double>(dy[yo]);
    dw.value[wo] += prod;
    dw.abs_sum[wo] += std::fabs(prod);
  });
  return dw;
}

TrainData make_train_data(const TrainConfig& cfg) {
  TrainData d;
  Rng rng(cfg.seed);
  const auto B = static_cast<size_t>(cfg.batch), I = static_cast<size_t>(cfg.in),
             O = static_cast<size_t>(cfg.out);
  d.x.resize(B * I);
  d.t.resize(B * O);
  d.w.resize(O * I);
  d.b.resize(O);
  for (float& v : d.x) v = rng.normal();
  for (float& v : d.t) v = rng.normal();
  const float bound = 1.0f / std::sqrt(static_cast<float>(cfg.in));
  for (float& v : d.w) v = bound * rng.uniform();
  for (float& v : d.b) v = bound * rng.uniform();
  return d;
}

std::vector<double> train_reference(const TrainConfig& cfg, const TrainData& d) {
  const auto B = static_cast<size_t>(cfg.batch), I = static_cast<size_t>(cfg.in),
             O = static_cast<size_t>(cfg.out), steps = static_cast<size_t>(cfg.steps);
  // Each output neuron's weights, bias and loss evolve independently of the
  // others (the loss is a sum over outputs), so neurons train in parallel.
  std::vector<double> xt(B * I);  // x row-major (features contiguous) for the gradient
  for (size_t n = 0; n < B; ++n)
    for (size_t i = 0; i < I; ++i) xt[n * I + i] = static_cast<double>(d.x[i * B + n]);
  std::vector<double> loss_by_output(O * (steps + 1));
  const double scale = 2.0 / static_cast<double>(B * O);  // d(mean squared error)/dy
  const double lr = cfg.lr;
  auto train_outputs = [&](size_t o0, size_t o1) {
    std::vector<double> w(I), gw(I), r(B);
    for (size_t o = o0; o < o1; ++o) {
      for (size_t i = 0; i < I; ++i) w[i] = static_cast<double>(d.w[i * O + o]);
      double b = static_cast<double>(d.b[o]);
      for (size_t step = 0; step <= steps; ++step) {
        // Forward: r = x w_o + b - t_o.
        for (size_t n = 0; n < B; ++n) r[n] = b - static_cast<double>(d.t[o * B + n]);
        for (size_t i = 0; i < I; ++i) {
          const float* xi = &d.x[i * B];
          const double wi = w[i];
          for (size_t n = 0; n < B; ++n) r[n] += wi * static_cast<double>(xi[n]);
        }
        double loss = 0, gb = 0;
        for (size_t n = 0; n < B; ++n) {
          loss += r[n] * r[n];
          gb += r[n];
        }
        loss_by_output[o * (steps + 1) + step] = loss;
        if (step == steps) break;
        // Backward and SGD: gw = scale r^T x, gb = scale r^T 1.
        std::fill(gw.begin(), gw.end(), 0.0);
        for (size_t n = 0; n < B; ++n) {
          const double rn = r[n];
          const double* xn = &xt[n * I];
          for (size_t i = 0; i < I; ++i) gw[i] += rn * xn[i];
        }
        for (size_t i = 0; i < I; ++i) w[i] -= lr * scale * gw[i];
        b -= lr * scale * gb;
      }
    }
  };
  const size_t threads = std::max<size_t>(1, std::min<size_t>({16, O, std::thread::hardware_concurrency()}));
  std::vector<std::thread> pool;
  const size_t chunk = (O + threads - 1) / threads;
  for (size_t o0 = 0; o0 < O; o0 += chunk) pool.emplace_back(train_outputs, o0, std::min(O, o0 + chunk));
  for (auto& t : pool) t.join();
  std::vector<double> losses(steps + 1, 0.0);
  for (size_t o = 0; o < O; ++o)
    for (size_t step = 0; step <= steps; ++step) losses[step] += loss_by_output[o * (steps + 1) + step];
  for (double& l : losses) l /= static_cast<double>(B * O);
  return losses;
}

}  // namespace nodeprobe::gemm
