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
  BackendContext ctx_;
  int rank_ = 0;
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
