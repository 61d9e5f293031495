// GEMM through cuBLASLt: C (m x n) = A^T (m x k) * B (k x n), the "TN" layout
// (the only one cuBLASLt supports for FP8, and cuBLAS's fastest in general),
// FP32 accumulation, the heuristic's first algorithm with a 32 MiB workspace.
#include <cstdio>

#include "cuda_backend.h"

namespace nodeprobe::gemm::cuda {
namespace {

// NVIDIA recommends 32 MiB of cuBLASLt workspace on Hopper (less suffices before).
constexpr std::size_t kWorkspace = 32u << 20;

struct Types {
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
};

Types types_for(Precision p) {
  switch (p) {
    case Precision::kFp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Precision::kTf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Precision::kFp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case Precision::kBf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case Precision::kFp8:
#if CUDART_VERSION >= 11080
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
#else
      break;
#endif
  }
  throw std::logic_error("precision not supported by this build");
}

/// A prepared cuBLASLt matmul (descriptors, layouts, the chosen algorithm).
class LtPlan {
 public:
  LtPlan(const CublasLt& api, cublasLtHandle_t lt, Precision p, int m, int n, int k)
      : api_(api), lt_(lt) {
    // A constructor that throws runs no destructor: a precision without a
    // kernel (NOT_SUPPORTED, a skip) must not leak what was created so far.
    try {
      create(p, m, n, k);
    } catch (...) {
      release();
      throw;
    }
  }
  ~LtPlan() { release(); }
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

 private:
  void create(Precision p, int m, int n, int k) {
    const Types t = types_for(p);
    NP_CUBLAS_CHECK(api_, cublasLtMatmulDescCreate(&op_, t.compute, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    NP_CUBLAS_CHECK(api_, cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    NP_CUBLAS_CHECK(api_, cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const auto M = static_cast<std::uint64_t>(m), N = static_cast<std::uint64_t>(n),
               K = static_cast<std::uint64_t>(k);
    NP_CUBLAS_CHECK(api_, cublasLtMatrixLayoutCreate(&a_, t.ab, K, M, static_cast<std::int64_t>(K)));
    NP_CUBLAS_CHECK(api_, cublasLtMatrixLayoutCreate(&b_, t.ab, K, N, static_cast<std::int64_t>(K)));
    NP_CUBLAS_CHECK(api_, cublasLtMatrixLayoutCreate(&c_, t.c, M, N, static_cast<std::int64_t>(M)));
    cublasLtMatmulPreference_t pref = nullptr;
    NP_CUBLAS_CHECK(api_, cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = kWorkspace;
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    cublasStatus_t rc = api_.cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (rc == CUBLAS_STATUS_SUCCESS)
      rc = api_.cublasLtMatmulAlgoGetHeuristic(lt_, op_, a_, b_, c_, c_, pref, 1, &result, &returned);
    api_.cublasLtMatmulPreferenceDestroy(pref);
    if (rc != CUBLAS_STATUS_SUCCESS)
      throw_cublas(rc, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
    if (returned == 0)
      throw_cublas(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmulAlgoGetHeuristic (no algorithm)",
                   __FILE__, __LINE__);
    algo_ = result.algo;
    workspace_ = result.workspaceSize;
  }
  void release() noexcept {
    if (c_) api_.cublasLtMatrixLayoutDestroy(c_);
    if (b_) api_.cublasLtMatrixLayoutDestroy(b_);
    if (a_) api_.cublasLtMatrixLayoutDestroy(a_);
    if (op_) api_.cublasLtMatmulDescDestroy(op_);
    c_ = b_ = a_ = nullptr;
    op_ = nullptr;
  }

 public:
  void run(const void* a, const void* b, void* c, void* ws, cudaStream_t s) const {
    const float alpha = 1.0f, beta = 0.0f;
    NP_CUBLAS_CHECK(api_, cublasLtMatmul(lt_, op_, &alpha, a, a_, b, b_, &beta, c, c_, c, c_,
                                         &algo_, ws, workspace_, s));
  }
  std::size_t workspace() const { return workspace_; }
  std::string describe() const {
    int id = -1, tile = -1, splitk = -1, stages = -1;
    api_.cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, nullptr);
    api_.cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, nullptr);
    api_.cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, nullptr);
    api_.cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, nullptr);
    char buf[128];
    std::snprintf(buf, sizeof buf, "cublasLt algo %d tile %d splitK %d stages %d", id, tile,
                  splitk, stages);
    return buf;
  }

 private:
  const CublasLt& api_;
  cublasLtHandle_t lt_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  std::size_t workspace_ = 0;
};

std::size_t elems(int x, int y) { return static_cast<std::size_t>(x) * static_cast<std::size_t>(y); }

void check_inputs(Precision p, int m, int n, int k, const std::vector<std::uint8_t>& a,
                  const std::vector<std::uint8_t>& b) {
  if (a.size() < elems(k, m) * input_bytes(p) || b.size() < elems(k, n) * input_bytes(p))
    throw std::invalid_argument("GEMM inputs smaller than the problem");
}

}  // namespace

Timing CudaBackend::time_gemm(int dev, const GemmRequest& req, const std::vector<std::uint8_t>& a,
                              const std::vector<std::uint8_t>& b,
                              const BusyHook& while_busy) {
  check_inputs(req.precision, req.m, req.n, req.k, a, b);
  DeviceScope scope(rt_, dev);
  const cublasLtHandle_t lt = lt_handle(dev);
  const cudaStream_t s = stream(dev);
  const std::size_t ib = input_bytes(req.precision);
  DeviceBuffer da = upload(rt_, a.data(), elems(req.k, req.m) * ib, s);
  DeviceBuffer db = upload(rt_, b.data(), elems(req.k, req.n) * ib, s);
  DeviceBuffer dc(rt_, elems(req.m, req.n) * output_bytes(req.precision));
  DeviceBuffer ws(rt_, kWorkspace);
  const LtPlan plan(this->lt(), lt, req.precision, req.m, req.n, req.k);
  for (int i = 0; i < req.warmup; ++i) plan.run(da.get(), db.get(), dc.get(), ws.get(), s);
  EventPairs ev(rt_, static_cast<std::size_t>(req.reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(req.reps); ++i) {
    ev.start(i, s);
    plan.run(da.get(), db.get(), dc.get(), ws.get(), s);
    ev.stop(i, s);
  }
  sample_while_busy(while_busy, ev);
  Timing t;
  t.seconds = ev.seconds();
  t.algo = plan.describe();
  t.workspace = plan.workspace();
  return t;
}

std::vector<std::uint8_t> CudaBackend::run_gemm(int dev, Precision p, int m, int n, int k,
                                                const std::vector<std::uint8_t>& a,
                                                const std::vector<std::uint8_t>& b) {
  check_inputs(p, m, n, k, a, b);
  DeviceScope scope(rt_, dev);
  const cublasLtHandle_t lt = lt_handle(dev);
  const cudaStream_t s = stream(dev);
  DeviceBuffer da = upload(rt_, a.data(), elems(k, m) * input_bytes(p), s);
  DeviceBuffer db = upload(rt_, b.data(), elems(k, n) * input_bytes(p), s);
  DeviceBuffer dc(rt_, elems(m, n) * output_bytes(p));
  DeviceBuffer ws(rt_, kWorkspace);
  // Poison the output so a GEMM that silently writes nothing cannot pass.
  NP_CUDA_CHECK(rt_, cudaMemsetAsync(dc.get(), 0xff, dc.size(), s));
  const LtPlan plan(this->lt(), lt, p, m, n, k);
  plan.run(da.get(), db.get(), dc.get(), ws.get(), s);
  return download(rt_, dc, s);
}

}  // namespace nodeprobe::gemm::cuda
