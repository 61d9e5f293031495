#include "fake_cublas.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace nodeprobe::gemm::testing {
namespace {

using nodeprobe::testing::FakeCudaRuntime;

FakeCublas* g_blas = nullptr;

struct Desc {
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
};
struct Layout {
  cudaDataType type;
  std::uint64_t rows, cols;
  std::int64_t ld;
};
struct Handle {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

template <class T, class U>
T* as(U* p) {
  return reinterpret_cast<T*>(p);
}

FakeCudaRuntime& cuda() { return FakeCudaRuntime::current(); }

// op(X)(i, j) for a column-major X with leading dimension ld.
float at(const float* x, std::int64_t ld, bool trans, std::int64_t i, std::int64_t j) {
  return trans ? x[j + i * ld] : x[i + j * ld];
}

// D (m x n) = alpha op(A) (m x k) op(B) (k x n) + beta C, queued on `s`.
void gemm(cudaStream_t s, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, const float* c,
          std::int64_t ldc, float* d, std::int64_t ldd) {
  ++FakeCublas::current().matmuls;
  cuda().enqueue(s, [=] {
    std::vector<float> out(static_cast<std::size_t>(m * n));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        double acc = 0;
        for (std::int64_t l = 0; l < k; ++l)
          acc += static_cast<double>(at(a, lda, ta, i, l)) * static_cast<double>(at(b, ldb, tb, l, j));
        const double prev = beta != 0 ? static_cast<double>(beta) * static_cast<double>(c[i + j * ldc]) : 0;
        out[static_cast<std::size_t>(i + j * m)] = static_cast<float>(static_cast<double>(alpha) * acc + prev);
      }
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) d[i + j * ldd] = out[static_cast<std::size_t>(i + j * m)];
  });
}

// cuBLASLt.
cublasStatus_t lt_create(cublasLtHandle_t* h) {
  *h = as<cublasLtContext>(new Handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t lt_destroy(cublasLtHandle_t h) {
  delete as<Handle>(h);
  return CUBLAS_STATUS_SUCCESS;
}
size_t lt_version() { return 130100; }
cublasStatus_t desc_create(cublasLtMatmulDesc_t* d, cublasComputeType_t, cudaDataType_t) {
  *d = as<cublasLtMatmulDescOpaque_t>(new Desc);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t desc_destroy(cublasLtMatmulDesc_t d) {
  delete as<Desc>(d);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void* buf, size_t n) {
  if (n != sizeof(std::int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
  std::int32_t v = 0;
  std::memcpy(&v, buf, n);
  if (attr == CUBLASLT_MATMUL_DESC_TRANSA) as<Desc>(d)->ta = static_cast<cublasOperation_t>(v);
  if (attr == CUBLASLT_MATMUL_DESC_TRANSB) as<Desc>(d)->tb = static_cast<cublasOperation_t>(v);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_create(cublasLtMatrixLayout_t* l, cudaDataType type, std::uint64_t rows,
                             std::uint64_t cols, std::int64_t ld) {
  *l = as<cublasLtMatrixLayoutOpaque_t>(new Layout{type, rows, cols, ld});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_destroy(cublasLtMatrixLayout_t l) {
  delete as<Layout>(l);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_create(cublasLtMatmulPreference_t* p) {
  *p = as<cublasLtMatmulPreferenceOpaque_t>(new int(0));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_destroy(cublasLtMatmulPreference_t p) {
  delete as<int>(p);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_set(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t heuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t,
                         cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                         cublasLtMatmulHeuristicResult_t results[], int* returned) {
  *returned = 0;
  if (as<Layout>(a)->type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].state = CUBLAS_STATUS_SUCCESS;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t matmul(cublasLtHandle_t, cublasLtMatmulDesc_t op, const void* alpha, const void* a,
                      cublasLtMatrixLayout_t ad, const void* b, cublasLtMatrixLayout_t bd, const void* beta,
                      const void* c, cublasLtMatrixLayout_t cd, void* d, cublasLtMatrixLayout_t dd,
                      const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t s) {
  const Desc& o = *as<const Desc>(op);
  const Layout &A = *as<const Layout>(ad), &B = *as<const Layout>(bd), &C = *as<const Layout>(cd),
               &D = *as<const Layout>(dd);
  if (A.type != CUDA_R_32F || D.type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  const bool ta = o.ta == CUBLAS_OP_T, tb = o.tb == CUBLAS_OP_T;
  const auto k = static_cast<std::int64_t>(ta ? A.rows : A.cols);
  if (static_cast<std::int64_t>(tb ? B.cols : B.rows) != k) return CUBLAS_STATUS_INVALID_VALUE;
  gemm(s, ta, tb, static_cast<std::int64_t>(D.rows), static_cast<std::int64_t>(D.cols), k,
       *static_cast<const float*>(alpha), static_cast<const float*>(a), A.ld, static_cast<const float*>(b), B.ld,
       *static_cast<const float*>(beta), static_cast<const float*>(c), C.ld, static_cast<float*>(d), D.ld);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t algo_get(const cublasLtMatmulAlgo_t*, cublasLtMatmulAlgoConfigAttributes_t, void* buf, size_t n,
                        size_t* written) {
  std::memset(buf, 0, n);
  if (written) *written = n;
  return CUBLAS_STATUS_SUCCESS;
}

// cuBLAS (v2 API, host pointer mode: scalars are read when called).
Handle& handle(cublasHandle_t h) { return *as<Handle>(h); }
cublasStatus_t create(cublasHandle_t* h) {
  *h = as<cublasContext>(new Handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t destroy(cublasHandle_t h) {
  delete as<Handle>(h);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t set_stream(cublasHandle_t h, cudaStream_t s) {
  handle(h).stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t get_math(cublasHandle_t h, cublasMath_t* m) {
  *m = handle(h).math;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t set_math(cublasHandle_t h, cublasMath_t m) {
  handle(h).math = m;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t sgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                     const float* alpha, const float* a, int lda, const float* b, int ldb, const float* beta, float* c,
                     int ldc) {
  gemm(handle(h).stream, ta == CUBLAS_OP_T, tb == CUBLAS_OP_T, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc, c, ldc);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t sger(cublasHandle_t h, int m, int n, const float* alpha, const float* x, int incx, const float* y,
                    int incy, float* a, int lda) {
  const float al = *alpha;
  cuda().enqueue(handle(h).stream, [=] {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) a[i + j * lda] += al * x[i * incx] * y[j * incy];
  });
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t sgeam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, const float* alpha,
                     const float* a, int lda, const float* beta, const float* b, int ldb, float* c, int ldc) {
  const float al = *alpha, be = *beta;
  cuda().enqueue(handle(h).stream, [=] {
    std::vector<float> out(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        out[static_cast<std::size_t>(i + j * m)] =
            al * at(a, lda, ta == CUBLAS_OP_T, i, j) + be * at(b, ldb, tb == CUBLAS_OP_T, i, j);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) c[i + j * ldc] = out[static_cast<std::size_t>(i + j * m)];
  });
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t snrm2(cublasHandle_t h, int n, const float* x, int incx, float* result) {
  // Host pointer mode: the call returns the result, so it waits for its stream.
  cuda().run(handle(h).stream);
  double s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<double>(x[i * incx]) * static_cast<double>(x[i * incx]);
  *result = static_cast<float>(std::sqrt(s));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t sgemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const float* alpha, const float* a, int lda,
                     const float* x, int incx, const float* beta, float* y, int incy) {
  const float al = *alpha, be = *beta;
  const bool tr = t == CUBLAS_OP_T;
  cuda().enqueue(handle(h).stream, [=] {
    const int rows = tr ? n : m, inner = tr ? m : n;
    for (int r = 0; r < rows; ++r) {
      double acc = 0;
      for (int l = 0; l < inner; ++l)
        acc += static_cast<double>(tr ? a[l + r * lda] : a[r + l * lda]) * static_cast<double>(x[l * incx]);
      y[r * incy] = static_cast<float>(static_cast<double>(al) * acc) + (be != 0 ? be * y[r * incy] : 0.0f);
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t saxpy(cublasHandle_t h, int n, const float* alpha, const float* x, int incx, float* y, int incy) {
  const float al = *alpha;
  cuda().enqueue(handle(h).stream, [=] {
    for (int i = 0; i < n; ++i) y[i * incy] += al * x[i * incx];
  });
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

FakeCublas::FakeCublas(nodeprobe::testing::FakeCudaRuntime& cuda) {
  if (g_blas) throw std::logic_error("one FakeCublas at a time");
  g_blas = this;
  lt_.cublasLtCreate = lt_create;
  lt_.cublasLtDestroy = lt_destroy;
  lt_.cublasLtGetVersion = lt_version;
  lt_.cublasLtMatmulDescCreate = desc_create;
  lt_.cublasLtMatmulDescDestroy = desc_destroy;
  lt_.cublasLtMatmulDescSetAttribute = desc_set;
  lt_.cublasLtMatrixLayoutCreate = layout_create;
  lt_.cublasLtMatrixLayoutDestroy = layout_destroy;
  lt_.cublasLtMatmulPreferenceCreate = pref_create;
  lt_.cublasLtMatmulPreferenceDestroy = pref_destroy;
  lt_.cublasLtMatmulPreferenceSetAttribute = pref_set;
  lt_.cublasLtMatmulAlgoGetHeuristic = heuristic;
  lt_.cublasLtMatmul = matmul;
  lt_.cublasLtMatmulAlgoConfigGetAttribute = algo_get;
  blas_.cublasCreate = create;
  blas_.cublasDestroy = destroy;
  blas_.cublasSetStream = set_stream;
  blas_.cublasGetMathMode = get_math;
  blas_.cublasSetMathMode = set_math;
  blas_.cublasSgemm = sgemm;
  blas_.cublasSger = sger;
  blas_.cublasSgeam = sgeam;
  blas_.cublasSnrm2 = snrm2;
  blas_.cublasSgemv = sgemv;
  blas_.cublasSaxpy = saxpy;
  libs_.rt = &cuda.runtime();
  libs_.lt = &lt_;
  libs_.blas = &blas_;
  libs_.lt_path = libs_.blas_path = "fake";
}

FakeCublas::~FakeCublas() { g_blas = nullptr; }

FakeCublas& FakeCublas::current() {
  if (!g_blas) throw std::logic_error("no FakeCublas installed");
  return *g_blas;
}

}  // namespace nodeprobe::gemm::testing
