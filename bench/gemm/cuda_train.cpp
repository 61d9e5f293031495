// The training smoke loop on the GPU with cuBLAS only (no custom kernels, so
// it runs in builds without nvcc): Linear(in -> out) with bias, MSE loss
// (mean over all elements), plain SGD. Pedantic FP32 math: the losses are
// compared step by step with the CPU reference.
#include "cuda_backend.h"

namespace nodeprobe::gemm::cuda {

TrainRun CudaBackend::train(int dev, const TrainConfig& cfg, const TrainData& data) {
  DeviceScope scope(rt_, dev);
  const cublasHandle_t h = blas_handle(dev);
  const Cublas& api = blas();
  const cudaStream_t s = stream(dev);
  const int B = cfg.batch, I = cfg.in, O = cfg.out;
  const auto fb = [](std::size_t n) { return n * sizeof(float); };
  const std::size_t nb = static_cast<std::size_t>(B), ni = static_cast<std::size_t>(I),
                    no = static_cast<std::size_t>(O);
  // Uploads on the work stream: cuBLAS runs there, after them.
  DeviceBuffer x = upload(rt_, data.x.data(), fb(nb * ni), s);
  DeviceBuffer t = upload(rt_, data.t.data(), fb(nb * no), s);
  DeviceBuffer w = upload(rt_, data.w.data(), fb(no * ni), s);
  DeviceBuffer b = upload(rt_, data.b.data(), fb(no), s);
  const std::vector<float> ones_host(nb, 1.0f);
  DeviceBuffer ones = upload(rt_, ones_host.data(), fb(nb), s);
  DeviceBuffer y(rt_, fb(nb * no)), gw(rt_, fb(no * ni)), gb(rt_, fb(no));

  cublasMath_t old_mode{};
  NP_CUBLAS_CHECK(api, cublasGetMathMode(h, &old_mode));
  NP_CUBLAS_CHECK(api, cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
  const float one = 1.0f, zero = 0.0f, minus_one = -1.0f;
  const float scale = 2.0f / static_cast<float>(B * O);  // d(mean squared error)/dy
  const float neg_lr = -static_cast<float>(cfg.lr);
  TrainRun run;
  cudaEvent_t start = nullptr, stop = nullptr;
  NP_CUDA_CHECK(rt_, cudaEventCreate(&start));
  NP_CUDA_CHECK(rt_, cudaEventCreate(&stop));
  try {
    NP_CUDA_CHECK(rt_, cudaEventRecord(start, s));
    for (int step = 0; step <= cfg.steps; ++step) {
      // y = x w^T  (B x O), then y += 1 b^T, then r = y - t (in place).
      NP_CUBLAS_CHECK(api, cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, B, O, I, &one, x.as<float>(), B,
                                       w.as<float>(), O, &zero, y.as<float>(), B));
      NP_CUBLAS_CHECK(api, cublasSger(h, B, O, &one, ones.as<float>(), 1, b.as<float>(), 1,
                                      y.as<float>(), B));
      NP_CUBLAS_CHECK(api, cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, B, O, &one, y.as<float>(), B,
                                       &minus_one, t.as<float>(), B, y.as<float>(), B));
      float norm = 0;  // host pointer mode: reading the loss syncs, as loss.item() does
      NP_CUBLAS_CHECK(api, cublasSnrm2(h, B * O, y.as<float>(), 1, &norm));
      const double nd = static_cast<double>(norm);
      run.losses.push_back(nd * nd / (static_cast<double>(B) * O));
      if (step == cfg.steps) break;
      // gw = scale r^T x (O x I), gb = scale r^T 1; w -= lr gw; b -= lr gb.
      NP_CUBLAS_CHECK(api, cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, O, I, B, &scale, y.as<float>(), B,
                                       x.as<float>(), B, &zero, gw.as<float>(), O));
      NP_CUBLAS_CHECK(api, cublasSgemv(h, CUBLAS_OP_T, B, O, &scale, y.as<float>(), B,
                                       ones.as<float>(), 1, &zero, gb.as<float>(), 1));
      NP_CUBLAS_CHECK(api, cublasSaxpy(h, O * I, &neg_lr, gw.as<float>(), 1, w.as<float>(), 1));
      NP_CUBLAS_CHECK(api, cublasSaxpy(h, O, &neg_lr, gb.as<float>(), 1, b.as<float>(), 1));
    }
    NP_CUDA_CHECK(rt_, cudaEventRecord(stop, s));
    NP_CUDA_CHECK(rt_, cudaEventSynchronize(stop));
    float ms = 0;
    NP_CUDA_CHECK(rt_, cudaEventElapsedTime(&ms, start, stop));
    run.seconds = static_cast<double>(ms) / 1e3;
  } catch (...) {
    rt_.cudaEventDestroy(start);
    rt_.cudaEventDestroy(stop);
    api.cublasSetMathMode(h, old_mode);
    throw;
  }
  rt_.cudaEventDestroy(start);
  rt_.cudaEventDestroy(stop);
  NP_CUBLAS_CHECK(api, cublasSetMathMode(h, old_mode));
  return run;
}

}  // namespace nodeprobe::gemm::cuda
