#pragma once
/// One rank's half of the nccl backend, without MPI: device, stream,
/// buffers, communicator, and the stream-ordered fill / launch / wait / read
/// cycle. Every call goes through NcclApi, so unit tests drive it with a CPU
/// fake of the CUDA runtime and NCCL.
///
/// Ordering: inputs are written with cudaMemcpyAsync / cudaMemsetAsync on the
/// same non-blocking stream the allreduce runs on, and results are read back
/// on it too (a legacy-stream cudaMemcpy / cudaMemset is not ordered with a
/// cudaStreamNonBlocking stream, and a pageable cudaMemcpy may return before
/// its DMA lands).
///
/// Failure: wait() polls the stream and ncclCommGetAsyncError (as nccl-tests'
/// testStreamSynchronize does); on an NCCL error, a CUDA error or no progress
/// within the stall limit it aborts the communicator (ncclCommAbort) and
/// throws with NCCL's text, ncclGetLastError, the rank and the host. After a
/// failure the communicator is never destroyed (ncclCommDestroy can hang).

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

#include "ar_types.h"
#include "data.h"
#include "backend_nccl_api.h"

namespace nodeprobe::allreduce {

/// "ncclRemoteError" for a result code.
std::string nccl_result_name(ncclResult_t r);

/// Thrown when a wait ended without completion: the stop predicate
/// (set_stop) said so, or no progress within wait()'s stall limit. The
/// communicator has been aborted.
/// Bytes per element of an NCCL data type.
std::size_t nccl_type_size(ncclDataType_t t);

class NcclStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NcclRank {
 public:
  NcclRank(const NcclApi& api, int rank, int nranks);
  ~NcclRank();
  NcclRank(const NcclRank&) = delete;
  NcclRank& operator=(const NcclRank&) = delete;

  /// CUDA devices this process sees; throws BackendUnavailable with the
  /// explained CUDA error (802 names the Fabric Manager) when there are none.
  int visible_devices() const;
  /// Drives device `dev`: checks this build supports it, creates the stream
  /// and two buffers of `bytes`. Returns the GPU's UUID ("GPU-..."/"MIG-...").
  std::string open(int dev, std::size_t bytes);
  /// "GPU0 NVIDIA H100 80GB HBM3 0000:53:00".
  const std::string& device() const { return device_; }
  /// Creates the communicator; `net` "socket" forces NCCL's Socket transport.
  /// Blocking by default (every rank of a job arrives). With `bounded` it is a
  /// nonblocking communicator (config.blocking = 0) whose creation and
  /// collectives are polled with ncclCommGetAsyncError until done or until
  /// the stop predicate says so (a peer that never arrives costs the deadline,
  /// not a hang in ncclCommInitRankConfig).
  void init(const ncclUniqueId& id, const std::string& net, bool bounded = false);
  /// Polled by a bounded init, launch and wait: when it returns true they
  /// abort the communicator and throw NcclStopped.
  void set_stop(std::function<bool()> stop) { stop_ = std::move(stop); }
  /// NCCL's version, "2.21.5".
  std::string version() const;
  /// Makes the device current on the calling thread.
  void bind_thread();

  /// Queues `bytes` from `host` into the input buffer at byte `offset` (the
  /// result buffer when in place). First the result buffer is poisoned with
  /// 0xff: its first `poison` bytes, or out of place (poison 0) `bytes`.
  void fill(const void* host, std::size_t bytes, bool in_place, std::size_t offset = 0, std::size_t poison = 0);
  /// Queues one collective of `count` (the call's count, nccl-tests' count
  /// column). In place as nccl-tests: allgather's input is the rank's block of
  /// the result buffer, reducescatter's result the rank's block of the input;
  /// alltoall and sendrecv (grouped ncclSend/ncclRecv) have no in-place form.
  void launch(std::size_t count, ncclDataType_t type, ncclRedOp_t op, bool in_place, Coll coll = Coll::kAllReduce,
              int root = 0);
  /// The input of `d` (host: d.counts.send elements) where launch() of that
  /// collective reads it, the result buffer poisoned where it writes.
  void fill_coll(const void* host, const CollData& d, bool in_place);
  /// This rank's result of `d` (d.counts.recv elements) to `host`.
  void read_coll(void* host, const CollData& d, bool in_place);
  /// Waits for everything launched, giving up after `stall_s` without completion.
  void wait(double stall_s);
  /// Copies `bytes` of the result buffer from byte `offset` to `host`, in stream order.
  void read(void* host, std::size_t bytes, std::size_t offset = 0);
  /// Overwrites the first result byte (fault injection for tests).
  void corrupt_one();
  /// Whether the communicator was aborted after a failure.
  bool aborted() const { return aborted_; }

 private:
  [[noreturn]] void fail_nccl(ncclResult_t r, const char* call);
  [[noreturn]] void fail_cuda(cudaError_t rc, const char* call);
  void abort_comm();
  /// Polls a nonblocking communicator until its last call is no longer in progress.
  void settle(const char* call);
  [[noreturn]] void stopped(const char* during);
  std::string where() const;

  const NcclApi& api_;
  const cuda::Runtime& rt_;
  int rank_ = 0, nranks_ = 1, dev_ = -1;
  std::size_t bytes_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  bool failed_ = false, aborted_ = false;
  Coll last_coll_ = Coll::kAllReduce;  ///< what wait() names
  std::string device_ = "gpu";
  std::function<bool()> stop_;
};

}  // namespace nodeprobe::allreduce
