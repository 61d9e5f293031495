#include "nodeprobe/cuda/runtime.h"

namespace nodeprobe::cuda {

// The host-only explanations name these codes without CUDA headers.
static_assert(cudaSuccess == cuda_rc::kSuccess);
static_assert(cudaErrorMemoryAllocation == cuda_rc::kMemoryAllocation);
static_assert(cudaErrorInitializationError == cuda_rc::kInitializationError);
static_assert(cudaErrorStubLibrary == cuda_rc::kStubLibrary);
static_assert(cudaErrorInsufficientDriver == cuda_rc::kInsufficientDriver);
static_assert(cudaErrorCallRequiresNewerDriver == cuda_rc::kCallRequiresNewerDriver);
static_assert(cudaErrorDevicesUnavailable == cuda_rc::kDevicesUnavailable);
static_assert(cudaErrorNoDevice == cuda_rc::kNoDevice);
static_assert(cudaErrorNoKernelImageForDevice == cuda_rc::kNoKernelImageForDevice);
static_assert(cudaErrorECCUncorrectable == cuda_rc::kEccUncorrectable);
static_assert(cudaErrorIllegalAddress == cuda_rc::kIllegalAddress);
static_assert(cudaErrorLaunchFailure == cuda_rc::kLaunchFailure);
static_assert(cudaErrorSystemNotReady == cuda_rc::kSystemNotReady);
static_assert(cudaErrorSystemDriverMismatch == cuda_rc::kSystemDriverMismatch);
static_assert(cudaErrorCompatNotSupportedOnDevice == cuda_rc::kCompatNotSupportedOnDevice);

const Runtime& linked_runtime() {
  static const Runtime rt = [] {
    Runtime t;
#define NP_LINK_MEMBER(fn) t.fn = &::fn;
#define NP_LINK_TYPED_MEMBER(fn, type) t.fn = &::fn;
    NP_CUDART_FUNCS(NP_LINK_MEMBER)
    NP_CUDART_OVERLOADED_FUNCS(NP_LINK_TYPED_MEMBER)
#undef NP_LINK_MEMBER
#undef NP_LINK_TYPED_MEMBER
    return t;
  }();
  return rt;
}

namespace {
int driver_version(const Runtime& rt) {
  int v = -1;
  if (rt.cudaDriverGetVersion(&v) != cudaSuccess) v = -1;
  return v;
}
}  // namespace

std::string describe(const Runtime& rt, cudaError_t rc, const char* call) {
  const char* name = rt.cudaGetErrorName(rc);
  const char* text = rt.cudaGetErrorString(rc);
  return explain_cuda_error(call, static_cast<int>(rc), name ? name : "cudaError",
                            text ? text : "", driver_version(rt));
}

void throw_cuda(const Runtime& rt, cudaError_t rc, const char* call, const char* file, int line) {
  (void)rt.cudaGetLastError();
  const char* name = rt.cudaGetErrorName(rc);
  const char* text = rt.cudaGetErrorString(rc);
  std::string message = text ? text : "";
  const CudaErrorHint h = cuda_error_hint(static_cast<int>(rc), driver_version(rt));
  if (!h.summary.empty()) message += ": " + h.summary;
  if (!h.fix.empty()) message += "; fix: " + h.fix;
  throw_api_error("cuda", rc, name ? name : "cudaError", message, call, file, line);
}

}  // namespace nodeprobe::cuda
