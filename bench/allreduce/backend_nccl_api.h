#pragma once
/// The calls the nccl backend makes, as tables: the CUDA runtime (linked
/// statically) and NCCL (loaded at run time, so nodeprobe-allreduce starts on
/// nodes without NCCL and its mpi/fabric backends still run; the nccl target
/// is then skipped naming the missing library). Unit tests pass CPU fakes.

#include <nccl.h>

#include <string>

#include "nodeprobe/cuda/runtime.h"

namespace nodeprobe::allreduce {

#define NP_NCCL_FUNCS(X)                                                                \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRankConfig) X(ncclCommDestroy)     \
  X(ncclCommAbort) X(ncclCommGetAsyncError) X(ncclGetErrorString) X(ncclGetLastError)    \
  X(ncclAllReduce) X(ncclAllGather) X(ncclReduceScatter) X(ncclBroadcast) X(ncclReduce)      \
  X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd)

struct NcclLibrary {
  NP_NCCL_FUNCS(NP_DECLARE_API_MEMBER)
};

struct NcclApi {
  const cuda::Runtime* rt = nullptr;
  const NcclLibrary* nccl = nullptr;  ///< null when NCCL could not be loaded
  std::string unavailable;            ///< why (names the library and where it was looked for)
  std::string path;                   ///< what was loaded
};

/// The linked CUDA runtime and libnccl.so.2 (from $NODEPROBE_CUDA_LIBRARY_PATH
/// when set), loaded once.
const NcclApi& system_nccl_api();

}  // namespace nodeprobe::allreduce
