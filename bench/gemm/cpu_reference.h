#pragma once
/// CPU references the GPU results are verified against: GEMM in the layout
/// cuBLAS runs, cuDNN convolution forward / backward data / backward filter,
/// and the 100-step training loop. Everything is computed in double from the
/// exact (already rounded) inputs, and each output also carries the sum of
/// |products| that bounds its rounding error (see verify.h).

#include <cstdint>
#include <vector>

namespace nodeprobe::gemm {

/// A reference result: values and, per element, sum over the terms of |a*b|.
struct RefResult {
  std::vector<double> value;
  std::vector<double> abs_sum;
};

/// C = op(A) * B in the "TN" layout: A stored k x m column-major (lda = k, used
/// transposed), B stored k x n column-major (ldb = k), C m x n column-major
/// (ldc = m). Uses up to `threads` threads (0: hardware concurrency, max 16).
RefResult gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                         int k, unsigned threads = 0);

enum class Layout { kNchw, kNhwc };

/// A 2-D convolution (cross-correlation, as cuDNN and PyTorch compute it).
struct ConvShape {
  int n = 1, c = 1, h = 1, w = 1;  ///< input
  int k = 1, r = 1, s = 1;         ///< filters: k outputs, r x s window
  int pad = 0, stride = 1;
  int p() const { return (h + 2 * pad - r) / stride + 1; }
  int q() const { return (w + 2 * pad - s) / stride + 1; }
  /// Multiply-adds x 2 of one pass (forward, backward data and backward
  /// filter all cost the same).
  double flops() const;
  /// Terms summed per output element of each pass (for tolerances).
  int terms_forward() const { return c * r * s; }
  int terms_backward_data() const { return k * r * s; }
  int terms_backward_filter() const { return n * p() * q(); }
};

/// Element offsets in a buffer. Activations: NCHW or NHWC; filters: KCRS
/// (with NCHW) or KRSC (with NHWC), as cuDNN lays them out.
std::size_t act_offset(Layout l, int C, int H, int W, int n, int c, int h, int w);
std::size_t filter_offset(Layout l, int C, int R, int S, int k, int c, int r, int s);

/// y = conv(x, w): y is n x k x p x q in layout `l`.
RefResult conv_forward_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                           const std::vector<float>& w);
/// dx = conv_transpose(dy, w): dx is n x c x h x w.
RefResult conv_backward_data_ref(const ConvShape& sh, Layout l, const std::vector<float>& w,
                                 const std::vector<float>& dy);
/// dw = correlation of x and dy: dw is k x c x r x s.
RefResult conv_backward_filter_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                                   const std::vector<float>& dy);

/// The training smoke loop of ../shared/FIELD-NOTES.md: Linear(in -> out),
/// MSE loss (mean over all elements), SGD, on fixed random data.
struct TrainConfig {
  int batch = 64;
  int in = 1024;
  int out = 128;
  int steps = 100;
  double lr = 0.01;
  std::uint64_t seed = 0x5eed;
};

/// Column-major tensors: x batch x in, t batch x out, w out x in, b out.
/// x and t are N(0,1); w and b are U(-1/sqrt(in), 1/sqrt(in)) like
/// torch.nn.Linear's initialisation.
struct TrainData {
  std::vector<float> x, t, w, b;
};

TrainData make_train_data(const TrainConfig& cfg);

/// Loss before each of the `steps` updates and after the last one
/// (steps + 1 values), computed in double.
std::vector<double> train_reference(const TrainConfig& cfg, const TrainData& data);

}  // namespace nodeprobe::gemm
