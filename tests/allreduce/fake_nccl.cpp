#include "fake_nccl.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "ar_types.h"
#include "backend_nccl_rank.h"

namespace nodeprobe::allreduce::testing {

// The ranks that share one ncclUniqueId.
struct FakeNccl::Clique {
  int nranks = 0;
  int joined = 0;
  std::condition_variable cv;  // with FakeNccl::mu_
  struct Round {
    std::vector<std::vector<unsigned char>> input;  // by rank
    std::vector<std::map<int, std::vector<unsigned char>>> sends;  // grouped ncclSend: by rank, then peer
    std::vector<char> in;  // by rank: handed in
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

std::size_t type_size(ncclDataType_t t) { return nccl_type_size(t); }  // the product's

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

  // One collective as a rank queued it: what it hands in and where its result goes.
  struct Call {
    Coll coll = Coll::kAllReduce;
    const void* send = nullptr;
    void* recv = nullptr;
    std::size_t count = 0;  // the call's count
    ncclDataType_t type = ncclFloat32;
    int root = 0;
    std::vector<std::pair<int, const void*>> sends;        // grouped: (peer, buffer)
    std::vector<std::pair<int, void*>> recvs;              // grouped: (peer, buffer)
  };

  // The bytes a rank hands in: its whole input (the clique computes every result from them).
  static std::size_t input_bytes(const Call& c, int nranks) {
    const std::size_t b = c.count * type_size(c.type);
    return c.coll == Coll::kReduceScatter ? b * static_cast<std::size_t>(nranks) : b;
  }

  // This rank's result from every rank's input (as NCCL computes it).
  static void result(const Call& c, int rank, int nranks, const F::Clique::Round& round, bool corrupt) {
    const std::size_t b = c.count * type_size(c.type);
    std::vector<unsigned char> out;
    auto sum = [&] {
      std::vector<unsigned char> acc = round.input[0];
      for (int r = 1; r < nranks; ++r)
        sum_into(acc.data(), round.input[static_cast<std::size_t>(r)].data(), acc.size() / type_size(c.type), c.type);
      return acc;
    };
    switch (c.coll) {
      case Coll::kAllReduce: out = sum(); break;
      case Coll::kReduce:
        if (rank != c.root) return;  // only the root has a result
        out = sum();
        break;
      case Coll::kReduceScatter: {
        const auto all = sum();
        out.assign(all.begin() + static_cast<long>(static_cast<std::size_t>(rank) * b),
                   all.begin() + static_cast<long>(static_cast<std::size_t>(rank + 1) * b));
        break;
      }
      case Coll::kAllGather:
        for (const auto& in : round.input) out.insert(out.end(), in.begin(), in.end());
        break;
      case Coll::kBroadcast: out = round.input[static_cast<std::size_t>(c.root)]; break;
      case Coll::kAllToAll:
      case Coll::kSendRecv:
        for (const auto& [peer, buf] : c.recvs) {
          const auto& from = round.sends[static_cast<std::size_t>(peer)];
          auto it = from.find(rank);
          if (it != from.end()) std::memcpy(buf, it->second.data(), it->second.size());
        }
        if (corrupt && !c.recvs.empty() && b) *static_cast<unsigned char*>(c.recvs.front().second) ^= 0x5a;
        return;
    }
    if (corrupt && !out.empty()) out[0] ^= 0x5a;
    std::memcpy(c.recv, out.data(), out.size());
  }

  // The step a rank's collective queues on its stream (run under the runtime's lock).
  static bool step(F::Comm* m, long seq, const Call& c) {
    F& x = f();
    std::lock_guard<std::mutex> lk(x.mu_);
    if (m->aborted) return true;                 // aborted: the kernel quits, the result is whatever it is
    if (x.hang_rank == m->rank) return false;    // a stalled rank: never hands in, never completes
    F::Clique& cl = *m->clique;
    F::Clique::Round& round = cl.rounds[seq];
    const std::size_t n = input_bytes(c, cl.nranks);
    if (round.input.empty()) {
      round.input.resize(static_cast<std::size_t>(cl.nranks));
      round.sends.resize(static_cast<std::size_t>(cl.nranks));
      round.in.assign(static_cast<std::size_t>(cl.nranks), 0);
    }
    const auto me = static_cast<std::size_t>(m->rank);
    if (!round.in[me]) {
      const auto* src = static_cast<const unsigned char*>(c.send);
      if (src) round.input[me].assign(src, src + n);
      for (const auto& [peer, buf] : c.sends) {
        const auto* p = static_cast<const unsigned char*>(buf);
        round.sends[me][peer].assign(p, p + c.count * type_size(c.type));
      }
      round.in[me] = 1;
      ++round.handed_in;
    }
    if (round.handed_in < cl.nranks) return false;  // the peers have not reached this collective yet
    // Ranks whose n-th collectives differ in size are out of step: on NCCL that hangs (or worse); here it hangs.
    for (const auto& in : round.input)
      if (in.size() != round.input[me].size()) return false;
    result(c, m->rank, cl.nranks, round, x.corrupt_rank == m->rank);
    if (++round.read == cl.nranks) cl.rounds.erase(seq);
    return true;
  }

  // Queues `c` on stream `s`; the one-rank communicator's result is its own input.
  static ncclResult_t queue(ncclComm_t handle, Call c, cudaStream_t s) {
    F& x = f();
    F::Comm* m = nullptr;
    long seq = 0;
    {
      std::lock_guard<std::mutex> lk(x.mu_);
      ++x.allreduces;
      m = comm(handle);
      const bool reduces = c.coll == Coll::kAllReduce || c.coll == Coll::kReduceScatter || c.coll == Coll::kReduce;
      if (m) {
        if (c.count == 0 || (reduces && !summable(c.type))) return ncclInvalidArgument;  // what the fake sums
        if (c.root < 0 || c.root >= m->clique->nranks) return ncclInvalidArgument;
        seq = m->next_seq++;
      }
    }
    auto& cuda = nodeprobe::testing::FakeCudaRuntime::current();
    if (!m) {
      cuda.enqueue(s, [c] {
        const std::size_t n = c.count * type_size(c.type);
        if (c.recv && c.send) std::memmove(c.recv, c.send, n);
        for (std::size_t i = 0; i < c.sends.size() && i < c.recvs.size(); ++i)
          std::memmove(c.recvs[i].second, c.sends[i].second, n);
      });
      return ncclSuccess;
    }
    cuda.enqueue_until(s, [m, seq, c] { return step(m, seq, c); });
    return ncclSuccess;
  }

  static ncclResult_t all_reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                 ncclComm_t c, cudaStream_t s) {
    if (op != ncclSum) return ncclInvalidArgument;  // what the fake sums
    return queue(c, {Coll::kAllReduce, send, recv, count, type, 0, {}, {}}, s);
  }
  static ncclResult_t all_gather(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t c,
                                 cudaStream_t s) {
    return queue(c, {Coll::kAllGather, send, recv, count, type, 0, {}, {}}, s);
  }
  static ncclResult_t reduce_scatter(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                     ncclComm_t c, cudaStream_t s) {
    if (op != ncclSum) return ncclInvalidArgument;
    return queue(c, {Coll::kReduceScatter, send, recv, count, type, 0, {}, {}}, s);
  }
  static ncclResult_t broadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                ncclComm_t c, cudaStream_t s) {
    return queue(c, {Coll::kBroadcast, send, recv, count, type, root, {}, {}}, s);
  }
  static ncclResult_t reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                             ncclComm_t c, cudaStream_t s) {
    if (op != ncclSum) return ncclInvalidArgument;
    return queue(c, {Coll::kReduce, send, recv, count, type, root, {}, {}}, s);
  }

  // ncclGroupStart .. ncclGroupEnd gathers the point-to-point calls of this
  // thread into one step (as NCCL fuses them into one operation).
  struct Group {
    int depth = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    Call call;
  };
  static Group& group() {
    thread_local Group g;
    return g;
  }
  static ncclResult_t group_start() {
    if (group().depth++ == 0) group() = Group{1, nullptr, nullptr, Call{}};
    return ncclSuccess;
  }
  static ncclResult_t group_end() {
    Group& g = group();
    if (g.depth <= 0) return ncclInvalidUsage;
    if (--g.depth > 0 || !g.comm) return ncclSuccess;
    Call c = g.call;
    // Two point-to-point pairs or more to distinct peers: an alltoall; one: a sendrecv (the result is the same).
    c.coll = c.sends.size() > 1 ? Coll::kAllToAll : Coll::kSendRecv;
    return queue(g.comm, c, g.stream);
  }
  static ncclResult_t p2p(bool send, const void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t c,
                          cudaStream_t s) {
    Group& g = group();
    if (g.depth <= 0) return ncclInvalidUsage;  // the fake only runs them grouped
    if ((g.comm && g.comm != c) || count == 0) return ncclInvalidArgument;
    g.comm = c;
    g.stream = s;
    g.call.count = count;
    g.call.type = type;
    if (send) g.call.sends.emplace_back(peer, buf);
    else g.call.recvs.emplace_back(peer, const_cast<void*>(buf));
    return ncclSuccess;
  }
  static ncclResult_t send(const void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t c,
                           cudaStream_t s) {
    return p2p(true, buf, count, type, peer, c, s);
  }
  static ncclResult_t recv(void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t c, cudaStream_t s) {
    return p2p(false, buf, count, type, peer, c, s);
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
  lib_.ncclAllGather = A::all_gather;
  lib_.ncclReduceScatter = A::reduce_scatter;
  lib_.ncclBroadcast = A::broadcast;
  lib_.ncclReduce = A::reduce;
  lib_.ncclSend = A::send;
  lib_.ncclRecv = A::recv;
  lib_.ncclGroupStart = A::group_start;
  lib_.ncclGroupEnd = A::group_end;
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
