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

namespace {

// A literal: launch() names its call on every (timed) launch.
const char* coll_call(Coll c) {
  switch (c) {
    case Coll::kAllGather: return "ncclAllGather";
    case Coll::kReduceScatter: return "ncclReduceScatter";
    case Coll::kBroadcast: return "ncclBroadcast";
    case Coll::kReduce: return "ncclReduce";
    case Coll::kAllToAll:
    case Coll::kSendRecv: return "ncclSend/ncclRecv";
    default: return "ncclAllReduce";
  }
}

}  // namespace

std::size_t nccl_type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 4;
  }
}

void NcclRank::fill(const void* host, std::size_t bytes, bool in_place, std::size_t offset, std::size_t poison) {
  if (poison == 0 && !in_place) poison = bytes;
  if (poison) NP_RANK_CUDA(cudaMemsetAsync(recv_, 0xff, poison, stream_));
  // Pageable source: cudaMemcpyAsync stages it before returning, so `host`
  // may be reused at once; the copy itself is ordered before the collective.
  NP_RANK_CUDA(cudaMemcpyAsync(static_cast<unsigned char*>(in_place ? recv_ : send_) + offset, host, bytes,
                               cudaMemcpyHostToDevice, stream_));
}

void NcclRank::fill_coll(const void* host, const CollData& d, bool in_place) {
  const std::size_t esize = dtype_size(d.type);
  const CollLayout l = coll_layout(d, in_place);
  fill(host, d.counts.send * esize, l.input_in_result, l.input_at * esize, l.poison * esize);
}

void NcclRank::read_coll(void* host, const CollData& d, bool in_place) {
  const std::size_t esize = dtype_size(d.type);
  read(host, d.counts.recv * esize, coll_layout(d, in_place).result_at * esize);
}

void NcclRank::launch(std::size_t count, ncclDataType_t type, ncclRedOp_t op, bool in_place, Coll coll, int root) {
  auto* send = static_cast<unsigned char*>(in_place ? recv_ : send_);
  auto* recv = static_cast<unsigned char*>(recv_);
  const std::size_t block = count * nccl_type_size(type);
  const std::size_t own = static_cast<std::size_t>(rank_) * block;
  const char* call = coll_call(coll);
  last_coll_ = coll;
  ncclResult_t r = ncclSuccess;
  const NcclLibrary& nccl = *api_.nccl;
  switch (coll) {
    case Coll::kAllReduce: r = nccl.ncclAllReduce(send, recv, count, type, op, comm_, stream_); break;
    case Coll::kAllGather:
      r = nccl.ncclAllGather(in_place ? recv + own : send, recv, count, type, comm_, stream_);
      break;
    case Coll::kReduceScatter:
      r = nccl.ncclReduceScatter(send, in_place ? recv + own : recv, count, type, op, comm_, stream_);
      break;
    case Coll::kBroadcast:
      r = nccl.ncclBroadcast(send, recv, count, type, root, comm_, stream_);
      break;
    case Coll::kReduce:
      r = nccl.ncclReduce(send, recv, count, type, op, root, comm_, stream_);
      break;
    case Coll::kAllToAll:
    case Coll::kSendRecv: {
      // Point-to-point calls between ncclGroupStart and ncclGroupEnd run as one (nccl-tests' alltoall, sendrecv).
      send = static_cast<unsigned char*>(send_);
      r = nccl.ncclGroupStart();
      auto pair = [&](int to, std::size_t send_at, int from, std::size_t recv_at) {
        if (r == ncclSuccess) r = nccl.ncclSend(send + send_at, count, type, to, comm_, stream_);
        if (r == ncclSuccess) r = nccl.ncclRecv(recv + recv_at, count, type, from, comm_, stream_);
      };
      if (coll == Coll::kAllToAll) {
        for (int p = 0; p < nranks_; ++p) pair(p, static_cast<std::size_t>(p) * block, p, static_cast<std::size_t>(p) * block);
      } else {
        pair((rank_ + 1) % nranks_, 0, (rank_ + nranks_ - 1) % nranks_, 0);
      }
      // Ended whatever happened, so the group's state is not left open.
      const ncclResult_t end = nccl.ncclGroupEnd();
      if (r == ncclSuccess) r = end;
      break;
    }
  }
  // A nonblocking communicator may still be enqueueing: done before the next call.
  if (r == ncclInProgress) settle(call);
  else if (r != ncclSuccess) fail_nccl(r, call);
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
      fail_nccl(async, (std::string(coll_call(last_coll_)) + " (asynchronous error)").c_str());
    if (stop_ && stop_()) stopped(("the " + std::string(to_string(last_coll_))).c_str());
    if (clock.now_s() - t0 > stall_s) {
      failed_ = true;
      abort_comm();
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", stall_s);
      throw NcclStopped(
          "NCCL timeout: " + where() + ": the " + std::string(to_string(last_coll_)) + " made no progress for " + buf +
          " s (--stall-timeout); the communicator was aborted (ncclCommAbort). A stopped or "
          "crashed peer, a network that drops NCCL's traffic, or an interface NCCL cannot reach "
          "(NCCL_SOCKET_IFNAME, FI_PROVIDER) hangs a collective");
    }
    sched_yield();  // let NCCL's proxy threads run
  }
}

void NcclRank::read(void* host, std::size_t bytes, std::size_t offset) {
  NP_RANK_CUDA(cudaMemcpyAsync(host, static_cast<unsigned char*>(recv_) + offset, bytes, cudaMemcpyDeviceToHost,
                               stream_));
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
