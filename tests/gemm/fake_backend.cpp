#include "fake_backend.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "nodeprobe/error.h"

namespace nodeprobe::gemm::testing {
namespace {

std::vector<float> decode_inputs(Precision p, const std::vector<std::uint8_t>& raw, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (input_bytes(p)) {
      case 4: std::memcpy(&v[i], &raw[i * 4], 4); break;
      case 2: {
        std::uint16_t h;
        std::memcpy(&h, &raw[i * 2], 2);
        v[i] = p == Precision::kFp16 ? half_to_float(h) : bf16_to_float(h);
        break;
      }
      default: v[i] = e4m3_to_float(raw[i]);
    }
  }
  return v;
}

std::vector<float> rounded(Precision p, const RefResult& r) {
  std::vector<float> v(r.value.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = round_output(p, static_cast<float>(r.value[i]));
  return v;
}

std::vector<double> constant(std::size_t n, double seconds) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = seconds * (1 + 0.001 * static_cast<double>(i % 3));
  return v;
}

}  // namespace

std::string fake_uuid(int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-00000000-0000-0000-0000-%012d", i);
  return buf;
}

std::string fake_mig_uuid(int i, int m) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "MIG-00000000-0000-0000-%04x-%012d", m + 1, i);
  return buf;
}

namespace {
void run_window(const BusyHook& while_busy, int polls) {
  if (!while_busy) return;
  int left = polls;
  while_busy([&left] { return --left > 0; });
}
}  // namespace

FakeBackend::FakeBackend() {
  env.rc = 0;
  env.driver_version = 12040;
  env.runtime_version = 12040;
  gpus.resize(2);
}

CudaEnv FakeBackend::query_env() {
  CudaEnv e = env;
  if (e.rc == 0) e.device_count = static_cast<int>(gpus.size());
  return e;
}

std::vector<LibraryState> FakeBackend::libraries() {
  if (!blas_missing.empty()) return {{"cublaslt", "", "", blas_missing}};
  return {{"cublaslt", "12.4.5", "libcublasLt.so.12", ""}};
}

DeviceInfo FakeBackend::device_info(int dev) {
  const FakeGpu& g = gpus.at(static_cast<std::size_t>(dev));
  if (g.info_fails)
    throw_api_error("cuda", 999, "cudaErrorUnknown", "unknown error", "cudaGetDeviceProperties(&p, dev)",
                    __FILE__, __LINE__);
  DeviceInfo d;
  d.index = dev;
  d.name = g.name;
  d.uuid = g.uuid.empty() ? fake_uuid(dev) : g.uuid;
  d.pci_bus_id = "0000:1" + std::to_string(dev) + ":00.0";
  d.cc_major = g.cc_major;
  d.cc_minor = g.cc_minor;
  d.memory_bytes = 80ULL << 30;
  d.sm_count = g.sm_count;
  return d;
}

std::string FakeBackend::unsupported_reason(int dev, Precision p) {
  const FakeGpu& g = gpus.at(static_cast<std::size_t>(dev));
  const int cc = g.cc_major * 10 + g.cc_minor;
  if ((p == Precision::kBf16 || p == Precision::kTf32) && cc < 80) return "needs 8.0";
  if (p == Precision::kFp8 && cc < 89) return "FP8 needs 8.9";
  return {};
}

Timing FakeBackend::time_gemm(int dev, const GemmRequest& req, const std::vector<std::uint8_t>&,
                              const std::vector<std::uint8_t>&, const BusyHook& while_busy) {
  ++time_gemm_calls;
  if (clock) clock->advance(seconds_per_gemm);
  if (gpus.at(static_cast<std::size_t>(dev)).no_kernel.count(req.precision))
    throw_api_error("cublas", 15, "CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported",
                    "cublasLtMatmulAlgoGetHeuristic (no algorithm)", __FILE__, __LINE__);
  const double tf = gpus.at(static_cast<std::size_t>(dev)).tflops.at(req.precision);
  run_window(while_busy, busy_polls);
  Timing t;
  t.seconds = constant(static_cast<std::size_t>(req.reps), 2.0 * req.m * req.n * req.k / (tf * 1e12));
  t.algo = "fake";
  return t;
}

std::vector<std::uint8_t> FakeBackend::run_gemm(int dev, Precision p, int m, int n, int k,
                                                const std::vector<std::uint8_t>& a,
                                                const std::vector<std::uint8_t>& b) {
  const auto av = decode_inputs(p, a, static_cast<std::size_t>(k * m));
  const auto bv = decode_inputs(p, b, static_cast<std::size_t>(k * n));
  auto c = rounded(p, gemm_reference(av, bv, m, n, k, 1));
  if (gpus.at(static_cast<std::size_t>(dev)).corrupt_gemm) c[7] += 100.0f;
  std::vector<std::uint8_t> raw(c.size() * output_bytes(p));
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (output_bytes(p) == 4) {
      std::memcpy(&raw[i * 4], &c[i], 4);
    } else {
      const std::uint16_t h = p == Precision::kFp16 ? float_to_half(c[i]) : float_to_bf16(c[i]);
      std::memcpy(&raw[i * 2], &h, 2);
    }
  }
  return raw;
}

std::string FakeBackend::conv_unavailable_reason() { return cudnn ? "" : "no cuDNN in this fake"; }

Timing FakeBackend::time_conv(int dev, const ConvShape& shape, Precision, ConvPass, int, int reps) {
  const FakeGpu& g = gpus.at(static_cast<std::size_t>(dev));
  if (g.oom_conv)
    throw_api_error("cuda", 2, "cudaErrorMemoryAllocation", "out of memory", "cudaMalloc(&p, n)",
                    __FILE__, __LINE__);
  if (g.no_stem_algo && shape.c == 3)
    throw std::runtime_error("cuDNN forward: no algorithm ran: CUDNN_STATUS_NOT_SUPPORTED");
  Timing t;
  t.seconds = constant(static_cast<std::size_t>(reps), shape.flops() / (g.conv_tflops * 1e12));
  t.algo = "IMPLICIT_PRECOMP_GEMM";
  return t;
}

ConvOutputs FakeBackend::run_conv(int dev, const ConvShape& sh, Precision p, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>& dy) {
  if (gpus.at(static_cast<std::size_t>(dev)).no_stem_algo && sh.c == 3)
    throw std::runtime_error("cuDNN forward: no algorithm ran: CUDNN_STATUS_NOT_SUPPORTED");
  const Layout l = p == Precision::kFp32 ? Layout::kNchw : Layout::kNhwc;
  ConvOutputs o;
  o.y = rounded(p, conv_forward_ref(sh, l, x, w));
  o.dx = rounded(p, conv_backward_data_ref(sh, l, w, dy));
  o.dw = rounded(p, conv_backward_filter_ref(sh, l, x, dy));
  return o;
}

std::string FakeBackend::copy_unavailable_reason(DeviceCopy c) {
  return kernels || c == DeviceCopy::kMemcpy ? "" : "no kernels in this fake";
}

Bandwidth FakeBackend::device_bandwidth(int dev, DeviceCopy c, std::size_t bytes, int, int reps) {
  Bandwidth b;
  b.bytes = (c == DeviceCopy::kTriadKernel ? 3 : 2) * bytes;
  b.timing.seconds = constant(static_cast<std::size_t>(reps),
                              static_cast<double>(b.bytes) / (gpus.at(static_cast<std::size_t>(dev)).mem_gbs * 1e9));
  return b;
}

Bandwidth FakeBackend::host_transfer(int, bool, bool pinned, std::size_t bytes, int, int reps,
                                     const BusyHook& while_busy) {
  run_window(while_busy, busy_polls);
  Bandwidth b;
  b.bytes = bytes;
  b.timing.seconds = constant(static_cast<std::size_t>(reps), static_cast<double>(bytes) / ((pinned ? 24 : 8) * 1e9));
  return b;
}

TrainRun FakeBackend::train(int dev, const TrainConfig& cfg, const TrainData& data) {
  TrainRun r;
  r.losses = train_reference(cfg, data);
  if (gpus.at(static_cast<std::size_t>(dev)).flat_loss)
    for (double& l : r.losses) l = r.losses.front();
  r.seconds = 0.05;
  return r;
}

bool FakeBackend::peer_access(int, int) { return true; }

Bandwidth FakeBackend::peer_copy(int, int, std::size_t bytes, int, int reps) {
  Bandwidth b;
  b.bytes = bytes;
  b.timing.seconds = constant(static_cast<std::size_t>(reps), static_cast<double>(bytes) / 200e9);
  return b;
}

}  // namespace nodeprobe::gemm::testing
