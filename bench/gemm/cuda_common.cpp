#include "cuda_common.h"

#include "nodeprobe/shared_library.h"

namespace nodeprobe::gemm::cuda {

const Libraries& system_libraries() {
  static const Libraries libs = [] {
    static CublasLt lt;
    static Cublas blas;
    Libraries l;
    l.rt = &nodeprobe::cuda::linked_runtime();
    const std::string major = std::to_string(CUBLAS_VER_MAJOR);
    // libcublas needs libcublasLt: load the latter first so a missing one is named.
    const SharedLibrary lt_lib = SharedLibrary::open_cuda("libcublasLt.so." + major);
    const SharedLibrary blas_lib =
        lt_lib.ok() ? SharedLibrary::open_cuda("libcublas.so." + major) : SharedLibrary();
    std::string missing;
    if (!lt_lib.ok()) {
      l.blas_unavailable = lt_lib.error();
    } else if (!blas_lib.ok()) {
      l.blas_unavailable = blas_lib.error();
    } else {
#define NP_BIND_LT(fn) NP_BIND_SYMBOL(lt, lt_lib, missing, fn);
#define NP_BIND_BLAS(fn) NP_BIND_SYMBOL(blas, blas_lib, missing, fn);
      NP_CUBLASLT_FUNCS(NP_BIND_LT)
      NP_CUBLAS_FUNCS(NP_BIND_BLAS)
#undef NP_BIND_LT
#undef NP_BIND_BLAS
      if (!missing.empty())
        l.blas_unavailable = lt_lib.path() + " / " + blas_lib.path() + " lack " + missing +
                             ": not a usable cuBLAS " + major;
    }
    if (l.blas_unavailable.empty()) {
      l.lt = &lt;
      l.blas = &blas;
      l.lt_path = lt_lib.path();
      l.blas_path = blas_lib.path();
    } else {
      l.blas_unavailable += " (install cuBLAS " + major + ": the CUDA toolkit or the CUDA "
                            "repository's libcublas-" + major + "-<minor> package; or point "
                            "NODEPROBE_CUDA_LIBRARY_PATH at a directory holding it, e.g. pip's "
                            "nvidia/cublas/lib)";
    }
    return l;
  }();
  return libs;
}

std::string cublas_status_name(cublasStatus_t rc) {
  switch (rc) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_" + std::to_string(static_cast<int>(rc));
}

void throw_cublas(cublasStatus_t rc, const char* call, const char* file, int line) {
  throw_api_error("cublas", rc, cublas_status_name(rc), "", call, file, line);
}

DeviceScope::DeviceScope(const Runtime& rt, int dev) : rt_(rt) {
  NP_CUDA_CHECK(rt_, cudaGetDevice(&prev_));
  NP_CUDA_CHECK(rt_, cudaSetDevice(dev));
}

DeviceScope::~DeviceScope() { NP_CUDA_CHECK_NOTHROW(rt_, cudaSetDevice(prev_)); }

DeviceBuffer::DeviceBuffer(const Runtime& rt, std::size_t bytes) : rt_(&rt), n_(bytes) {
  NP_CUDA_CHECK(rt, cudaMalloc(&p_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) NP_CUDA_CHECK_NOTHROW(*rt_, cudaFree(p_));
}

PinnedBuffer::PinnedBuffer(const Runtime& rt, std::size_t bytes) : rt_(rt) {
  NP_CUDA_CHECK(rt_, cudaMallocHost(&p_, bytes));
}

PinnedBuffer::~PinnedBuffer() {
  if (p_) NP_CUDA_CHECK_NOTHROW(rt_, cudaFreeHost(p_));
}

EventPairs::EventPairs(const Runtime& rt, std::size_t n) : rt_(rt) {
  start_.reserve(n);
  stop_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    cudaEvent_t a = nullptr, b = nullptr;
    NP_CUDA_CHECK(rt_, cudaEventCreate(&a));
    start_.push_back(a);
    NP_CUDA_CHECK(rt_, cudaEventCreate(&b));
    stop_.push_back(b);
  }
}

EventPairs::~EventPairs() {
  for (auto e : start_) NP_CUDA_CHECK_NOTHROW(rt_, cudaEventDestroy(e));
  for (auto e : stop_) NP_CUDA_CHECK_NOTHROW(rt_, cudaEventDestroy(e));
}

void EventPairs::start(std::size_t i, cudaStream_t s) { NP_CUDA_CHECK(rt_, cudaEventRecord(start_[i], s)); }
void EventPairs::stop(std::size_t i, cudaStream_t s) { NP_CUDA_CHECK(rt_, cudaEventRecord(stop_[i], s)); }

bool EventPairs::busy() const {
  if (stop_.empty()) return false;
  const cudaError_t rc = rt_.cudaEventQuery(stop_.back());
  if (rc == cudaErrorNotReady) return true;
  if (rc != cudaSuccess) (void)rt_.cudaGetLastError();  // seconds() reports it
  return false;
}

std::vector<double> EventPairs::seconds() {
  std::vector<double> out;
  if (stop_.empty()) return out;
  NP_CUDA_CHECK(rt_, cudaEventSynchronize(stop_.back()));
  for (std::size_t i = 0; i < stop_.size(); ++i) {
    float ms = 0;
    NP_CUDA_CHECK(rt_, cudaEventElapsedTime(&ms, start_[i], stop_[i]));
    out.push_back(static_cast<double>(ms) / 1e3);
  }
  return out;
}

DeviceBuffer upload(const Runtime& rt, const void* host, std::size_t bytes, cudaStream_t stream) {
  DeviceBuffer d(rt, bytes);
  NP_CUDA_CHECK(rt, cudaMemcpyAsync(d.get(), host, bytes, cudaMemcpyHostToDevice, stream));
  return d;
}

std::vector<std::uint8_t> download(const Runtime& rt, const DeviceBuffer& d, cudaStream_t stream) {
  std::vector<std::uint8_t> out(d.size());
  NP_CUDA_CHECK(rt, cudaMemcpyAsync(out.data(), d.get(), out.size(), cudaMemcpyDeviceToHost, stream));
  NP_CUDA_CHECK(rt, cudaStreamSynchronize(stream));
  return out;
}

}  // namespace nodeprobe::gemm::cuda
