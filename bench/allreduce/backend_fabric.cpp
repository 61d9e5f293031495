// The fabric backend: nodeprobe's own ring allreduce (reduce-scatter then
// allgather, pipelined in chunks) over libfabric RDM tagged messages. The same
// code runs on every provider, so tcp vs efa compares the fabrics, not two
// different algorithms.
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backend.h"
#include "data.h"
#include "fabric_ep.h"
#include "mpi_util.h"
#include "ring.h"

namespace nodeprobe::allreduce {
namespace {

constexpr int kSpinsBeforeBlock = 200;
constexpr std::size_t kMinChunkBytes = 64 * 1024;

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
      ep_ = std::make_unique<FabricEndpoint>(provider_, ctx_.iface);
    });
    run_agreed(ctx_.comm, [&] {
      ep_->connect(ctx_.comm);
      chunk_elems_ = std::max<std::size_t>(1, ctx_.plan->chunk_bytes / esize);
      if (ep_->max_msg_size() > 0)
        chunk_elems_ = std::max<std::size_t>(1, std::min(chunk_elems_, ep_->max_msg_size() / esize));
      window_ = static_cast<std::size_t>(ctx_.opt->window);
      if (ep_->tx_depth() > 0) window_ = std::min(window_, ep_->tx_depth());
      if (ep_->rx_depth() > 0) window_ = std::min(window_, ep_->rx_depth());
      window_ = std::max<std::size_t>(window_, 1);
      send_.assign(std::max<std::size_t>(max_count * esize, 1), 0);
      recv_.assign(std::max<std::size_t>(max_count * esize, 1), 0);
      scratch_.assign(window_ * chunk_elems_ * esize, 0);
      send_desc_ = ep_->register_memory(send_.data(), send_.size());
      recv_desc_ = ep_->register_memory(recv_.data(), recv_.size());
      scratch_desc_ = ep_->register_memory(scratch_.data(), scratch_.size());
    });
    // Warm: connects the ring neighbours (tcp sets up connections lazily).
    fill_input(recv_.data(), std::min<std::size_t>(max_count, 1024), ctx_.plan->dtype, ctx_.plan->op, rank_, 0);
    launch(std::min<std::size_t>(max_count, 1024), true);
  }

  void fill(std::size_t count, bool in_place, int rep) override {
    auto& dst = in_place ? recv_ : send_;
    fill_input(dst.data(), count, ctx_.plan->dtype, ctx_.plan->op, rank_, rep);
    if (!in_place) fill_poison(recv_.data(), count, ctx_.plan->dtype);
  }

  void launch(std::size_t count, bool in_place) override {
    const std::size_t esize = dtype_size(ctx_.plan->dtype);
    if (!in_place) std::memcpy(recv_.data(), send_.data(), count * esize);
    ring_allreduce(count);
    if (ctx_.plan->op == RedOp::kAvg) finish_avg(recv_.data(), count, ctx_.plan->dtype, nranks_);
  }

  long check(std::size_t count, int rep) override {
    return count_wrong(recv_.data(), count, ctx_.plan->dtype, ctx_.plan->op, nranks_, rep);
  }

  void corrupt_one() override { recv_[0] = static_cast<unsigned char>(recv_[0] ^ 0x5a); }

  std::string transport() const override { return ep_ ? ep_->provider_name() : provider_; }

  Json details() const override {
    Json j = ep_ ? ep_->describe() : Json::object();
    j["max_chunk_bytes"] = chunk_elems_ * dtype_size(ctx_.plan->dtype);
    j["window"] = window_;
    j["algorithm"] = "ring reduce-scatter + allgather, pipelined";
    return j;
  }

 private:
  // A quarter of a segment, between 64 KiB and --chunk: large messages move in
  // few, large messages (fewer rendezvous round trips), small ones still pipeline.
  std::size_t chunk_for(std::size_t count) const {
    const std::size_t esize = dtype_size(ctx_.plan->dtype);
    const std::size_t seg = segment_count(count, nranks_, 0);
    const std::size_t floor_elems = std::max<std::size_t>(1, kMinChunkBytes / esize);
    return std::min(chunk_elems_, std::max(floor_elems, (seg + 3) / 4));
  }

  std::uint64_t tag(std::size_t unit) const {
    return (static_cast<std::uint64_t>(seq_ & 0xffffu) << 40) | static_cast<std::uint64_t>(unit);
  }

  void ring_allreduce(std::size_t count) {
    ++seq_;
    if (nranks_ <= 1 || count == 0) return;
    if (plan_count_ != count || plan_.send.empty()) {
      plan_ = plan_ring(nranks_, rank_, count, chunk_for(count));
      plan_count_ = count;
    }
    const std::size_t units = plan_.send.size();
    const std::size_t esize = dtype_size(ctx_.plan->dtype);
    unsigned char* data = recv_.data();
    sends_.assign(units, FabricOp{});
    recvs_.assign(units, FabricOp{});
    recv_done_.assign(units, 0);
    std::vector<int> free_slots;
    for (std::size_t s = 0; s < window_; ++s) free_slots.push_back(static_cast<int>(s));
    const fi_addr_t next = ep_->peer(plan_.next());
    std::size_t next_recv = 0, next_send = 0, recvs_left = units, sends_left = units;
    std::size_t recv_inflight = 0, send_inflight = 0;
    int idle = 0;
    FabricOp* done[32];
    while (recvs_left > 0 || sends_left > 0) {
      bool progressed = false;
      while (next_recv < units && recv_inflight < window_) {
        const RingUnit& u = plan_.recv[next_recv];
        if (u.count == 0) {
          recv_done_[next_recv] = 1;
          --recvs_left;
          ++next_recv;
          continue;
        }
        FabricOp& op = recvs_[next_recv];
        op.kind = 1;
        op.unit = next_recv;
        void* buf;
        void* desc;
        if (u.reduce) {
          if (free_slots.empty()) break;
          op.slot = free_slots.back();
          buf = scratch_.data() + static_cast<std::size_t>(op.slot) * chunk_elems_ * esize;
          desc = scratch_desc_;
        } else {
          op.slot = -1;
          buf = data + u.offset * esize;
          desc = recv_desc_;
        }
        if (!ep_->post_recv(buf, u.count * esize, desc, tag(next_recv), &op)) break;
        if (op.slot >= 0) free_slots.pop_back();
        ++recv_inflight;
        ++next_recv;
        progressed = true;
      }
      while (next_send < units && send_inflight < window_) {
        const RingUnit& u = plan_.send[next_send];
        const long dep = plan_.depends_on(next_send);
        if (dep >= 0 && !recv_done_[static_cast<std::size_t>(dep)]) break;
        if (u.count == 0) {
          --sends_left;
          ++next_send;
          continue;
        }
        FabricOp& op = sends_[next_send];
        op.kind = 0;
        op.unit = next_send;
        if (!ep_->post_send(data + u.offset * esize, u.count * esize, recv_desc_, next, tag(next_send), &op))
          break;
        ++send_inflight;
        ++next_send;
        progressed = true;
      }
      const int n = ep_->poll(done, 32, idle > kSpinsBeforeBlock ? 1 : 0);
      for (int i = 0; i < n; ++i) {
        FabricOp* op = done[i];
        if (op->kind == 0) {
          --send_inflight;
          --sends_left;
          continue;
        }
        const RingUnit& u = plan_.recv[op->unit];
        if (u.reduce) {
          const unsigned char* src = scratch_.data() + static_cast<std::size_t>(op->slot) * chunk_elems_ * esize;
          reduce_into(data + u.offset * esize, src, u.count, ctx_.plan->dtype,
                      ctx_.plan->op == RedOp::kAvg ? RedOp::kSum : ctx_.plan->op);
          free_slots.push_back(op->slot);
        }
        recv_done_[op->unit] = 1;
        --recv_inflight;
        --recvs_left;
      }
      if (n > 0 || progressed) {
        idle = 0;
      } else if (++idle > kSpinsBeforeBlock / 2) {
        // Ranks may share cores (oversubscribed runs, CPU-bound tcp): let the peer run.
        sched_yield();
      }
    }
  }

  BackendContext ctx_;
  std::string provider_;
  int rank_ = 0, nranks_ = 1;
  std::unique_ptr<FabricEndpoint> ep_;
  std::vector<unsigned char> send_, recv_, scratch_;
  void* send_desc_ = nullptr;
  void* recv_desc_ = nullptr;
  void* scratch_desc_ = nullptr;
  std::size_t chunk_elems_ = 1, window_ = 1;
  RingPlan plan_;
  std::size_t plan_count_ = 0;
  std::uint64_t seq_ = 0;
  std::vector<FabricOp> sends_, recvs_;
  std::vector<char> recv_done_;
};

}  // namespace

std::unique_ptr<Backend> make_fabric_backend(const BackendContext& ctx, const std::string& provider) {
  return std::make_unique<FabricBackend>(ctx, provider);
}

}  // namespace nodeprobe::allreduce
