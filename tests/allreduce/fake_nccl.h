#pragma once
// A one-rank CPU stand-in for the NCCL calls in NcclLibrary, on top of
// FakeCudaRuntime: ncclAllReduce queues its copy on the caller's stream (one
// rank: the result is the input, whatever the operation), and failures are
// knobs: an asynchronous error, a hang (with the runtime's `hang`), a failing init.

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
  int aborts = 0, destroys = 0, allreduces = 0;

  static FakeNccl& current();

 private:
  nodeprobe::testing::FakeCudaRuntime& cuda_;
  NcclLibrary lib_;
  NcclApi api_;
};

}  // namespace nodeprobe::allreduce::testing
