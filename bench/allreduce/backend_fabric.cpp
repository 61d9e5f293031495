// The fabric backend: nodeprobe's own allreduce over libfabric RDM tagged
// messages, the algorithm chosen by size (recursive doubling for small
// messages (one-shot below that on a few ranks), Rabenseifner between, the
// pipelined ring for large ones; --algo, --oneshot-max, --rd-max, --ring-min). The same code runs on every provider, so tcp vs efa
// compares the fabrics, not two different algorithms.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backend.h"
#include "data.h"
#include "fabric_ep.h"
#include "fabric_ring.h"
#include "fabric_steps.h"
#include "mpi_util.h"

namespace nodeprobe::allreduce {
namespace {

Check efa_missing_check(const std::vector<std::string>& present) {
  std::string list;
  for (const auto& p : present) list += (list.empty() ? "" : ", ") + p;
  Check c;
  c.id = "fabric.efa";
  c.status = Status::kFail;
  c.observed = "libfabric has no efa provider here (present: " + (list.empty() ? "none" : list) + ")";
  c.expected = "fi_info -p efa lists the EFA device";
  c.fix = "Install the EFA driver and libfabric (aws-efa-installer), use an EFA-enabled instance "
          "type with EFA attached at launch, then check `fi_info -p efa`";
  c.finding = "efa.missing";
  return c;
}

class FabricBackend final : public Backend {
 public:
  FabricBackend(const BackendContext& ctx, std::string provider)
      : ctx_(ctx), provider_(std::move(provider)) {
    MPI_Comm_rank(ctx_.comm, &rank_);
    MPI_Comm_size(ctx_.comm, &nranks_);
  }

  void setup(std::size_t max_count) override {
    const std::size_t esize = dtype_size(ctx_.plan->dtype);
    run_agreed(ctx_.comm, [&] {
      const auto present = present_providers();
      const std::string core = provider_.substr(0, provider_.find(';'));  // "tcp;ofi_rxm" -> "tcp"
      const bool here = std::find(present.begin(), present.end(), core) != present.end();
      if (!here) {
        std::string list;
        for (const auto& p : present) list += (list.empty() ? "" : ", ") + p;
        if (!is_known_provider(core))
          throw InputError("unknown libfabric provider '" + provider_ + "' (present here: " + list + ")");
        if (core == "efa")
          throw BackendUnavailable("libfabric provider efa is not available (present: " + list + ")",
                                   efa_missing_check(present));
        throw BackendUnavailable("libfabric provider " + provider_ + " is not available here (present: " +
                                 list + ")");
      }
      if (provider_ == "shm" && !ctx_.single_host)
        throw BackendUnavailable("provider shm connects the ranks of one host only; this run spans hosts");
      ep_ = std::make_unique<FabricEndpoint>(resolve_provider(provider_, present), ctx_.iface);
    });
    run_agreed(ctx_.comm, [&] {
      ep_->connect(ctx_.comm);
      ring_ = std::make_unique<FabricRing>(*ep_, rank_, nranks_, ctx_.plan->dtype, ctx_.plan->op,
                                           ctx_.plan->chunk_bytes, static_cast<std::size_t>(ctx_.opt->window));
      steps_ = std::make_unique<FabricSteps>(*ep_, ctx_.plan->dtype, ctx_.plan->op, max_count, ctx_.plan->chunk_bytes,
                                             static_cast<std::size_t>(ctx_.opt->window),
                                             std::max(oneshot_scratch(max_count), twoshot_scratch(max_count)));
      send_.assign(std::max<std::size_t>(max_count * esize, 1), 0);
      recv_.assign(std::max<std::size_t>(max_count * esize, 1), 0);
      send_desc_ = ep_->register_memory(send_.data(), send_.size());
      recv_desc_ = ep_->register_memory(recv_.data(), recv_.size());
    });
    // Warm: connects the peers of every algorithm (tcp sets up connections lazily).
    const std::size_t warm = std::min<std::size_t>(max_count, 1024);
    for (const Algo a : {Algo::kRing, Algo::kOneShot, Algo::kRecursiveDoubling, Algo::kRabenseifner, Algo::kLinear,
                         Algo::kTwoShot}) {
      if (a == Algo::kOneShot && !warms_oneshot()) continue;
      if (a == Algo::kTwoShot && !runs_twoshot()) continue;
      if (a == Algo::kLinear && !runs_linear()) continue;
      fill_input(recv_.data(), warm, ctx_.plan->dtype, ctx_.plan->op, rank_, 0);
      run(a, warm);
    }
    if (ctx_.plan->coll != Coll::kAllReduce && max_count / static_cast<std::size_t>(nranks_) > 0)
      launch(std::min<std::size_t>(max_count / static_cast<std::size_t>(nranks_), 256), false);
  }

  std::string algorithm(std::size_t count) const override {
    const Coll c = ctx_.plan->coll;
    return c == Coll::kAllReduce ? to_string(pick(count)) : collective_algorithm(c, pieces(count), pick_coll(count));
  }

  // The collectives run in recv_ laid out as their result (coll_plan.h); the
  // input goes there too, except alltoall's and sendrecv's, sent from send_.
  // Out of place, launch() first copies the input from send_ (allreduce,
  // reducescatter, reduce, broadcast: all of it; allgather: the own block).
  // In place, allgather's input is the rank's block of recv_ and
  // reducescatter's result stays in the rank's block (as NCCL's).
  void fill(std::size_t count, bool in_place, int rep) override {
    const CollData d = coll_data(ctx_, count);
    const CollLayout l = coll_layout(d, in_place);
    fill_poison(recv_.data(), l.poison, d.type);
    fill_coll_input((l.input_in_result ? recv_.data() : send_.data()) + l.input_at * esize(), d, rep);
  }

  void launch(std::size_t count, bool in_place) override {
    const Coll c = ctx_.plan->coll;
    const CollCounts k = coll_counts_of(c, count, esize(), nranks_);
    const std::size_t own = static_cast<std::size_t>(rank_) * count * esize();
    if (c == Coll::kAllReduce) {
      if (!in_place) std::memcpy(recv_.data(), send_.data(), count * esize());
      run(pick(count), count);
      if (ctx_.plan->op == RedOp::kAvg) finish_avg(recv_.data(), count, ctx_.plan->dtype, nranks_);
      return;
    }
    if (c == Coll::kAllGather && !in_place) std::memcpy(recv_.data() + own, send_.data(), count * esize());
    if (c == Coll::kAllToAll) std::memcpy(recv_.data() + own, send_.data() + own, count * esize());
    if ((c == Coll::kReduceScatter || c == Coll::kReduce || c == Coll::kBroadcast) && !in_place)
      std::memcpy(recv_.data(), send_.data(), k.send * esize());
    if (c == Coll::kSendRecv && nranks_ == 1) std::memcpy(recv_.data(), send_.data(), count * esize());
    steps_->run(plan_collective(c, nranks_, rank_, ctx_.plan->root, count, pieces(count), pick_coll(count)),
                recv_.data(), recv_desc_, {}, send_.data(), send_desc_);
    if (ctx_.plan->op != RedOp::kAvg) return;
    if (c == Coll::kReduceScatter) finish_avg(recv_.data() + own, count, ctx_.plan->dtype, nranks_);
    if (c == Coll::kReduce && rank_ == ctx_.plan->root) finish_avg(recv_.data(), count, ctx_.plan->dtype, nranks_);
  }

  long check(std::size_t count, int rep) override {
    const CollData d = coll_data(ctx_, count);
    const std::size_t at = d.coll == Coll::kReduceScatter ? static_cast<std::size_t>(rank_) * count * esize() : 0;
    return count_coll_wrong(recv_.data() + at, d, rep);
  }

  void corrupt_one() override { recv_[0] = static_cast<unsigned char>(recv_[0] ^ 0x5a); }

  std::string transport() const override { return ep_ ? ep_->provider_name() : provider_; }

  bool has_pt2pt() const override { return true; }
  void send_to(int peer, std::size_t bytes, int window) override { post(peer, bytes, window, true); }
  void recv_from(int peer, std::size_t bytes, int window) override { post(peer, bytes, window, false); }

  Json details() const override {
    Json j = ep_ ? ep_->describe() : Json::object();
    j["max_chunk_bytes"] = ring_ ? ring_->max_chunk_elems() * dtype_size(ctx_.plan->dtype) : 0;
    j["window"] = ring_ ? ring_->window() : 0;
    j["algorithm"] = to_string(ctx_.plan->algo);
    j["algorithms"] = "oneshot: every rank sends its vector to every other and reduces all in rank order; "
                      "rd: recursive doubling; rabenseifner: recursive-halving reduce-scatter + recursive-doubling "
                      "allgather; ring: ring reduce-scatter + allgather, pipelined; allgather: rd (recursive "
                      "doubling) or ring; reducescatter: rh (recursive halving) or ring; linear: reduce to rank 0, "
                      "then rank 0 sends to all; twoshot (forced only): block p straight to rank p, reduced there in rank "
                      "order, then straight to all; rd and rabenseifner fold non-power-of-two ranks";
    j["oneshot_max_bytes"] = ctx_.plan->algo_sizes.oneshot_max;
    j["oneshot_max_ranks"] = kOneShotMaxRanks;
    j["rd_max_bytes"] = ctx_.plan->algo_sizes.rd_max;
    j["linear_max_bytes"] = ctx_.plan->algo_sizes.linear_max;
    j["linear_ranks"] = std::to_string(kLinearMinRanks) + "-" + std::to_string(kLinearMaxRanks);
    j["ring_min_bytes"] = ctx_.plan->algo_sizes.ring_min;
    j["chain_min_bytes"] = ctx_.plan->chain_min_bytes;
    return j;
  }

 private:
  // fi_pingpong / osu_bw style: a window of tagged messages, then wait for all.
  // One pair talks at a time (the sweep separates pairs and sizes by
  // barriers), so one tag keeps them apart from the collectives' tags.
  void post(int peer, std::size_t bytes, int window, bool send) {
    constexpr std::uint64_t kPt2ptTag = 1ull << 58;
    ops_.assign(static_cast<std::size_t>(window), FabricOp{});
    std::size_t posted = 0, done = 0;
    FabricOp* got[32];
    PollPacer pacer;
    while (done < ops_.size()) {
      bool progressed = false;
      while (posted < ops_.size()) {
        FabricOp& op = ops_[posted];
        const bool ok = send ? ep_->post_send(send_.data(), bytes, send_desc_, ep_->peer(peer), kPt2ptTag, &op)
                             : ep_->post_recv(recv_.data(), bytes, recv_desc_, kPt2ptTag, &op);
        if (!ok) break;
        ++posted;
        progressed = true;
      }
      const int n = ep_->poll(got, 32, pacer.block_ms());
      done += static_cast<std::size_t>(n);
      pacer.note(n > 0 || progressed);
    }
  }

  std::size_t esize() const { return dtype_size(ctx_.plan->dtype); }

  // Whether linear can run (forced, or auto on its rank counts): setup warms it then.
  bool runs_linear() const {
    return ctx_.plan->algo == Algo::kLinear ||
           (ctx_.plan->algo == Algo::kAuto && ctx_.plan->algo_sizes.linear_max > 0 && nranks_ >= kLinearMinRanks &&
            nranks_ <= kLinearMaxRanks);
  }

  // Whether the two-shot runs (forced only: auto never picks it): setup warms it and sizes its scratch then.
  bool runs_twoshot() const {
    return nranks_ > 1 && nranks_ <= kTwoShotTagRanks && ctx_.plan->algo == Algo::kTwoShot;
  }

  // Whether setup's warm-up runs the one-shot (auto and forced: where it can run).
  bool warms_oneshot() const {
    return nranks_ > 1 && nranks_ <= (ctx_.plan->algo == Algo::kOneShot ? kOneShotTagRanks : kOneShotMaxRanks);
  }

  // A one-shot receives every peer's vector at once: n-1 of the largest it
  // runs for (the warm-up's, whatever the collective; up to --oneshot-max
  // under auto; every size when forced).
  std::size_t oneshot_scratch(std::size_t max_count) const {
    if (!warms_oneshot()) return 0;
    std::size_t largest = std::min<std::size_t>(max_count, 1024);  // the warm-up's
    if (ctx_.plan->coll == Coll::kAllReduce && ctx_.plan->algo == Algo::kOneShot) largest = max_count;
    if (ctx_.plan->coll == Coll::kAllReduce && ctx_.plan->algo == Algo::kAuto)
      largest = std::max(largest, std::min(max_count, ctx_.plan->algo_sizes.oneshot_max / esize()));
    return (static_cast<std::size_t>(nranks_) - 1) * largest;
  }

  // The two-shot receives n-1 copies of its block (a block is at most
  // count/n + 1 elements): slightly more than the vector when n does not divide it.
  std::size_t twoshot_scratch(std::size_t max_count) const {
    if (!runs_twoshot()) return 0;
    const std::size_t n = static_cast<std::size_t>(nranks_);
    return (n - 1) * (max_count / n + 1);
  }

  // Broadcast and reduce pipeline along a chain from --chain-min.
  std::size_t pieces(std::size_t count) const {
    return chain_pieces(ctx_.plan->coll, count * esize(), count, ctx_.plan->chain_min_bytes);
  }

  // Allgather and reducescatter: recursive doubling / halving below --ring-min
  // (of the whole result / input, nccl-tests' size), the ring from it.
  Algo pick_coll(std::size_t count) const {
    return choose_collective_algo(ctx_.plan->coll, ctx_.plan->algo, count * esize() * static_cast<std::size_t>(nranks_),
                                  ctx_.plan->algo_sizes);
  }

  Algo pick(std::size_t count) const {
    return choose_algo(ctx_.plan->algo, count * dtype_size(ctx_.plan->dtype), nranks_, ctx_.plan->algo_sizes);
  }

  void run(Algo a, std::size_t count) {
    switch (a) {
      case Algo::kOneShot: steps_->run(plan_oneshot(nranks_, rank_, count), recv_.data(), recv_desc_); break;
      case Algo::kRecursiveDoubling:
        steps_->run(plan_recursive_doubling(nranks_, rank_, count), recv_.data(), recv_desc_);
        break;
      case Algo::kRabenseifner:
        steps_->run(plan_rabenseifner(nranks_, rank_, count), recv_.data(), recv_desc_);
        break;
      case Algo::kLinear: steps_->run(plan_linear(nranks_, rank_, count), recv_.data(), recv_desc_); break;
      case Algo::kTwoShot: steps_->run(plan_twoshot(nranks_, rank_, count), recv_.data(), recv_desc_); break;
      default: ring_->allreduce(recv_.data(), recv_desc_, count); break;
    }
  }

  BackendContext ctx_;
  std::string provider_;
  int rank_ = 0, nranks_ = 1;
  std::unique_ptr<FabricEndpoint> ep_;
  std::unique_ptr<FabricRing> ring_;  // after ep_: destroyed first
  std::unique_ptr<FabricSteps> steps_;
  std::vector<FabricOp> ops_;
  std::vector<unsigned char> send_, recv_;
  void* send_desc_ = nullptr;
  void* recv_desc_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_fabric_backend(const BackendContext& ctx, const std::string& provider) {
  return std::make_unique<FabricBackend>(ctx, provider);
}

}  // namespace nodeprobe::allreduce
