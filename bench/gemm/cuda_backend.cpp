#include "cuda_backend.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu_specs.h"

#ifdef NODEPROBE_HAVE_CUDA_KERNELS
#include "kernels.h"
#endif

namespace nodeprobe::gemm {

std::unique_ptr<GpuBackend> make_cuda_backend() {
  return std::make_unique<cuda::CudaBackend>(cuda::system_libraries());
}

namespace cuda {
namespace {

std::string version3(std::size_t v) {  // cuBLAS: major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

CudaBackend::~CudaBackend() {
  for (auto& [dev, h] : handles_) {
    if (rt_.cudaSetDevice(dev) != cudaSuccess) continue;
    if (h.lt) lt().cublasLtDestroy(h.lt);
    if (h.blas) blas().cublasDestroy(h.blas);
    if (h.cudnn) destroy_cudnn(h.cudnn);
    if (h.stream) rt_.cudaStreamDestroy(h.stream);
  }
}

const CublasLt& CudaBackend::lt() const {
  if (!libs_.lt) throw std::runtime_error(libs_.blas_unavailable);
  return *libs_.lt;
}

const Cublas& CudaBackend::blas() const {
  if (!libs_.blas) throw std::runtime_error(libs_.blas_unavailable);
  return *libs_.blas;
}

cudaStream_t CudaBackend::stream(int dev) {
  DeviceHandles& h = handles_[dev];
  if (!h.stream) NP_CUDA_CHECK(rt_, cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
  return h.stream;
}

cublasLtHandle_t CudaBackend::lt_handle(int dev) {
  DeviceHandles& h = handles_[dev];
  if (!h.lt) NP_CUBLAS_CHECK(lt(), cublasLtCreate(&h.lt));
  return h.lt;
}

cublasHandle_t CudaBackend::blas_handle(int dev) {
  const cudaStream_t s = stream(dev);
  DeviceHandles& h = handles_[dev];
  if (!h.blas) {
    NP_CUBLAS_CHECK(blas(), cublasCreate(&h.blas));
    NP_CUBLAS_CHECK(blas(), cublasSetStream(h.blas, s));
  }
  return h.blas;
}

void sample_while_busy(const BusyHook& while_busy, const EventPairs& events) {
  if (while_busy) while_busy([&events] { return events.busy(); });
}

CudaEnv CudaBackend::query_env() {
  CudaEnv e;
  e.built_with_cuda = true;
  (void)rt_.cudaRuntimeGetVersion(&e.runtime_version);
  (void)rt_.cudaDriverGetVersion(&e.driver_version);
  int n = 0;
  const cudaError_t rc = rt_.cudaGetDeviceCount(&n);
  e.rc = static_cast<int>(rc);
  if (rc != cudaSuccess) {
    e.error_name = rt_.cudaGetErrorName(rc);
    e.error_string = rt_.cudaGetErrorString(rc);
    (void)rt_.cudaGetLastError();
  } else {
    e.device_count = n;
  }
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    e.visible_devices_set = true;
    e.visible_devices = v;
  }
  return e;
}

std::vector<LibraryState> CudaBackend::libraries() {
  std::vector<LibraryState> v;
  v.push_back({"cuda_build", std::to_string(CUDART_VERSION / 1000) + "." +
                                 std::to_string((CUDART_VERSION % 1000) / 10), "static", ""});
  if (libs_.lt) {
    v.push_back({"cublaslt", version3(libs_.lt->cublasLtGetVersion()), libs_.lt_path, ""});
    v.push_back({"cublas", "", libs_.blas_path, ""});
  } else {
    v.push_back({"cublaslt", "", "", libs_.blas_unavailable});
  }
  v.push_back(cudnn_state());
  return v;
}

DeviceInfo CudaBackend::device_info(int dev) {
  cudaDeviceProp p{};
  NP_CUDA_CHECK(rt_, cudaGetDeviceProperties(&p, dev));
  DeviceInfo d;
  d.index = dev;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.memory_bytes = p.totalGlobalMem;
  d.sm_count = p.multiProcessorCount;
  // NVML prints the same 16 bytes as 8-4-4-4-12 hex digits, "MIG-" for a MIG
  // slice (R470 and newer drivers), else "GPU-".
  const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  char uuid[64];
  std::snprintf(uuid, sizeof uuid,
                "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                parse_mig_name(d.name) ? "MIG" : "GPU", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
                u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  d.uuid = uuid;
  char bus[32] = {};
  if (rt_.cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) d.pci_bus_id = bus;
  (void)rt_.cudaGetLastError();
  return d;
}

std::string CudaBackend::unsupported_reason(int dev, Precision p) {
  int major = 0, minor = 0;
  NP_CUDA_CHECK(rt_, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  NP_CUDA_CHECK(rt_, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  const int cc = major * 10 + minor;
  const std::string this_gpu = " (this GPU: " + std::to_string(major) + "." + std::to_string(minor) + ")";
  switch (p) {
    case Precision::kTf32:
      if (cc < 80) return "no TF32 tensor cores before compute capability 8.0" + this_gpu;
      return {};
    case Precision::kBf16:
      if (cc < 80) return "no BF16 tensor cores before compute capability 8.0" + this_gpu;
      return {};
    case Precision::kFp8:
#if CUDART_VERSION >= 11080
      if (cc < 89) return "FP8 tensor cores need compute capability 8.9 or newer" + this_gpu;
      return {};
#else
      return "this build's CUDA " + std::to_string(CUDART_VERSION) + " predates FP8 (needs 11.8)";
#endif
    case Precision::kFp32:
    case Precision::kFp16: return {};
  }
  return {};
}

const std::vector<std::uint8_t>& CudaBackend::noise(std::size_t bytes) {
  if (noise_.size() < bytes) {
    // Small uniform values in every element format: FP32 words and FP16/BF16
    // halves both decode to moderate finite numbers.
    noise_ = random_inputs(Precision::kFp16, (bytes + 1) / 2, 0x6e6f697365ULL);
  }
  return noise_;
}

std::string CudaBackend::copy_unavailable_reason(DeviceCopy c) {
  if (c == DeviceCopy::kMemcpy) return {};
#ifdef NODEPROBE_HAVE_CUDA_KERNELS
  return {};
#else
  return "this build has no CUDA kernels (nvcc was not found at build time): only "
         "cudaMemcpy device bandwidth is measured";
#endif
}

Bandwidth CudaBackend::device_bandwidth(int dev, DeviceCopy c, std::size_t bytes, int warmup,
                                        int reps) {
  DeviceScope scope(rt_, dev);
  const cudaStream_t s = stream(dev);
  bytes = bytes / 16 * 16;
  DeviceBuffer a(rt_, bytes), b(rt_, bytes);
  DeviceBuffer cbuf(rt_, c == DeviceCopy::kTriadKernel ? bytes : 16);
  NP_CUDA_CHECK(rt_, cudaMemsetAsync(a.get(), 0, bytes, s));
  NP_CUDA_CHECK(rt_, cudaMemsetAsync(b.get(), 0x3c, bytes, s));
  NP_CUDA_CHECK(rt_, cudaMemsetAsync(cbuf.get(), 0x3c, cbuf.size(), s));
  const std::size_t n4 = bytes / 16;
  auto once = [&] {
    switch (c) {
      case DeviceCopy::kMemcpy:
        NP_CUDA_CHECK(rt_, cudaMemcpyAsync(a.get(), b.get(), bytes, cudaMemcpyDeviceToDevice, s));
        break;
#ifdef NODEPROBE_HAVE_CUDA_KERNELS
      // The kernels launch through the linked runtime, not the table.
      case DeviceCopy::kCopyKernel:
        if (const cudaError_t rc = kernels::copy(a.as<float4>(), b.as<float4>(), n4, s); rc != cudaSuccess)
          nodeprobe::cuda::throw_cuda(rt_, rc, "kernels::copy", __FILE__, __LINE__);
        break;
      case DeviceCopy::kTriadKernel:
        if (const cudaError_t rc = kernels::triad(a.as<float4>(), b.as<float4>(), cbuf.as<float4>(), 3.0f, n4, s);
            rc != cudaSuccess)
          nodeprobe::cuda::throw_cuda(rt_, rc, "kernels::triad", __FILE__, __LINE__);
        break;
#endif
      default:
        throw std::logic_error(copy_unavailable_reason(c));
    }
  };
  (void)n4;
  for (int i = 0; i < warmup; ++i) once();
  EventPairs ev(rt_, static_cast<std::size_t>(reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    ev.start(i, s);
    once();
    ev.stop(i, s);
  }
  Bandwidth out;
  out.timing.seconds = ev.seconds();
  out.bytes = (c == DeviceCopy::kTriadKernel ? 3 : 2) * bytes;
  return out;
}

Bandwidth CudaBackend::host_transfer(int dev, bool to_device, bool pinned, std::size_t bytes,
                                     int warmup, int reps, const BusyHook& while_busy) {
  DeviceScope scope(rt_, dev);
  const cudaStream_t s = stream(dev);
  DeviceBuffer d(rt_, bytes);
  std::unique_ptr<PinnedBuffer> pin;
  std::vector<unsigned char> pageable;
  void* host = nullptr;
  if (pinned) {
    pin = std::make_unique<PinnedBuffer>(rt_, bytes);
    host = pin->get();
  } else {
    pageable.assign(bytes, 1);  // touched: every page is resident
    host = pageable.data();
  }
  std::memset(host, 1, bytes);
  auto once = [&] {
    if (to_device)
      NP_CUDA_CHECK(rt_, cudaMemcpyAsync(d.get(), host, bytes, cudaMemcpyHostToDevice, s));
    else
      NP_CUDA_CHECK(rt_, cudaMemcpyAsync(host, d.get(), bytes, cudaMemcpyDeviceToHost, s));
  };
  for (int i = 0; i < warmup; ++i) once();
  EventPairs ev(rt_, static_cast<std::size_t>(reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    ev.start(i, s);
    once();
    ev.stop(i, s);
  }
  sample_while_busy(while_busy, ev);
  Bandwidth out;
  out.timing.seconds = ev.seconds();
  out.bytes = bytes;
  return out;
}

bool CudaBackend::peer_access(int src, int dst) {
  int can = 0;
  NP_CUDA_CHECK(rt_, cudaDeviceCanAccessPeer(&can, src, dst));
  return can != 0;
}

Bandwidth CudaBackend::peer_copy(int src, int dst, std::size_t bytes, int warmup, int reps) {
  const bool direct = peer_access(src, dst);
  DeviceBuffer dst_buf = [&] {
    DeviceScope scope(rt_, dst);
    return DeviceBuffer(rt_, bytes);
  }();
  DeviceScope scope(rt_, src);
  if (direct) {
    const cudaError_t rc = rt_.cudaDeviceEnablePeerAccess(dst, 0);
    if (rc == cudaErrorPeerAccessAlreadyEnabled)
      (void)rt_.cudaGetLastError();
    else if (rc != cudaSuccess)
      nodeprobe::cuda::throw_cuda(rt_, rc, "cudaDeviceEnablePeerAccess(dst, 0)", __FILE__, __LINE__);
  }
  const cudaStream_t s = stream(src);
  DeviceBuffer src_buf(rt_, bytes);
  NP_CUDA_CHECK(rt_, cudaMemsetAsync(src_buf.get(), 0x3c, bytes, s));
  auto once = [&] {
    NP_CUDA_CHECK(rt_, cudaMemcpyPeerAsync(dst_buf.get(), dst, src_buf.get(), src, bytes, s));
  };
  for (int i = 0; i < warmup; ++i) once();
  EventPairs ev(rt_, static_cast<std::size_t>(reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    ev.start(i, s);
    once();
    ev.stop(i, s);
  }
  Bandwidth out;
  out.timing.seconds = ev.seconds();
  out.bytes = bytes;
  // dst_buf is freed after the scope's device switch: cudaFree works from any device.
  return out;
}

}  // namespace cuda
}  // namespace nodeprobe::gemm
