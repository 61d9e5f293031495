// cuDNN convolutions (legacy API: present in cuDNN 8 and 9). FP32 runs NCHW
// with CUDNN_FMA_MATH (no TF32); FP16/BF16 run NHWC on tensor cores with FP32
// accumulation. The algorithm is the heuristic's best that runs.
#include <cstring>

#include "cuda_backend.h"

#ifdef NODEPROBE_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace nodeprobe::gemm::cuda {

#ifndef NODEPROBE_HAVE_CUDNN

std::string cudnn_version() { return {}; }
std::string CudaBackend::conv_unavailable_reason() {
  return "this build has no cuDNN (cudnn.h / libcudnn not found at build time)";
}
void* CudaBackend::cudnn_handle(int) { throw std::logic_error(conv_unavailable_reason()); }
void CudaBackend::destroy_cudnn(void*) {}
Timing CudaBackend::time_conv(int, const ConvShape&, Precision, ConvPass, int, int) {
  throw std::logic_error(conv_unavailable_reason());
}
ConvOutputs CudaBackend::run_conv(int, const ConvShape&, Precision, const std::vector<float>&,
                                  const std::vector<float>&, const std::vector<float>&) {
  throw std::logic_error(conv_unavailable_reason());
}

#else

namespace {

[[noreturn]] void throw_cudnn(cudnnStatus_t rc, const char* call, const char* file, int line) {
  // cudnnGetErrorString returns the status's name ("CUDNN_STATUS_BAD_PARAM", in
  // cuDNN 9 with a sub-code suffix): the code name the reports show.
  const char* name = cudnnGetErrorString(rc);
  throw_api_error("cudnn", rc, name ? name : "CUDNN_STATUS_UNKNOWN", "", call, file, line);
}

#define NP_CUDNN_CHECK(call)                                             \
  do {                                                                   \
    const cudnnStatus_t np_rc_ = (call);                                 \
    if (np_rc_ != CUDNN_STATUS_SUCCESS) throw_cudnn(np_rc_, #call, __FILE__, __LINE__); \
  } while (0)

constexpr std::size_t kMaxWorkspace = 512u << 20;

cudnnDataType_t dtype(Precision p) {
  switch (p) {
    case Precision::kFp16: return CUDNN_DATA_HALF;
#if CUDNN_VERSION >= 8100
    case Precision::kBf16: return CUDNN_DATA_BFLOAT16;
#endif
    case Precision::kFp32: return CUDNN_DATA_FLOAT;
    default: break;
  }
  throw std::logic_error("no cuDNN data type for " + std::string(to_string(p)));
}

// Descriptors of one convolution problem.
struct Problem {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Problem(const ConvShape& sh, Precision p) {
    const cudnnTensorFormat_t f = p == Precision::kFp32 ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    const cudnnDataType_t t = dtype(p);
    NP_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    NP_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    NP_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    NP_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    NP_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, f, t, sh.n, sh.c, sh.h, sh.w));
    NP_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, t, f, sh.k, sh.c, sh.r, sh.s));
    NP_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, sh.pad, sh.pad, sh.stride, sh.stride, 1, 1,
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    NP_CUDNN_CHECK(cudnnSetConvolutionMathType(
        conv, p == Precision::kFp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    NP_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, f, t, sh.n, sh.k, sh.p(), sh.q()));
  }
  ~Problem() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
};

struct Buffers {
  DeviceBuffer x, w, y;  // for backward data, x holds dx and y holds dy (same shapes)
  Buffers(const ConvShape& sh, std::size_t eb)
      : x(eb * static_cast<std::size_t>(sh.n) * static_cast<std::size_t>(sh.c) *
          static_cast<std::size_t>(sh.h) * static_cast<std::size_t>(sh.w)),
        w(eb * static_cast<std::size_t>(sh.k) * static_cast<std::size_t>(sh.c) *
          static_cast<std::size_t>(sh.r) * static_cast<std::size_t>(sh.s)),
        y(eb * static_cast<std::size_t>(sh.n) * static_cast<std::size_t>(sh.k) *
          static_cast<std::size_t>(sh.p()) * static_cast<std::size_t>(sh.q())) {}
};

// One pass with a chosen algorithm: runs it, or reports its name.
class Pass {
 public:
  Pass(cudnnHandle_t h, const Problem& pr, Buffers& b, ConvPass pass) : h_(h), pr_(pr), b_(b), pass_(pass) {}

  // Picks the first heuristic candidate that fits the workspace and runs.
  void choose(cudaStream_t s) {
    const int n = candidates(16);
    std::string last_error = "no algorithm";
    for (int i = 0; i < n; ++i) {
      if (status_[i] != CUDNN_STATUS_SUCCESS || memory_[i] > kMaxWorkspace) continue;
      algo_ = i;
      ws_ = std::make_unique<DeviceBuffer>(memory_[i] > 0 ? memory_[i] : 16);
      try {
        run();
        NP_CUDA_CHECK(cudaStreamSynchronize(s));
        return;
      } catch (const ApiError& e) {
        // cuDNN refusing this algorithm: try the next. A CUDA fault is the
        // GPU's, not the algorithm's: let it surface.
        if (e.info().api != "cudnn") throw;
        last_error = e.what();
      }
    }
    throw std::runtime_error("cuDNN " + std::string(to_string(pass_)) + ": no algorithm ran: " + last_error);
  }

  void run() const {
    const float one = 1.0f, zero = 0.0f;
    void* ws = ws_->get();
    const std::size_t wsz = ws_->size();
    switch (pass_) {
      case ConvPass::kForward:
        NP_CUDNN_CHECK(cudnnConvolutionForward(h_, &one, pr_.x, b_.x.get(), pr_.w, b_.w.get(), pr_.conv,
                                               fwd_[algo_], ws, wsz, &zero, pr_.y, b_.y.get()));
        break;
      case ConvPass::kBackwardData:
        NP_CUDNN_CHECK(cudnnConvolutionBackwardData(h_, &one, pr_.w, b_.w.get(), pr_.y, b_.y.get(), pr_.conv,
                                                    bwd_data_[algo_], ws, wsz, &zero, pr_.x, b_.x.get()));
        break;
      case ConvPass::kBackwardFilter:
        NP_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h_, &one, pr_.x, b_.x.get(), pr_.y, b_.y.get(),
                                                      pr_.conv, bwd_filter_[algo_], ws, wsz, &zero,
                                                      pr_.w, b_.w.get()));
        break;
    }
  }

  std::string algo_name() const {
    static const char* kFwd[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT",
                                 "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char* kBwdData[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
                                     "WINOGRAD_NONFUSED"};
    static const char* kBwdFilter[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD",
                                       "WINOGRAD_NONFUSED", "FFT_TILING"};
    auto pick = [](const char* const* names, std::size_t count, int v) {
      return v >= 0 && static_cast<std::size_t>(v) < count ? std::string(names[v]) : "algo " + std::to_string(v);
    };
    switch (pass_) {
      case ConvPass::kForward: return pick(kFwd, std::size(kFwd), static_cast<int>(fwd_[algo_]));
      case ConvPass::kBackwardData: return pick(kBwdData, std::size(kBwdData), static_cast<int>(bwd_data_[algo_]));
      case ConvPass::kBackwardFilter: return pick(kBwdFilter, std::size(kBwdFilter), static_cast<int>(bwd_filter_[algo_]));
    }
    return "?";
  }
  std::size_t workspace() const { return ws_ ? ws_->size() : 0; }

 private:
  int candidates(int max) {
    if (fetched_) return count_;
    fetched_ = true;
    switch (pass_) {
      case ConvPass::kForward: {
        cudnnConvolutionFwdAlgoPerf_t perf[16];
        NP_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h_, pr_.x, pr_.w, pr_.conv, pr_.y, max, &count_, perf));
        for (int i = 0; i < count_; ++i) {
          fwd_[i] = perf[i].algo;
          status_[i] = perf[i].status;
          memory_[i] = perf[i].memory;
        }
        break;
      }
      case ConvPass::kBackwardData: {
        cudnnConvolutionBwdDataAlgoPerf_t perf[16];
        NP_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h_, pr_.w, pr_.y, pr_.conv, pr_.x, max, &count_, perf));
        for (int i = 0; i < count_; ++i) {
          bwd_data_[i] = perf[i].algo;
          status_[i] = perf[i].status;
          memory_[i] = perf[i].memory;
        }
        break;
      }
      case ConvPass::kBackwardFilter: {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[16];
        NP_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h_, pr_.x, pr_.y, pr_.conv, pr_.w, max, &count_, perf));
        for (int i = 0; i < count_; ++i) {
          bwd_filter_[i] = perf[i].algo;
          status_[i] = perf[i].status;
          memory_[i] = perf[i].memory;
        }
        break;
      }
    }
    return count_;
  }

  cudnnHandle_t h_;
  const Problem& pr_;
  Buffers& b_;
  ConvPass pass_;
  bool fetched_ = false;
  int count_ = 0, algo_ = 0;
  cudnnConvolutionFwdAlgo_t fwd_[16]{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_[16]{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_[16]{};
  cudnnStatus_t status_[16]{};
  std::size_t memory_[16]{};
  std::unique_ptr<DeviceBuffer> ws_;
};

std::vector<std::uint8_t> encode(Precision p, const std::vector<float>& v) {
  std::vector<std::uint8_t> raw(v.size() * (p == Precision::kFp32 ? 4 : 2));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (p == Precision::kFp32) {
      std::memcpy(&raw[i * 4], &v[i], 4);
    } else {
      const std::uint16_t h = p == Precision::kFp16 ? float_to_half(v[i]) : float_to_bf16(v[i]);
      std::memcpy(&raw[i * 2], &h, 2);
    }
  }
  return raw;
}

std::vector<float> download(Precision p, const DeviceBuffer& d, cudaStream_t s) {
  std::vector<std::uint8_t> raw(d.size());
  NP_CUDA_CHECK(cudaMemcpyAsync(raw.data(), d.get(), raw.size(), cudaMemcpyDeviceToHost, s));
  NP_CUDA_CHECK(cudaStreamSynchronize(s));
  return decode_outputs(p == Precision::kFp32 ? Precision::kFp32 : p, raw);
}

}  // namespace

std::string cudnn_version() {
  const std::size_t v = cudnnGetVersion();
  // cuDNN 9: major * 10000 + minor * 100 + patch; cuDNN 8: major * 1000 + minor * 100 + patch.
  if (v >= 90000) return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
  return std::to_string(v / 1000) + "." + std::to_string((v / 100) % 10) + "." + std::to_string(v % 100);
}

std::string CudaBackend::conv_unavailable_reason() { return {}; }

void* CudaBackend::cudnn_handle(int dev) {
  DeviceHandles& h = handles(dev);
  if (!h.cudnn) {
    cudnnHandle_t c = nullptr;
    NP_CUDNN_CHECK(cudnnCreate(&c));
    NP_CUDNN_CHECK(cudnnSetStream(c, h.stream));
    h.cudnn = c;
  }
  return h.cudnn;
}

void CudaBackend::destroy_cudnn(void* h) { cudnnDestroy(static_cast<cudnnHandle_t>(h)); }

Timing CudaBackend::time_conv(int dev, const ConvShape& sh, Precision p, ConvPass pass, int warmup,
                              int reps) {
  DeviceScope scope(dev);
  const auto h = static_cast<cudnnHandle_t>(cudnn_handle(dev));
  const cudaStream_t s = handles(dev).stream;
  const Problem pr(sh, p);
  Buffers b(sh, p == Precision::kFp32 ? 4 : 2);
  // Random inputs (every buffer, since each pass reads a different pair).
  for (DeviceBuffer* d : {&b.x, &b.w, &b.y}) {
    const auto& n = noise(d->size());
    NP_CUDA_CHECK(cudaMemcpyAsync(d->get(), n.data(), d->size(), cudaMemcpyHostToDevice, s));
  }
  Pass run(h, pr, b, pass);
  run.choose(s);
  for (int i = 0; i < warmup; ++i) run.run();
  EventPairs ev(static_cast<std::size_t>(reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    ev.start(i, s);
    run.run();
    ev.stop(i, s);
  }
  Timing t;
  t.seconds = ev.seconds();
  t.algo = run.algo_name();
  t.workspace = run.workspace();
  return t;
}

ConvOutputs CudaBackend::run_conv(int dev, const ConvShape& sh, Precision p,
                                  const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& dy) {
  DeviceScope scope(dev);
  const auto h = static_cast<cudnnHandle_t>(cudnn_handle(dev));
  const cudaStream_t s = handles(dev).stream;
  const Problem pr(sh, p);
  const std::size_t eb = p == Precision::kFp32 ? 4 : 2;
  ConvOutputs out;
  auto load = [&](Buffers& b, const std::vector<float>& xv, const std::vector<float>& wv,
                  const std::vector<float>& yv) {
    for (auto [d, v] : {std::pair<DeviceBuffer*, const std::vector<float>*>{&b.x, &xv}, {&b.w, &wv}, {&b.y, &yv}}) {
      if (v->empty()) {
        NP_CUDA_CHECK(cudaMemsetAsync(d->get(), 0xff, d->size(), s));  // poison outputs
        continue;
      }
      const auto raw = encode(p, *v);
      if (raw.size() != d->size()) throw std::invalid_argument("conv input size mismatch");
      NP_CUDA_CHECK(cudaMemcpyAsync(d->get(), raw.data(), raw.size(), cudaMemcpyHostToDevice, s));
    }
  };
  const std::vector<float> none;
  {
    Buffers b(sh, eb);
    load(b, x, w, none);
    Pass f(h, pr, b, ConvPass::kForward);
    f.choose(s);
    out.y = download(p, b.y, s);
    out.algo_forward = f.algo_name();
  }
  {
    Buffers b(sh, eb);
    load(b, none, w, dy);
    Pass f(h, pr, b, ConvPass::kBackwardData);
    f.choose(s);
    out.dx = download(p, b.x, s);
    out.algo_backward_data = f.algo_name();
  }
  {
    Buffers b(sh, eb);
    load(b, x, none, dy);
    Pass f(h, pr, b, ConvPass::kBackwardFilter);
    f.choose(s);
    out.dw = download(p, b.w, s);
    out.algo_backward_filter = f.algo_name();
  }
  return out;
}

#endif  // NODEPROBE_HAVE_CUDNN

}  // namespace nodeprobe::gemm::cuda
