#include "fake_nccl.h"

#include <cstring>
#include <stdexcept>

#include "ar_types.h"

namespace nodeprobe::allreduce::testing {
namespace {

FakeNccl* g_nccl = nullptr;
int g_comm = 0;  // the one communicator's address
ncclComm_t the_comm() { return reinterpret_cast<ncclComm_t>(&g_comm); }

std::size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 4;
  }
}

ncclResult_t get_version(int* v) {
  *v = 22805;
  return ncclSuccess;
}
ncclResult_t get_unique_id(ncclUniqueId* id) {
  std::memset(id, 7, sizeof *id);
  return ncclSuccess;
}
ncclResult_t init_rank_config(ncclComm_t* comm, int nranks, ncclUniqueId, int rank, ncclConfig_t*) {
  FakeNccl& f = FakeNccl::current();
  if (f.init_error != ncclSuccess) return f.init_error;
  if (nranks != 1 || rank != 0) return ncclInvalidUsage;  // the fake has one rank
  *comm = the_comm();
  return ncclSuccess;
}
ncclResult_t destroy(ncclComm_t) {
  ++FakeNccl::current().destroys;
  return ncclSuccess;
}
ncclResult_t abort_comm(ncclComm_t) {
  ++FakeNccl::current().aborts;
  return ncclSuccess;
}
ncclResult_t get_async_error(ncclComm_t, ncclResult_t* r) {
  *r = FakeNccl::current().async_error;
  return ncclSuccess;
}
const char* error_string(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    default: return "NCCL error";
  }
}
const char* get_last_error(ncclComm_t) { return FakeNccl::current().last_error.c_str(); }
ncclResult_t all_reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t,
                        ncclComm_t, cudaStream_t s) {
  FakeNccl& f = FakeNccl::current();
  ++f.allreduces;
  const std::size_t n = count * type_size(type);
  nodeprobe::testing::FakeCudaRuntime::current().enqueue(s, [send, recv, n] { std::memmove(recv, send, n); });
  return ncclSuccess;
}

}  // namespace

FakeNccl::FakeNccl(nodeprobe::testing::FakeCudaRuntime& cuda) : cuda_(cuda) {
  if (g_nccl) throw std::logic_error("one FakeNccl at a time");
  g_nccl = this;
  lib_.ncclGetVersion = get_version;
  lib_.ncclGetUniqueId = get_unique_id;
  lib_.ncclCommInitRankConfig = init_rank_config;
  lib_.ncclCommDestroy = destroy;
  lib_.ncclCommAbort = abort_comm;
  lib_.ncclCommGetAsyncError = get_async_error;
  lib_.ncclGetErrorString = error_string;
  lib_.ncclGetLastError = get_last_error;
  lib_.ncclAllReduce = all_reduce;
  api_.rt = &cuda_.runtime();
  api_.nccl = &lib_;
  api_.path = "fake";
}

FakeNccl::~FakeNccl() { g_nccl = nullptr; }

FakeNccl& FakeNccl::current() {
  if (!g_nccl) throw std::logic_error("no FakeNccl installed");
  return *g_nccl;
}

}  // namespace nodeprobe::allreduce::testing
