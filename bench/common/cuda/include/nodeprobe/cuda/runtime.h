#pragma once
/// The CUDA runtime calls nodeprobe's GPU code makes, as a table of function
/// pointers: in the probes it points at the statically linked runtime (the
/// binaries need no libcudart.so); in unit tests at a CPU fake that models
/// streams, so ordering mistakes show without a GPU. CUDA-side half of
/// bench/common: built only with the CUDA toolkit (target nodeprobe_cuda).
///
/// Deliberately absent: cudaMemcpy and cudaMemset. They run on the legacy
/// default stream, which a cudaStreamNonBlocking stream does not wait for, and
/// a pageable cudaMemcpy may return before its DMA lands: every copy goes
/// through cudaMemcpyAsync / cudaMemsetAsync on the stream that uses the data.

#include <cuda_runtime_api.h>

#include <string>
#include <type_traits>

#include "nodeprobe/cuda_errors.h"
#include "nodeprobe/error.h"

namespace nodeprobe::cuda {

#define NP_CUDART_FUNCS(X)                                                           \
  X(cudaRuntimeGetVersion) X(cudaDriverGetVersion) X(cudaGetDeviceCount)             \
  X(cudaGetErrorName) X(cudaGetErrorString) X(cudaGetLastError)                       \
  X(cudaGetDevice) X(cudaSetDevice) X(cudaGetDeviceProperties)                        \
  X(cudaDeviceGetAttribute) X(cudaDeviceGetPCIBusId)                                  \
  X(cudaFree) X(cudaFreeHost)                                                         \
  X(cudaMemcpyAsync) X(cudaMemsetAsync) X(cudaMemcpyPeerAsync)                        \
  X(cudaStreamCreateWithFlags) X(cudaStreamDestroy) X(cudaStreamSynchronize)          \
  X(cudaStreamQuery)                                                                 \
  X(cudaEventCreateWithFlags) X(cudaEventDestroy)                                     \
  X(cudaEventRecord) X(cudaEventSynchronize) X(cudaEventQuery) X(cudaEventElapsedTime) \
  X(cudaDeviceCanAccessPeer) X(cudaDeviceEnablePeerAccess)

/// Calls <cuda_runtime.h> overloads in C++ (nccl.h includes it): their C
/// signature is spelled out.
#define NP_CUDART_OVERLOADED_FUNCS(Y)                                              \
  Y(cudaMalloc, cudaError_t(void**, size_t))                                       \
  Y(cudaMallocHost, cudaError_t(void**, size_t))                                   \
  Y(cudaHostAlloc, cudaError_t(void**, size_t, unsigned int))                      \
  Y(cudaEventCreate, cudaError_t(cudaEvent_t*))

/// A table member named like the API function; qualified, so the member
/// does not change what the name means inside the struct.
#define NP_DECLARE_API_MEMBER(fn) decltype(&::fn) fn = nullptr;
#define NP_DECLARE_TYPED_MEMBER(fn, type) std::add_pointer_t<type> fn = nullptr;

/// One member per call, named like the call: `rt.cudaMalloc(&p, n)`.
struct Runtime {
  NP_CUDART_FUNCS(NP_DECLARE_API_MEMBER)
  NP_CUDART_OVERLOADED_FUNCS(NP_DECLARE_TYPED_MEMBER)
};

/// The statically linked CUDA runtime.
const Runtime& linked_runtime();

/// explain_cuda_error() with the runtime's name and text for `rc`.
std::string describe(const Runtime& rt, cudaError_t rc, const char* call);

/// Throws ApiError("cuda", ...) whose message carries the node-level
/// explanation (cuda_error_hint), after clearing the sticky last error.
[[noreturn]] void throw_cuda(const Runtime& rt, cudaError_t rc, const char* call, const char* file,
                             int line);

}  // namespace nodeprobe::cuda

/// A runtime call through table `rt`: `NP_CUDA_CHECK(rt, cudaSetDevice(d))`.
#define NP_CUDA_CHECK(rt, call)                                                    \
  do {                                                                             \
    const cudaError_t np_rc_ = (rt).call;                                          \
    if (np_rc_ != cudaSuccess)                                                     \
      ::nodeprobe::cuda::throw_cuda((rt), np_rc_, #call, __FILE__, __LINE__);      \
  } while (0)

/// Cleanup paths: log and carry on.
#define NP_CUDA_CHECK_NOTHROW(rt, call)                                            \
  do {                                                                             \
    const cudaError_t np_rc_ = (rt).call;                                          \
    if (np_rc_ != cudaSuccess)                                                     \
      ::nodeprobe::report_cleanup_failure(std::string(#call) + ": " +              \
                                          (rt).cudaGetErrorName(np_rc_));          \
  } while (0)
