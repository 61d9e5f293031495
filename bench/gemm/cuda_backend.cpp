#include "cuda_backend.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef NODEPROBE_HAVE_CUDA_KERNELS
#include "kernels.h"
#endif

namespace nodeprobe::gemm {

// The host-only diagnosis names these codes without including CUDA headers.
static_assert(cudaSuccess == cuda_rc::kSuccess);
static_assert(cudaErrorInitializationError == cuda_rc::kInitializationError);
static_assert(cudaErrorStubLibrary == cuda_rc::kStubLibrary);
static_assert(cudaErrorInsufficientDriver == cuda_rc::kInsufficientDriver);
static_assert(cudaErrorNoDevice == cuda_rc::kNoDevice);
static_assert(cudaErrorSystemNotReady == cuda_rc::kSystemNotReady);
static_assert(cudaErrorSystemDriverMismatch == cuda_rc::kSystemDriverMismatch);
static_assert(cudaErrorCompatNotSupportedOnDevice == cuda_rc::kCompatNotSupportedOnDevice);

std::unique_ptr<GpuBackend> make_cuda_backend() { return std::make_unique<cuda::CudaBackend>(); }

namespace cuda {
namespace {

std::string version3(std::size_t v) {  // cuBLAS: major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

CudaBackend::~CudaBackend() {
  for (auto& [dev, h] : handles_) {
    if (cudaSetDevice(dev) != cudaSuccess) continue;
    if (h.lt) cublasLtDestroy(h.lt);
    if (h.blas) cublasDestroy(h.blas);
    if (h.cudnn) destroy_cudnn(h.cudnn);
    if (h.stream) cudaStreamDestroy(h.stream);
  }
}

DeviceHandles& CudaBackend::handles(int dev) {
  DeviceHandles& h = handles_[dev];
  if (!h.stream) NP_CUDA_CHECK(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
  if (!h.lt) NP_CUBLAS_CHECK(cublasLtCreate(&h.lt));
  if (!h.blas) {
    NP_CUBLAS_CHECK(cublasCreate(&h.blas));
    NP_CUBLAS_CHECK(cublasSetStream(h.blas, h.stream));
  }
  return h;
}

CudaEnv CudaBackend::query_env() {
  CudaEnv e;
  e.built_with_cuda = true;
  (void)cudaRuntimeGetVersion(&e.runtime_version);
  (void)cudaDriverGetVersion(&e.driver_version);
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  e.rc = static_cast<int>(rc);
  if (rc != cudaSuccess) {
    e.error_name = cudaGetErrorName(rc);
    e.error_string = cudaGetErrorString(rc);
    (void)cudaGetLastError();
  } else {
    e.device_count = n;
  }
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    e.visible_devices_set = true;
    e.visible_devices = v;
  }
  return e;
}

std::vector<std::pair<std::string, std::string>> CudaBackend::library_versions() {
  std::vector<std::pair<std::string, std::string>> v;
  v.emplace_back("cublaslt", version3(cublasLtGetVersion()));
  v.emplace_back("cuda_build", std::to_string(CUDART_VERSION / 1000) + "." +
                                   std::to_string((CUDART_VERSION % 1000) / 10));
  if (const std::string d = cudnn_version(); !d.empty()) v.emplace_back("cudnn", d);
  return v;
}

DeviceInfo CudaBackend::device_info(int dev) {
  cudaDeviceProp p{};
  NP_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  DeviceInfo d;
  d.index = dev;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.memory_bytes = p.totalGlobalMem;
  d.sm_count = p.multiProcessorCount;
  // NVML prints UUIDs as GPU-8-4-4-4-12 hex digits of the same 16 bytes.
  const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  char uuid[64];
  std::snprintf(uuid, sizeof uuid,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  d.uuid = uuid;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) d.pci_bus_id = bus;
  (void)cudaGetLastError();
  return d;
}

std::string CudaBackend::unsupported_reason(int dev, Precision p) {
  int major = 0, minor = 0;
  NP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  NP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
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
  DeviceScope scope(dev);
  const cudaStream_t s = handles(dev).stream;
  bytes = bytes / 16 * 16;
  DeviceBuffer a(bytes), b(bytes);
  DeviceBuffer cbuf(c == DeviceCopy::kTriadKernel ? bytes : 16);
  NP_CUDA_CHECK(cudaMemsetAsync(a.get(), 0, bytes, s));
  NP_CUDA_CHECK(cudaMemsetAsync(b.get(), 0x3c, bytes, s));
  NP_CUDA_CHECK(cudaMemsetAsync(cbuf.get(), 0x3c, cbuf.size(), s));
  const std::size_t n4 = bytes / 16;
  auto once = [&] {
    switch (c) {
      case DeviceCopy::kMemcpy:
        NP_CUDA_CHECK(cudaMemcpyAsync(a.get(), b.get(), bytes, cudaMemcpyDeviceToDevice, s));
        break;
#ifdef NODEPROBE_HAVE_CUDA_KERNELS
      case DeviceCopy::kCopyKernel:
        NP_CUDA_CHECK(kernels::copy(a.as<float4>(), b.as<float4>(), n4, s));
        break;
      case DeviceCopy::kTriadKernel:
        NP_CUDA_CHECK(kernels::triad(a.as<float4>(), b.as<float4>(), cbuf.as<float4>(), 3.0f, n4, s));
        break;
#endif
      default:
        throw std::logic_error(copy_unavailable_reason(c));
    }
  };
  (void)n4;
  for (int i = 0; i < warmup; ++i) once();
  EventPairs ev(static_cast<std::size_t>(reps));
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
                                     int warmup, int reps, const std::function<void()>& while_busy) {
  DeviceScope scope(dev);
  const cudaStream_t s = handles(dev).stream;
  DeviceBuffer d(bytes);
  std::unique_ptr<PinnedBuffer> pin;
  std::vector<unsigned char> pageable;
  void* host = nullptr;
  if (pinned) {
    pin = std::make_unique<PinnedBuffer>(bytes);
    host = pin->get();
  } else {
    pageable.assign(bytes, 1);  // touched: every page is resident
    host = pageable.data();
  }
  std::memset(host, 1, bytes);
  auto once = [&] {
    if (to_device)
      NP_CUDA_CHECK(cudaMemcpyAsync(d.get(), host, bytes, cudaMemcpyHostToDevice, s));
    else
      NP_CUDA_CHECK(cudaMemcpyAsync(host, d.get(), bytes, cudaMemcpyDeviceToHost, s));
  };
  for (int i = 0; i < warmup; ++i) once();
  EventPairs ev(static_cast<std::size_t>(reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i) {
    ev.start(i, s);
    once();
    ev.stop(i, s);
  }
  if (while_busy) while_busy();
  Bandwidth out;
  out.timing.seconds = ev.seconds();
  out.bytes = bytes;
  return out;
}

bool CudaBackend::peer_access(int src, int dst) {
  int can = 0;
  NP_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, src, dst));
  return can != 0;
}

Bandwidth CudaBackend::peer_copy(int src, int dst, std::size_t bytes, int warmup, int reps) {
  const bool direct = peer_access(src, dst);
  DeviceBuffer dst_buf = [&] {
    DeviceScope scope(dst);
    return DeviceBuffer(bytes);
  }();
  DeviceScope scope(src);
  if (direct) {
    const cudaError_t rc = cudaDeviceEnablePeerAccess(dst, 0);
    if (rc == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError();
    else
      NP_CUDA_CHECK(rc);
  }
  const cudaStream_t s = handles(src).stream;
  DeviceBuffer src_buf(bytes);
  NP_CUDA_CHECK(cudaMemsetAsync(src_buf.get(), 0x3c, bytes, s));
  auto once = [&] {
    NP_CUDA_CHECK(cudaMemcpyPeerAsync(dst_buf.get(), dst, src_buf.get(), src, bytes, s));
  };
  for (int i = 0; i < warmup; ++i) once();
  EventPairs ev(static_cast<std::size_t>(reps));
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
