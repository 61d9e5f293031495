#include "backend_nccl_rank.h"

#include <sched.h>

#include <cstdio>

#include "backend.h"
#include "nodeprobe/clock.h"

// Every CUDA call after the device is chosen: a failure marks the rank failed
// (no ncclCommDestroy later) and aborts the communicator.
#define NP_RANK_CUDA(call)                                       \
  do {                                                           \
    const cudaError_t np_rc_ = rt_.call;                         \
    if (np_rc_ != cudaSuccess) fail_cuda(np_rc_, #call);         \
  } while (0)

namespace nodeprobe::allreduce {

std::string nccl_result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 12, 0)
    case ncclRemoteError: return "ncclRemoteError";
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
    case ncclInProgress: return "ncclInProgress";
#endif
    default: break;
  }
  return "ncclResult " + std::to_string(static_cast<int>(r));
}

NcclRank::NcclRank(const NcclApi& api, int rank, int nranks)
    : api_(api), rt_(*api.rt), rank_(rank), nranks_(nranks) {}

NcclRank::~NcclRank() {
  if (comm_ && !aborted_) {
    // After any failure a destroy can wait forever on a peer: abort instead.
    if (failed_)
      api_.nccl->ncclCommAbort(comm_);
    else
      api_.nccl->ncclCommDestroy(comm_);
  }
  if (send_) NP_CUDA_CHECK_NOTHROW(rt_, cudaFree(send_));
  if (recv_) NP_CUDA_CHECK_NOTHROW(rt_, cudaFree(recv_));
  if (stream_) NP_CUDA_CHECK_NOTHROW(rt_, cudaStreamDestroy(stream_));
}

std::string NcclRank::where() const { return "rank " + std::to_string(rank_) + " on " + process_hostname() + " (" + device_ + ")"; }

int NcclRank::visible_devices() const {
  if (!api_.nccl) throw BackendUnavailable(api_.unavailable);
  int n = 0;
  const cudaError_t rc = rt_.cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    (void)rt_.cudaGetLastError();
    throw BackendUnavailable("no usable GPU on " + process_hostname() + ": " +
                             cuda::describe(rt_, rc, "cudaGetDeviceCount"));
  }
  return n;
}

std::string NcclRank::open(int dev, std::size_t bytes) {
  dev_ = dev;
  bytes_ = bytes ? bytes : 1;
  NP_RANK_CUDA(cudaSetDevice(dev_));
  cudaDeviceProp prop{};
  NP_RANK_CUDA(cudaGetDeviceProperties(&prop, dev_));
  int runtime = 0;
  (void)rt_.cudaRuntimeGetVersion(&runtime);
  if (const std::string why = cuda_build_support(runtime, prop.major, prop.minor); !why.empty())
    throw BackendUnavailable(why + " (" + prop.name + " on " + process_hostname() + ")");
  char bus[32];
  std::snprintf(bus, sizeof bus, "%04x:%02x:%02x", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  device_ = "GPU" + std::to_string(dev_) + " " + prop.name + " " + bus;
  NP_RANK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  NP_RANK_CUDA(cudaMalloc(&send_, bytes_));
  NP_RANK_CUDA(cudaMalloc(&recv_, bytes_));
  const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  char uuid[48];
  std::snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  return uuid;
}

void NcclRank::init(const ncclUniqueId& id, const std::string& net, bool bounded) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0)
  if (net == "socket") config.netName = "Socket";
#else
  (void)net;
#endif
  if (bounded) config.blocking = 0;
  const ncclResult_t r = api_.nccl->ncclCommInitRankConfig(&comm_, nranks_, id, rank_, &config);
  if (r == ncclInProgress && bounded) settle("ncclCommInitRankConfig");
  else if (r != ncclSuccess) fail_nccl(r, "ncclCommInitRankConfig");
}

void NcclRank::settle(const char* call) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = api_.nccl->ncclCommGetAsyncError(comm_, &state);
    if (r != ncclSuccess) fail_nccl(r, "ncclCommGetAsyncError");
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) fail_nccl(state, call);
    if (stop_ && stop_()) stopped(call);
    sched_yield();
  }
}

void NcclRank::stopped(const char* during) {
  failed_ = true;
  abort_comm();
  throw NcclStopped(where() + ": stopped during " + during + "; the communicator was aborted (ncclCommAbort)");
}

std::string NcclRank::version() const {
  int v = 0;
  if (api_.nccl->ncclGetVersion(&v) != ncclSuccess) return {};
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

void NcclRank::bind_thread() { NP_RANK_CUDA(cudaSetDevice(dev_)); }

void NcclRank::fill(const void* host, std::size_t bytes, bool in_place) {
  // Pageable source: cudaMemcpyAsync stages it before returning, so `host`
  // may be reused at once; the copy itself is ordered before the allreduce.
  NP_RANK_CUDA(cudaMemcpyAsync(in_place ? recv_ : send_, host, bytes, cudaMemcpyHostToDevice, stream_));
  if (!in_place) NP_RANK_CUDA(cudaMemsetAsync(recv_, 0xff, bytes, stream_));
}

void NcclRank::launch(std::size_t count, ncclDataType_t type, ncclRedOp_t op, bool in_place) {
  const ncclResult_t r = api_.nccl->ncclAllReduce(in_place ? recv_ : send_, recv_, count, type, op, comm_, stream_);
  // A nonblocking communicator may still be enqueueing: done before the next call.
  if (r == ncclInProgress) settle("ncclAllReduce");
  else if (r != ncclSuccess) fail_nccl(r, "ncclAllReduce");
}

void NcclRank::wait(double stall_s) {
  Clock& clock = steady_clock();
  const double t0 = clock.now_s();
  for (;;) {
    const cudaError_t q = rt_.cudaStreamQuery(stream_);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) fail_cuda(q, "cudaStreamQuery");
    ncclResult_t async = ncclSuccess;
    const ncclResult_t r = api_.nccl->ncclCommGetAsyncError(comm_, &async);
    if (r != ncclSuccess) fail_nccl(r, "ncclCommGetAsyncError");
    if (async != ncclSuccess
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
        && async != ncclInProgress
#endif
    )
      fail_nccl(async, "ncclAllReduce (asynchronous error)");
    if (stop_ && stop_()) stopped("the allreduce");
    if (clock.now_s() - t0 > stall_s) {
      failed_ = true;
      abort_comm();
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", stall_s);
      throw NcclStopped(
          "NCCL timeout: " + where() + ": the allreduce made no progress for " + buf +
          " s (--stall-timeout); the communicator was aborted (ncclCommAbort). A stopped or "
          "crashed peer, a network that drops NCCL's traffic, or an interface NCCL cannot reach "
          "(NCCL_SOCKET_IFNAME, FI_PROVIDER) hangs a collective");
    }
    sched_yield();  // let NCCL's proxy threads run
  }
}

void NcclRank::read(void* host, std::size_t bytes) {
  NP_RANK_CUDA(cudaMemcpyAsync(host, recv_, bytes, cudaMemcpyDeviceToHost, stream_));
  NP_RANK_CUDA(cudaStreamSynchronize(stream_));
}

void NcclRank::corrupt_one() {
  const unsigned char b = 0x5a;
  NP_RANK_CUDA(cudaMemcpyAsync(recv_, &b, 1, cudaMemcpyHostToDevice, stream_));
  NP_RANK_CUDA(cudaStreamSynchronize(stream_));
}

void NcclRank::abort_comm() {
  if (comm_ && !aborted_) {
    api_.nccl->ncclCommAbort(comm_);
    aborted_ = true;
  }
}

void NcclRank::fail_nccl(ncclResult_t r, const char* call) {
  failed_ = true;
  // NCCL's own detail, read before the abort frees the communicator.
  const char* last = api_.nccl->ncclGetLastError(comm_);
  const char* text = api_.nccl->ncclGetErrorString(r);
  std::string message = where() + ": " + (text ? text : "");
  if (last && *last) message += "; NCCL: " + std::string(last);
  abort_comm();
  if (aborted_) message += "; the communicator was aborted (ncclCommAbort)";
  throw_api_error("nccl", r, nccl_result_name(r), message, call, __FILE__, __LINE__);
}

void NcclRank::fail_cuda(cudaError_t rc, const char* call) {
  failed_ = true;
  abort_comm();
  (void)rt_.cudaGetLastError();
  throw std::runtime_error(where() + ": " + cuda::describe(rt_, rc, call) +
                           (aborted_ ? "; the communicator was aborted (ncclCommAbort)" : ""));
}

}  // namespace nodeprobe::allreduce
