// cuDNN convolutions (legacy API: present in cuDNN 8 and 9), cuDNN loaded at
// run time. FP32 runs NCHW with CUDNN_FMA_MATH (no TF32); FP16/BF16 run NHWC
// on tensor cores with FP32 accumulation. The algorithm is the heuristic's
// best that runs, each candidate with its own math type.
#include <cstring>

#include "conv_candidates.h"
#include "cuda_backend.h"
#include "nodeprobe/shared_library.h"

#ifdef NODEPROBE_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace nodeprobe::gemm::cuda {

#ifndef NODEPROBE_HAVE_CUDNN

LibraryState cudnn_state() {
  return {"cudnn", "", "", "this build has no cuDNN (cudnn.h / libcudnn not found at build time)"};
}
std::string CudaBackend::conv_unavailable_reason() { return cudnn_state().error; }
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

static_assert(CUDNN_DEFAULT_MATH == cudnn_math::kDefault);
static_assert(CUDNN_TENSOR_OP_MATH == cudnn_math::kTensorOp);
static_assert(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION == cudnn_math::kTensorOpAllowConversion);
static_assert(CUDNN_FMA_MATH == cudnn_math::kFma);

#define NP_CUDNN_FUNCS(X)                                                              \
  X(cudnnGetErrorString) X(cudnnGetVersion) X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream) \
  X(cudnnCreateTensorDescriptor) X(cudnnDestroyTensorDescriptor)                       \
  X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor)                       \
  X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor)             \
  X(cudnnSetTensor4dDescriptor) X(cudnnSetFilter4dDescriptor)                          \
  X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionMathType)                    \
  X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionBackwardDataAlgorithm_v7) \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                                     \
  X(cudnnConvolutionForward) X(cudnnConvolutionBackwardData) X(cudnnConvolutionBackwardFilter)

struct Cudnn {
  NP_CUDNN_FUNCS(NP_DECLARE_API_MEMBER)
};

struct LoadedCudnn {
  Cudnn api;
  LibraryState state;
};

// cuDNN of this build's major version, loaded once; a node without it still
// runs every other section and the report names the missing library.
const LoadedCudnn& loaded_cudnn() {
  static const LoadedCudnn l = [] {
    LoadedCudnn out;
    out.state.name = "cudnn";
    const std::string soname = "libcudnn.so." + std::to_string(CUDNN_MAJOR);
    const SharedLibrary lib = SharedLibrary::open_cuda(soname);
    if (!lib.ok()) {
      out.state.error = lib.error() + " (install cuDNN " + std::to_string(CUDNN_MAJOR) + " for CUDA " +
                        std::to_string(CUDART_VERSION / 1000) +
                        "; or point NODEPROBE_CUDA_LIBRARY_PATH at a directory holding it, e.g. "
                        "pip's nvidia/cudnn/lib)";
      return out;
    }
    std::string missing;
#define NP_BIND_CUDNN(fn) NP_BIND_SYMBOL(out.api, lib, missing, fn);
    NP_CUDNN_FUNCS(NP_BIND_CUDNN)
#undef NP_BIND_CUDNN
    if (!missing.empty()) {
      out.state.error = lib.path() + " lacks " + missing + ": not a usable cuDNN " + std::to_string(CUDNN_MAJOR);
      return out;
    }
    out.state.path = lib.path();
    const std::size_t v = out.api.cudnnGetVersion();
    // cuDNN 9: major * 10000 + minor * 100 + patch; cuDNN 8: major * 1000 + minor * 100 + patch.
    out.state.version = v >= 90000 ? std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) +
                                         "." + std::to_string(v % 100)
                                   : std::to_string(v / 1000) + "." + std::to_string((v / 100) % 10) +
                                         "." + std::to_string(v % 100);
    return out;
  }();
  return l;
}

const Cudnn& dnn() { return loaded_cudnn().api; }

[[noreturn]] void throw_cudnn(cudnnStatus_t rc, const char* call, const char* file, int line) {
  // cudnnGetErrorString returns the status's name ("CUDNN_STATUS_BAD_PARAM", in
  // cuDNN 9 with a sub-code suffix): the code name the reports show.
  const char* name = dnn().cudnnGetErrorString(rc);
  throw_api_error("cudnn", rc, name ? name : "CUDNN_STATUS_UNKNOWN", "", call, file, line);
}

#define NP_CUDNN_CHECK(call)                                             \
  do {                                                                   \
    const cudnnStatus_t np_rc_ = dnn().call;                             \
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
    if (conv) dnn().cudnnDestroyConvolutionDescriptor(conv);
    if (w) dnn().cudnnDestroyFilterDescriptor(w);
    if (y) dnn().cudnnDestroyTensorDescriptor(y);
    if (x) dnn().cudnnDestroyTensorDescriptor(x);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
};

struct Buffers {
  DeviceBuffer x, w, y;  // for backward data, x holds dx and y holds dy (same shapes)
  Buffers(const Runtime& rt, const ConvShape& sh, std::size_t eb)
      : x(rt, eb * static_cast<std::size_t>(sh.n) * static_cast<std::size_t>(sh.c) *
                  static_cast<std::size_t>(sh.h) * static_cast<std::size_t>(sh.w)),
        w(rt, eb * static_cast<std::size_t>(sh.k) * static_cast<std::size_t>(sh.c) *
                  static_cast<std::size_t>(sh.r) * static_cast<std::size_t>(sh.s)),
        y(rt, eb * static_cast<std::size_t>(sh.n) * static_cast<std::size_t>(sh.k) *
                  static_cast<std::size_t>(sh.p()) * static_cast<std::size_t>(sh.q())) {}
};

// One pass with a chosen algorithm: runs it, or reports its name.
class Pass {
 public:
  Pass(const Runtime& rt, cudnnHandle_t h, const Problem& pr, Buffers& b, ConvPass pass, Precision p)
      : rt_(rt), h_(h), pr_(pr), b_(b), pass_(pass), precision_(p) {}

  // Picks the first heuristic candidate that fits the workspace and runs,
  // with the candidate's own math type set on the descriptor.
  void choose(cudaStream_t s) {
    candidates(16);
    std::vector<ConvCandidate> perf;
    for (int i = 0; i < count_; ++i)
      perf.push_back({algo_id(i), status_[i] == CUDNN_STATUS_SUCCESS, memory_[i], static_cast<int>(math_[i])});
    std::string last_error = "no algorithm";
    for (const std::size_t i : conv_candidates_to_try(perf, kMaxWorkspace, precision_ == Precision::kFp32)) {
      algo_ = static_cast<int>(i);
      ws_ = std::make_unique<DeviceBuffer>(rt_, memory_[i] > 0 ? memory_[i] : 16);
      try {
        NP_CUDNN_CHECK(cudnnSetConvolutionMathType(pr_.conv, math_[i]));
        run();
        NP_CUDA_CHECK(rt_, cudaStreamSynchronize(s));
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
  /// The math type the chosen algorithm runs with ("TENSOR_OP_MATH", ...).
  std::string math_name() const {
    switch (math_[algo_]) {
      case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
      case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
      case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
      case CUDNN_FMA_MATH: return "FMA_MATH";
    }
    return "math " + std::to_string(static_cast<int>(math_[algo_]));
  }

 private:
  int algo_id(int i) const {
    switch (pass_) {
      case ConvPass::kForward: return static_cast<int>(fwd_[i]);
      case ConvPass::kBackwardData: return static_cast<int>(bwd_data_[i]);
      case ConvPass::kBackwardFilter: return static_cast<int>(bwd_filter_[i]);
    }
    return -1;
  }
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
          math_[i] = perf[i].mathType;
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
          math_[i] = perf[i].mathType;
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
          math_[i] = perf[i].mathType;
        }
        break;
      }
    }
    return count_;
  }

  const Runtime& rt_;
  cudnnHandle_t h_;
  const Problem& pr_;
  Buffers& b_;
  ConvPass pass_;
  Precision precision_;
  bool fetched_ = false;
  int count_ = 0, algo_ = 0;
  cudnnConvolutionFwdAlgo_t fwd_[16]{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_[16]{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_[16]{};
  cudnnStatus_t status_[16]{};
  cudnnMathType_t math_[16]{};
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

std::vector<float> download_floats(const Runtime& rt, Precision p, const DeviceBuffer& d, cudaStream_t s) {
  return decode_outputs(p == Precision::kFp32 ? Precision::kFp32 : p, download(rt, d, s));
}

}  // namespace

LibraryState cudnn_state() { return loaded_cudnn().state; }

std::string CudaBackend::conv_unavailable_reason() { return loaded_cudnn().state.error; }

void* CudaBackend::cudnn_handle(int dev) {
  const cudaStream_t s = stream(dev);
  DeviceHandles& h = handles_[dev];
  if (!h.cudnn) {
    cudnnHandle_t c = nullptr;
    NP_CUDNN_CHECK(cudnnCreate(&c));
    NP_CUDNN_CHECK(cudnnSetStream(c, s));
    h.cudnn = c;
  }
  return h.cudnn;
}

void CudaBackend::destroy_cudnn(void* h) { dnn().cudnnDestroy(static_cast<cudnnHandle_t>(h)); }

Timing CudaBackend::time_conv(int dev, const ConvShape& sh, Precision p, ConvPass pass, int warmup,
                              int reps) {
  DeviceScope scope(rt_, dev);
  const auto h = static_cast<cudnnHandle_t>(cudnn_handle(dev));
  const cudaStream_t s = stream(dev);
  const Problem pr(sh, p);
  Buffers b(rt_, sh, p == Precision::kFp32 ? 4 : 2);
  // Random inputs (every buffer, since each pass reads a different pair).
  for (DeviceBuffer* d : {&b.x, &b.w, &b.y}) {
    const auto& n = noise(d->size());
    NP_CUDA_CHECK(rt_, cudaMemcpyAsync(d->get(), n.data(), d->size(), cudaMemcpyHostToDevice, s));
  }
  Pass run(rt_, h, pr, b, pass, p);
  run.choose(s);
  for (int i = 0; i < warmup; ++i) run.run();
  EventPairs ev(rt_, static_cast<std::size_t>(reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    ev.start(i, s);
    run.run();
    ev.stop(i, s);
  }
  Timing t;
  t.seconds = ev.seconds();
  t.algo = run.algo_name() + " " + run.math_name();
  t.workspace = run.workspace();
  return t;
}

ConvOutputs CudaBackend::run_conv(int dev, const ConvShape& sh, Precision p,
                                  const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& dy) {
  DeviceScope scope(rt_, dev);
  const auto h = static_cast<cudnnHandle_t>(cudnn_handle(dev));
  const cudaStream_t s = stream(dev);
  const Problem pr(sh, p);
  const std::size_t eb = p == Precision::kFp32 ? 4 : 2;
  ConvOutputs out;
  auto load = [&](Buffers& b, const std::vector<float>& xv, const std::vector<float>& wv,
                  const std::vector<float>& yv) {
    for (auto [d, v] : {std::pair<DeviceBuffer*, const std::vector<float>*>{&b.x, &xv}, {&b.w, &wv}, {&b.y, &yv}}) {
      if (v->empty()) {
        NP_CUDA_CHECK(rt_, cudaMemsetAsync(d->get(), 0xff, d->size(), s));  // poison outputs
        continue;
      }
      const auto raw = encode(p, *v);
      if (raw.size() != d->size()) throw std::invalid_argument("conv input size mismatch");
      NP_CUDA_CHECK(rt_, cudaMemcpyAsync(d->get(), raw.data(), raw.size(), cudaMemcpyHostToDevice, s));
    }
  };
  const std::vector<float> none;
  {
    Buffers b(rt_, sh, eb);
    load(b, x, w, none);
    Pass f(rt_, h, pr, b, ConvPass::kForward, p);
    f.choose(s);
    out.y = download_floats(rt_, p, b.y, s);
    out.algo_forward = f.algo_name();
  }
  {
    Buffers b(rt_, sh, eb);
    load(b, none, w, dy);
    Pass f(rt_, h, pr, b, ConvPass::kBackwardData, p);
    f.choose(s);
    out.dx = download_floats(rt_, p, b.x, s);
    out.algo_backward_data = f.algo_name();
  }
  {
    Buffers b(rt_, sh, eb);
    load(b, x, none, dy);
    Pass f(rt_, h, pr, b, ConvPass::kBackwardFilter, p);
    f.choose(s);
    out.dw = download_floats(rt_, p, b.w, s);
    out.algo_backward_filter = f.algo_name();
  }
  return out;
}

#endif  // NODEPROBE_HAVE_CUDNN

}  // namespace nodeprobe::gemm::cuda
