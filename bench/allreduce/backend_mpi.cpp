// The mpi backend: MPI_Allreduce on host buffers, whatever transport Open MPI
// picked (recorded from the components it loaded).
#include <cstdlib>
#include <vector>

#include "backend.h"
#include "data.h"
#include "mpi_util.h"

#include <unistd.h>  // environ (declared under _GNU_SOURCE, which g++ always defines)

namespace nodeprobe::allreduce {
namespace {

MPI_Datatype mpi_type(DType t) { return t == DType::kInt32 ? MPI_INT : MPI_FLOAT; }

MPI_Op mpi_op(RedOp op) {
  switch (op) {
    case RedOp::kProd: return MPI_PROD;
    case RedOp::kMin: return MPI_MIN;
    case RedOp::kMax: return MPI_MAX;
    default: return MPI_SUM;
  }
}

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendContext& ctx) : ctx_(ctx) {
    MPI_Comm_rank(ctx_.comm, &rank_);
    MPI_Comm_size(ctx_.comm, &nranks_);
  }

  void setup(std::size_t max_count) override {
    const std::size_t bytes = max_count * dtype_size(ctx_.plan->dtype);
    send_.assign(bytes, 0);
    recv_.assign(bytes, 0);
    transport_ = detect_mpi_transport(ctx_.single_host);
    // One warm call connects the peers before anything is timed.
    int one = 1, sum = 0;
    NP_CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ctx_.comm));
  }

  // nccl-tests' layout (coll_layout), except two MPI places: the in-place
  // reducescatter's result is the first block of recv_ (the MPI standard's),
  // and broadcast has no out-of-place form, so both placements run MPI_Bcast
  // on recv_ (the input written there, after the poison).
  void fill(std::size_t count, bool in_place, int rep) override {
    const CollData d = data(count);
    const CollLayout l = coll_layout(d, in_place);
    const bool in_result = l.input_in_result || d.coll == Coll::kBroadcast;
    fill_poison(recv_.data(), l.poison, d.type);
    fill_coll_input((in_result ? recv_.data() : send_.data()) + l.input_at * dtype_size(d.type), d, rep);
  }

  void launch(std::size_t count, bool in_place) override {
    const int n = static_cast<int>(count);
    const MPI_Datatype type = mpi_type(ctx_.plan->dtype);
    const MPI_Op op = mpi_op(ctx_.plan->op);
    void* send = in_place ? MPI_IN_PLACE : send_.data();
    void* recv = recv_.data();
    const int root = ctx_.plan->root;
    switch (ctx_.plan->coll) {
      case Coll::kAllReduce: NP_CHECK_MPI(MPI_Allreduce(send, recv, n, type, op, ctx_.comm)); break;
      case Coll::kAllGather: NP_CHECK_MPI(MPI_Allgather(send, n, type, recv, n, type, ctx_.comm)); break;
      case Coll::kReduceScatter: NP_CHECK_MPI(MPI_Reduce_scatter_block(send, recv, n, type, op, ctx_.comm)); break;
      case Coll::kBroadcast: NP_CHECK_MPI(MPI_Bcast(recv, n, type, root, ctx_.comm)); break;
      case Coll::kReduce:
        // In place, only the root passes MPI_IN_PLACE; the others send from their result buffer.
        if (in_place && rank_ != root) send = recv;
        NP_CHECK_MPI(MPI_Reduce(send, recv, n, type, op, root, ctx_.comm));
        break;
      case Coll::kAllToAll: NP_CHECK_MPI(MPI_Alltoall(send_.data(), n, type, recv, n, type, ctx_.comm)); break;
      case Coll::kSendRecv: {
        constexpr int kTag = 78;
        NP_CHECK_MPI(MPI_Sendrecv(send_.data(), n, type, (rank_ + 1) % nranks_, kTag, recv, n, type,
                                  (rank_ + nranks_ - 1) % nranks_, kTag, ctx_.comm, MPI_STATUS_IGNORE));
        break;
      }
    }
  }

  long check(std::size_t count, int rep) override { return count_coll_wrong(recv_.data(), data(count), rep); }

  void corrupt_one() override {
    if (!recv_.empty()) recv_[0] = static_cast<unsigned char>(recv_[0] ^ 0x5a);
  }

  std::string transport() const override { return transport_.summary; }

  bool has_pt2pt() const override { return true; }
  void send_to(int peer, std::size_t bytes, int window) override { post(peer, bytes, window, true); }
  void recv_from(int peer, std::size_t bytes, int window) override { post(peer, bytes, window, false); }

  Json details() const override {
    Json j;
    j["library"] = transport_.library;
    j["pml"] = transport_.pml;
    j["btl"] = transport_.btl;
    j["mtl"] = transport_.mtl;
    j["coll"] = transport_.coll;
    Json mca = Json::object();
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      if (kv.rfind("OMPI_MCA_", 0) == 0 && kv.find("SECRET") == std::string::npos) {
        const auto eq = kv.find('=');
        mca[kv.substr(9, eq - 9)] = kv.substr(eq + 1);
      }
    }
    j["mca"] = mca;
    return j;
  }

 private:
  // osu_bw style: a window of non-blocking operations, then wait for all.
  void post(int peer, std::size_t bytes, int window, bool send) {
    constexpr int kTag = 77;
    reqs_.assign(static_cast<std::size_t>(window), MPI_REQUEST_NULL);
    const int n = static_cast<int>(bytes);
    for (auto& r : reqs_) {
      if (send) NP_CHECK_MPI(MPI_Isend(send_.data(), n, MPI_BYTE, peer, kTag, ctx_.comm, &r));
      else NP_CHECK_MPI(MPI_Irecv(recv_.data(), n, MPI_BYTE, peer, kTag, ctx_.comm, &r));
    }
    NP_CHECK_MPI(MPI_Waitall(window, reqs_.data(), MPI_STATUSES_IGNORE));
  }

  CollData data(std::size_t count) const { return coll_data(ctx_, count); }

  BackendContext ctx_;
  int rank_ = 0, nranks_ = 1;
  std::vector<MPI_Request> reqs_;
  std::vector<unsigned char> send_, recv_;
  MpiTransport transport_;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(const BackendContext& ctx) {
  return std::make_unique<MpiBackend>(ctx);
}

CollData coll_data(const BackendContext& ctx, std::size_t count) {
  CollData d;
  d.coll = ctx.plan->coll;
  d.type = ctx.plan->dtype;
  d.op = ctx.plan->op;
  MPI_Comm_rank(ctx.comm, &d.rank);
  MPI_Comm_size(ctx.comm, &d.nranks);
  d.counts = coll_counts_of(d.coll, count, dtype_size(d.type), d.nranks);
  d.root = ctx.plan->root;
  return d;
}

std::unique_ptr<Backend> make_backend(const BackendContext& ctx, const Target& t) {
  if (t.backend == "mpi") return make_mpi_backend(ctx);
  if (t.backend == "fabric") return make_fabric_backend(ctx, t.provider);
  return make_nccl_backend(ctx, t.provider);
}

}  // namespace nodeprobe::allreduce
