// The mpi backend: MPI_Allreduce on host buffers, whatever transport Open MPI
// picked (recorded from the components it loaded).
#include <cstdlib>
#include <vector>

#include "backend.h"
#include "data.h"
#include "mpi_util.h"

extern char** environ;

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

  void fill(std::size_t count, bool in_place, int rep) override {
    auto& dst = in_place ? recv_ : send_;
    fill_input(dst.data(), count, ctx_.plan->dtype, ctx_.plan->op, rank_, rep);
    if (!in_place) fill_poison(recv_.data(), count, ctx_.plan->dtype);
  }

  void launch(std::size_t count, bool in_place) override {
    const int n = static_cast<int>(count);
    NP_CHECK_MPI(MPI_Allreduce(in_place ? MPI_IN_PLACE : send_.data(), recv_.data(), n,
                               mpi_type(ctx_.plan->dtype), mpi_op(ctx_.plan->op), ctx_.comm));
  }

  long check(std::size_t count, int rep) override {
    int n = 0;
    MPI_Comm_size(ctx_.comm, &n);
    return count_wrong(recv_.data(), count, ctx_.plan->dtype, ctx_.plan->op, n, rep);
  }

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

  BackendContext ctx_;
  int rank_ = 0;
  std::vector<MPI_Request> reqs_;
  std::vector<unsigned char> send_, recv_;
  MpiTransport transport_;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(const BackendContext& ctx) {
  return std::make_unique<MpiBackend>(ctx);
}

std::unique_ptr<Backend> make_backend(const BackendContext& ctx, const Target& t) {
  if (t.backend == "mpi") return make_mpi_backend(ctx);
  if (t.backend == "fabric") return make_fabric_backend(ctx, t.provider);
  return make_nccl_backend(ctx, t.provider);
}

}  // namespace nodeprobe::allreduce
