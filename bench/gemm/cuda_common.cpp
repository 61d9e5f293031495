#include "cuda_common.h"

// cublasGetStatusName/String arrived with cuBLAS 11.6 (CUDA 11.4 update 2).
#if defined(CUBLAS_VER_MAJOR) && (CUBLAS_VER_MAJOR > 11 || (CUBLAS_VER_MAJOR == 11 && CUBLAS_VER_MINOR >= 6))
#define NP_HAVE_CUBLAS_STATUS_NAME 1
#endif

namespace nodeprobe::gemm::cuda {

void throw_cuda(cudaError_t rc, const char* call, const char* file, int line) {
  throw_api_error("cuda", rc, cudaGetErrorName(rc), cudaGetErrorString(rc), call, file, line);
}

std::string cublas_status_name(cublasStatus_t rc) {
#ifdef NP_HAVE_CUBLAS_STATUS_NAME
  return cublasGetStatusName(rc);
#else
  return "CUBLAS_STATUS_" + std::to_string(static_cast<int>(rc));
#endif
}

void throw_cublas(cublasStatus_t rc, const char* call, const char* file, int line) {
#ifdef NP_HAVE_CUBLAS_STATUS_NAME
  const std::string text = cublasGetStatusString(rc);
#else
  const std::string text;
#endif
  throw_api_error("cublas", rc, cublas_status_name(rc), text, call, file, line);
}

DeviceScope::DeviceScope(int dev) {
  NP_CUDA_CHECK(cudaGetDevice(&prev_));
  NP_CUDA_CHECK(cudaSetDevice(dev));
}

DeviceScope::~DeviceScope() { NP_CUDA_CHECK_NOTHROW(cudaSetDevice(prev_)); }

DeviceBuffer::DeviceBuffer(std::size_t bytes) : n_(bytes) {
  NP_CUDA_CHECK(cudaMalloc(&p_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) NP_CUDA_CHECK_NOTHROW(cudaFree(p_));
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) { NP_CUDA_CHECK(cudaMallocHost(&p_, bytes)); }

PinnedBuffer::~PinnedBuffer() {
  if (p_) NP_CUDA_CHECK_NOTHROW(cudaFreeHost(p_));
}

Stream::Stream() { NP_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }

Stream::~Stream() {
  if (s_) NP_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
}

EventPairs::EventPairs(std::size_t n) {
  start_.reserve(n);
  stop_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    cudaEvent_t a = nullptr, b = nullptr;
    NP_CUDA_CHECK(cudaEventCreate(&a));
    start_.push_back(a);
    NP_CUDA_CHECK(cudaEventCreate(&b));
    stop_.push_back(b);
  }
}

EventPairs::~EventPairs() {
  for (auto e : start_) NP_CUDA_CHECK_NOTHROW(cudaEventDestroy(e));
  for (auto e : stop_) NP_CUDA_CHECK_NOTHROW(cudaEventDestroy(e));
}

void EventPairs::start(std::size_t i, cudaStream_t s) { NP_CUDA_CHECK(cudaEventRecord(start_[i], s)); }
void EventPairs::stop(std::size_t i, cudaStream_t s) { NP_CUDA_CHECK(cudaEventRecord(stop_[i], s)); }

std::vector<double> EventPairs::seconds() {
  std::vector<double> out;
  if (stop_.empty()) return out;
  NP_CUDA_CHECK(cudaEventSynchronize(stop_.back()));
  for (std::size_t i = 0; i < stop_.size(); ++i) {
    float ms = 0;
    NP_CUDA_CHECK(cudaEventElapsedTime(&ms, start_[i], stop_[i]));
    out.push_back(static_cast<double>(ms) / 1e3);
  }
  return out;
}

DeviceBuffer upload(const void* host, std::size_t bytes) {
  DeviceBuffer d(bytes);
  NP_CUDA_CHECK(cudaMemcpy(d.get(), host, bytes, cudaMemcpyHostToDevice));
  return d;
}

}  // namespace nodeprobe::gemm::cuda
