#pragma once
// A CPU stand-in for the NCCL calls in NcclLibrary, on top of FakeCudaRuntime.
//
// One rank (nranks 1): ncclAllReduce queues its copy on the caller's stream
// (the result is the input, whatever the operation).
//
// N ranks in one process (threads sharing one ncclUniqueId from
// ncclGetUniqueId): a clique per id. ncclCommInitRankConfig waits for every
// rank (a nonblocking one, config.blocking = 0, returns ncclInProgress and
// ncclCommGetAsyncError says ncclInProgress until they have all arrived).
// Each allreduce is a step on the caller's stream that, when the stream
// runs, hands in its input and completes once every rank has handed in the
// same collective: then each rank's result is the real element-wise sum
// (float32/64, int32/64, sum only) for ncclAllReduce, ncclReduce (the root)
// and ncclReduceScatter (the rank's block), the ranks' inputs in rank order
// for ncclAllGather, the root's for ncclBroadcast, and what each peer sent it
// for ncclSend/ncclRecv between ncclGroupStart and ncclGroupEnd (only grouped). Until then the stream is not ready, as a
// kernel waiting for its peers would be; ranks whose n-th collectives differ
// in size (out of step) never complete, as on NCCL.
//
// Failures are knobs: an asynchronous error, a hang (the runtime's `hang`,
// every stream), a failing init, one rank that stalls (`hang_rank`: its
// collectives never hand in nor complete, so its peers wait too), and one
// rank whose results come back with one wrong byte (`corrupt_rank`).

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_nccl_api.h"
#include "fake_cuda_runtime.h"

namespace nodeprobe::allreduce::testing {

class FakeNccl {
 public:
  explicit FakeNccl(nodeprobe::testing::FakeCudaRuntime& cuda);
  ~FakeNccl();
  FakeNccl(const FakeNccl&) = delete;
  FakeNccl& operator=(const FakeNccl&) = delete;

  /// The runtime and NCCL tables to hand to NcclRank.
  const NcclApi& api() const { return api_; }

  ncclResult_t async_error = ncclSuccess;  ///< what ncclCommGetAsyncError reports
  ncclResult_t init_error = ncclSuccess;
  std::string last_error;                  ///< ncclGetLastError's text
  std::atomic<int> hang_rank{-1};          ///< this rank's collectives never complete
  std::atomic<int> corrupt_rank{-1};       ///< this rank's results have their first byte wrong
  int aborts = 0, destroys = 0, allreduces = 0;  ///< read them once the ranks' threads are done

  static FakeNccl& current();

  struct Clique;
  struct Comm;

 private:
  friend struct FakeNcclAccess;
  nodeprobe::testing::FakeCudaRuntime& cuda_;
  NcclLibrary lib_;
  NcclApi api_;
  std::mutex mu_;  ///< counters, cliques, communicators; never held while calling the runtime
  long next_id_ = 0;
  std::map<std::string, std::shared_ptr<Clique>> cliques_;
  std::map<ncclComm_t, std::unique_ptr<Comm>> comms_;
};

}  // namespace nodeprobe::allreduce::testing
