// nodeprobe's GEMM timing against a plain cuBLAS loop timed the same way.
//
// In ONE run and on the same buffers' sizes, for each precision: nodeprobe's
// path (cuBLASLt heuristic plan, per-repetition CUDA events, median) and a
// plain cublasGemmEx loop (default algorithm) timed twice: per-repetition
// events (median, "the same way") and one event pair around the whole loop
// (mean, the nccl-tests/MAMF style). Rounds alternate to spread clock drift.
// Prints TFLOP/s and the ratio nodeprobe / plain; needs a GPU.
//
//   nodeprobe-bench-gemm [--device D] [--size N] [--reps R] [--warmup W] [--rounds K]
//                        [--precisions bf16,fp16,tf32,fp32]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_backend.h"
#include "nodeprobe/stats.h"

namespace {

using nodeprobe::gemm::Precision;

#define CHECK_CUDA(x)                                                               \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "nodeprobe-bench-gemm: %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                 \
    }                                                                               \
  } while (0)
#define CHECK_CUBLAS(x)                                                             \
  do {                                                                              \
    cublasStatus_t s_ = (x);                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
      std::fprintf(stderr, "nodeprobe-bench-gemm: %s: status %d\n", #x, static_cast<int>(s_)); \
      std::exit(2);                                                                 \
    }                                                                               \
  } while (0)

struct Plain {
  double per_rep_median_s = 0;
  double loop_mean_s = 0;
};

// The plain loop: cublasGemmEx, TN layout, FP32 accumulation, same shapes.
Plain plain_cublas(Precision p, int n, int reps, int warmup, const std::vector<std::uint8_t>& a,
                   const std::vector<std::uint8_t>& b) {
  cudaDataType_t ab = CUDA_R_32F, c = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (p == Precision::kTf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  if (p == Precision::kFp16) ab = c = CUDA_R_16F;
  if (p == Precision::kBf16) ab = c = CUDA_R_16BF;
  const std::size_t elems = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t ib = nodeprobe::gemm::input_bytes(p), ob = nodeprobe::gemm::output_bytes(p);
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  CHECK_CUDA(cudaMalloc(&da, elems * ib));
  CHECK_CUDA(cudaMalloc(&db, elems * ib));
  CHECK_CUDA(cudaMalloc(&dc, elems * ob));
  CHECK_CUDA(cudaMemcpy(da, a.data(), elems * ib, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), elems * ib, cudaMemcpyHostToDevice));
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  const float alpha = 1, beta = 0;
  auto once = [&] {
    CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, da, ab, n, db, ab, n,
                              &beta, dc, c, n, compute, CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < warmup; ++i) once();
  std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(reps) + 2);
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    CHECK_CUDA(cudaEventRecord(ev[2 * i], nullptr));
    once();
    CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], nullptr));
  }
  CHECK_CUDA(cudaEventSynchronize(ev[2 * static_cast<std::size_t>(reps) - 1]));
  std::vector<double> s;
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    s.push_back(static_cast<double>(ms) / 1e3);
  }
  Plain out;
  out.per_rep_median_s = nodeprobe::compute_stats(s).median;
  cudaEvent_t t0 = ev[ev.size() - 2], t1 = ev.back();
  CHECK_CUDA(cudaEventRecord(t0, nullptr));
  for (int i = 0; i < reps; ++i) once();
  CHECK_CUDA(cudaEventRecord(t1, nullptr));
  CHECK_CUDA(cudaEventSynchronize(t1));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
  out.loop_mean_s = static_cast<double>(ms) / 1e3 / reps;
  for (auto& e : ev) cudaEventDestroy(e);
  cublasDestroy(h);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return out;
}

double median(std::vector<double> v) { return nodeprobe::compute_stats(std::move(v)).median; }

}  // namespace

int main(int argc, char** argv) {
  int dev = 0, n = 8192, reps = 50, warmup = 10, rounds = 3;
  std::vector<Precision> precisions = {Precision::kBf16, Precision::kFp16, Precision::kTf32,
                                       Precision::kFp32};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--device") dev = std::atoi(v.c_str());
    else if (k == "--size") n = std::atoi(v.c_str());
    else if (k == "--reps") reps = std::atoi(v.c_str());
    else if (k == "--warmup") warmup = std::atoi(v.c_str());
    else if (k == "--rounds") rounds = std::atoi(v.c_str());
    else if (k == "--precisions") {
      precisions.clear();
      std::size_t pos = 0;
      while (pos <= v.size()) {
        const std::size_t comma = std::min(v.find(',', pos), v.size());
        const auto p = nodeprobe::gemm::precision_from_string(v.substr(pos, comma - pos));
        if (!p || *p == Precision::kFp8) {
          std::fprintf(stderr, "nodeprobe-bench-gemm: unknown or unsupported precision in '%s'\n", v.c_str());
          return 64;
        }
        precisions.push_back(*p);
        pos = comma + 1;
      }
    } else {
      std::fprintf(stderr, "nodeprobe-bench-gemm: unknown option %s\n", k.c_str());
      return 64;
    }
  }
  if (n < 16 || n % 16 || reps < 1 || rounds < 1) {
    std::fprintf(stderr, "nodeprobe-bench-gemm: bad --size/--reps/--rounds\n");
    return 64;
  }
  auto backend = nodeprobe::gemm::make_cuda_backend();
  const auto env = backend->query_env();
  if (env.rc != 0 || env.device_count <= dev) {
    std::fprintf(stderr, "nodeprobe-bench-gemm: no usable GPU %d: %s %s\n", dev,
                 env.error_name.c_str(), env.error_string.c_str());
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(dev));
  const auto info = backend->device_info(dev);
  std::printf("# %s, %dx%dx%d, %d reps after %d warm-up, %d alternating rounds\n", info.name.c_str(),
              n, n, n, reps, warmup, rounds);
  std::printf("%-6s %16s %20s %20s %8s %8s\n", "prec", "nodeprobe TF/s", "cublas per-rep TF/s",
              "cublas loop TF/s", "ratio", "ratio2");
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  const std::size_t elems = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  for (Precision p : precisions) {
    if (!backend->unsupported_reason(dev, p).empty()) continue;
    const auto a = nodeprobe::gemm::random_inputs(p, elems, 1), b = nodeprobe::gemm::random_inputs(p, elems, 2);
    std::vector<double> ours, plain_rep, plain_loop;
    for (int r = 0; r < rounds; ++r) {
      const auto t = backend->time_gemm(dev, {p, n, n, n, warmup, reps}, a, b, {});
      ours.push_back(flops / median(t.seconds) / 1e12);
      const Plain pl = plain_cublas(p, n, reps, warmup, a, b);
      plain_rep.push_back(flops / pl.per_rep_median_s / 1e12);
      plain_loop.push_back(flops / pl.loop_mean_s / 1e12);
    }
    const double o = median(ours), pr = median(plain_rep), pl = median(plain_loop);
    std::printf("%-6s %16.1f %20.1f %20.1f %8.3f %8.3f\n",
                std::string(nodeprobe::gemm::to_string(p)).c_str(), o, pr, pl, o / pr, o / pl);
  }
  std::printf("# ratio = nodeprobe / cuBLAS per-rep events; ratio2 = nodeprobe / cuBLAS whole-loop mean\n");
  return 0;
}
