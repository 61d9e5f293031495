#include "fake_nccl.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "ar_types.h"

namespace nodeprobe::allreduce::testing {

// The ranks that share one ncclUniqueId.
struct FakeNccl::Clique {
  int nranks = 0;
  int joined = 0;
  std::condition_variable cv;  // with FakeNccl::mu_
  struct Round {
    std::vector<std::vector<unsigned char>> input;  // by rank
    int handed_in = 0, read = 0;
  };
  std::map<long, Round> rounds;  // by collective sequence number
};

struct FakeNccl::Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  long next_seq = 0;
  bool aborted = false;
};

namespace {

FakeNccl* g_nccl = nullptr;
int g_comm = 0;  // the one-rank communicator's address
ncclComm_t the_comm() { return reinterpret_cast<ncclComm_t>(&g_comm); }
constexpr double kInitWaitS = 30;  // a blocking init whose peers never come: fail, never hang a test

std::size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 4;
  }
}

template <typename T>
void add_into(unsigned char* dst, const unsigned char* src, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, dst + i * sizeof(T), sizeof(T));
    std::memcpy(&b, src + i * sizeof(T), sizeof(T));
    a = static_cast<T>(a + b);
    std::memcpy(dst + i * sizeof(T), &a, sizeof(T));
  }
}

bool summable(ncclDataType_t t) { return t == ncclFloat32 || t == ncclFloat64 || t == ncclInt32 || t == ncclInt64; }

void sum_into(unsigned char* dst, const unsigned char* src, std::size_t count, ncclDataType_t t) {
  switch (t) {
    case ncclFloat32: add_into<float>(dst, src, count); break;
    case ncclFloat64: add_into<double>(dst, src, count); break;
    case ncclInt32: add_into<int32_t>(dst, src, count); break;
    default: add_into<int64_t>(dst, src, count); break;
  }
}

}  // namespace

struct FakeNcclAccess {
  using F = FakeNccl;
  static F& f() { return F::current(); }
  // A multi-rank communicator, or null for the one-rank one.
  static F::Comm* comm(ncclComm_t c) {
    auto it = f().comms_.find(c);
    return it == f().comms_.end() ? nullptr : it->second.get();
  }

  static ncclResult_t get_version(int* v) {
    *v = 22805;
    return ncclSuccess;
  }
  static ncclResult_t get_unique_id(ncclUniqueId* id) {
    std::lock_guard<std::mutex> lk(f().mu_);
    std::memset(id, 7, sizeof *id);
    const long n = ++f().next_id_;
    std::memcpy(id->internal, &n, sizeof n);
    return ncclSuccess;
  }
  static ncclResult_t init_rank_config(ncclComm_t* out, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
    F& x = f();
    if (x.init_error != ncclSuccess) return x.init_error;
    if (nranks == 1) {
      if (rank != 0) return ncclInvalidUsage;
      *out = the_comm();
      return ncclSuccess;
    }
    if (nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    std::unique_lock<std::mutex> lk(x.mu_);
    auto& clique = x.cliques_[std::string(id.internal, sizeof id.internal)];
    if (!clique) {
      clique = std::make_shared<F::Clique>();
      clique->nranks = nranks;
    }
    if (clique->nranks != nranks) return ncclInvalidUsage;
    auto c = std::make_unique<F::Comm>();
    c->clique = clique;
    c->rank = rank;
    auto* handle = reinterpret_cast<ncclComm_t>(c.get());
    x.comms_[handle] = std::move(c);
    *out = handle;
    ++clique->joined;
    clique->cv.notify_all();
    if (config && config->blocking == 0) return clique->joined >= nranks ? ncclSuccess : ncclInProgress;
    const auto all = [&] { return clique->joined >= clique->nranks; };
    return clique->cv.wait_for(lk, std::chrono::duration<double>(kInitWaitS), all) ? ncclSuccess : ncclSystemError;
  }
  static ncclResult_t destroy(ncclComm_t c) {
    std::lock_guard<std::mutex> lk(f().mu_);
    ++f().destroys;
    if (F::Comm* m = comm(c)) m->aborted = true;  // nothing of it runs any more
    return ncclSuccess;
  }
  static ncclResult_t abort_comm(ncclComm_t c) {
    std::lock_guard<std::mutex> lk(f().mu_);
    ++f().aborts;
    if (F::Comm* m = comm(c)) m->aborted = true;  // its queued collectives end (as NCCL's kernels quit)
    return ncclSuccess;
  }
  static ncclResult_t get_async_error(ncclComm_t c, ncclResult_t* r) {
    std::lock_guard<std::mutex> lk(f().mu_);
    *r = f().async_error;
    if (*r == ncclSuccess)
      if (F::Comm* m = comm(c); m && m->clique->joined < m->clique->nranks) *r = ncclInProgress;
    return ncclSuccess;
  }
  static const char* error_string(ncclResult_t r) {
    switch (r) {
      case ncclSuccess: return "no error";
      case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
      case ncclRemoteError: return "remote process exited or there was a network error";
      default: return "NCCL error";
    }
  }
  static const char* get_last_error(ncclComm_t) { return f().last_error.c_str(); }

  // The step a rank's allreduce queues on its stream (run under the runtime's lock).
  static bool step(F::Comm* m, long seq, const void* send, void* recv, std::size_t count, ncclDataType_t type) {
    F& x = f();
    std::lock_guard<std::mutex> lk(x.mu_);
    if (m->aborted) return true;                 // aborted: the kernel quits, the result is whatever it is
    if (x.hang_rank == m->rank) return false;    // a stalled rank: never hands in, never completes
    F::Clique& cl = *m->clique;
    F::Clique::Round& round = cl.rounds[seq];
    const std::size_t n = count * type_size(type);
    if (round.input.empty()) round.input.resize(static_cast<std::size_t>(cl.nranks));
    auto& mine = round.input[static_cast<std::size_t>(m->rank)];
    if (mine.empty() && n) {
      mine.assign(static_cast<const unsigned char*>(send), static_cast<const unsigned char*>(send) + n);
      ++round.handed_in;
    }
    if (round.handed_in < cl.nranks) return false;  // the peers have not reached this collective yet
    // Ranks whose n-th collectives differ in size are out of step: on NCCL that hangs (or worse); here it hangs.
    for (const auto& in : round.input)
      if (in.size() != n) return false;
    std::vector<unsigned char> sum = round.input[0];
    for (int r = 1; r < cl.nranks; ++r) sum_into(sum.data(), round.input[static_cast<std::size_t>(r)].data(), count, type);
    if (x.corrupt_rank == m->rank && n) sum[0] ^= 0x5a;
    std::memcpy(recv, sum.data(), n);
    if (++round.read == cl.nranks) cl.rounds.erase(seq);
    return true;
  }

  static ncclResult_t all_reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                 ncclComm_t c, cudaStream_t s) {
    F& x = f();
    F::Comm* m = nullptr;
    long seq = 0;
    {
      std::lock_guard<std::mutex> lk(x.mu_);
      ++x.allreduces;
      m = comm(c);
      if (m) {
        if (!summable(type) || op != ncclSum || count == 0) return ncclInvalidArgument;  // what the fake sums
        seq = m->next_seq++;
      }
    }
    auto& cuda = nodeprobe::testing::FakeCudaRuntime::current();
    if (!m) {
      const std::size_t n = count * type_size(type);
      cuda.enqueue(s, [send, recv, n] { std::memmove(recv, send, n); });
      return ncclSuccess;
    }
    cuda.enqueue_until(s, [m, seq, send, recv, count, type] { return step(m, seq, send, recv, count, type); });
    return ncclSuccess;
  }
};

FakeNccl::FakeNccl(nodeprobe::testing::FakeCudaRuntime& cuda) : cuda_(cuda) {
  if (g_nccl) throw std::logic_error("one FakeNccl at a time");
  g_nccl = this;
  using A = FakeNcclAccess;
  lib_.ncclGetVersion = A::get_version;
  lib_.ncclGetUniqueId = A::get_unique_id;
  lib_.ncclCommInitRankConfig = A::init_rank_config;
  lib_.ncclCommDestroy = A::destroy;
  lib_.ncclCommAbort = A::abort_comm;
  lib_.ncclCommGetAsyncError = A::get_async_error;
  lib_.ncclGetErrorString = A::error_string;
  lib_.ncclGetLastError = A::get_last_error;
  lib_.ncclAllReduce = A::all_reduce;
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
