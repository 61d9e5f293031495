#include "fabric_ring.h"

#include <algorithm>

#include "data.h"

namespace nodeprobe::allreduce {
namespace {

constexpr std::size_t kMinChunkBytes = 64 * 1024;

}  // namespace

FabricRing::FabricRing(FabricEndpoint& ep, int rank, int nranks, DType dtype, RedOp op, std::size_t max_chunk_bytes,
                       std::size_t window)
    : ep_(ep), rank_(rank), nranks_(nranks), dtype_(dtype), op_(op) {
  const std::size_t esize = dtype_size(dtype_);
  chunk_elems_ = std::max<std::size_t>(1, max_chunk_bytes / esize);
  if (ep_.max_msg_size() > 0) chunk_elems_ = std::max<std::size_t>(1, std::min(chunk_elems_, ep_.max_msg_size() / esize));
  window_ = window;
  if (ep_.tx_depth() > 0) window_ = std::min(window_, ep_.tx_depth());
  if (ep_.rx_depth() > 0) window_ = std::min(window_, ep_.rx_depth());
  window_ = std::max<std::size_t>(window_, 1);
  scratch_.assign(window_ * chunk_elems_ * esize, 0);
  scratch_desc_ = ep_.register_memory(scratch_.data(), scratch_.size());
}

// A quarter of a segment, between 64 KiB and the largest chunk: large messages
// move in few, large messages (fewer rendezvous round trips), small ones still pipeline.
std::size_t FabricRing::chunk_for(std::size_t count) const {
  const std::size_t esize = dtype_size(dtype_);
  const std::size_t seg = segment_count(count, nranks_, 0);
  const std::size_t floor_elems = std::max<std::size_t>(1, kMinChunkBytes / esize);
  return std::min(chunk_elems_, std::max(floor_elems, (seg + 3) / 4));
}

std::uint64_t FabricRing::tag(std::size_t unit) const {
  return (static_cast<std::uint64_t>(seq_ & 0xffffu) << 40) | static_cast<std::uint64_t>(unit);
}

void FabricRing::allreduce(unsigned char* data, void* desc, std::size_t count, const std::function<bool()>& stop) {
  ++seq_;
  if (nranks_ <= 1 || count == 0) return;
  if (plan_count_ != count || plan_.send.empty()) {
    plan_ = plan_ring(nranks_, rank_, count, chunk_for(count));
    plan_count_ = count;
  }
  const std::size_t units = plan_.send.size();
  const std::size_t esize = dtype_size(dtype_);
  sends_.assign(units, FabricOp{});
  recvs_.assign(units, FabricOp{});
  recv_done_.assign(units, 0);
  std::vector<int> free_slots;
  for (std::size_t s = 0; s < window_; ++s) free_slots.push_back(static_cast<int>(s));
  const fi_addr_t next = ep_.peer(plan_.next());
  std::size_t next_recv = 0, next_send = 0, recvs_left = units, sends_left = units;
  std::size_t recv_inflight = 0, send_inflight = 0;
  PollPacer pacer;
  unsigned loops = 0;
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
      void* d;
      if (u.reduce) {
        if (free_slots.empty()) break;
        op.slot = free_slots.back();
        buf = scratch_.data() + static_cast<std::size_t>(op.slot) * chunk_elems_ * esize;
        d = scratch_desc_;
      } else {
        op.slot = -1;
        buf = data + u.offset * esize;
        d = desc;
      }
      if (!ep_.post_recv(buf, u.count * esize, d, tag(next_recv), &op)) break;
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
      if (!ep_.post_send(data + u.offset * esize, u.count * esize, desc, next, tag(next_send), &op)) break;
      ++send_inflight;
      ++next_send;
      progressed = true;
    }
    const int n = ep_.poll(done, 32, pacer.block_ms());
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
        reduce_into(data + u.offset * esize, src, u.count, dtype_, op_ == RedOp::kAvg ? RedOp::kSum : op_);
        free_slots.push_back(op->slot);
      }
      recv_done_[op->unit] = 1;
      --recv_inflight;
      --recvs_left;
    }
    // Ranks may share cores (oversubscribed runs, CPU-bound tcp): idle ones yield.
    pacer.note(n > 0 || progressed);
    // Asked now and then, also while data flows: a slow link must not outlive a deadline either.
    if (stop && (++loops & 63) == 0 && stop()) throw RingStopped("ring allreduce abandoned before it finished");
  }
}

}  // namespace nodeprobe::allreduce
