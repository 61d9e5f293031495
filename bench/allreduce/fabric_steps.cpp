#include "fabric_steps.h"

#include <algorithm>

#include "data.h"
#include "fabric_ring.h"

namespace nodeprobe::allreduce {
namespace {

// Bit 57 keeps these tags apart from FabricRing's (sequence << 40 | unit).
constexpr std::uint64_t kStepsTagBit = 1ull << 57;

}  // namespace

FabricSteps::FabricSteps(FabricEndpoint& ep, DType dtype, RedOp op, std::size_t max_count,
                         std::size_t max_piece_bytes, std::size_t window, std::size_t scratch_count)
    : ep_(ep), dtype_(dtype), op_(op) {
  const std::size_t esize = dtype_size(dtype_);
  piece_elems_ = std::max<std::size_t>(1, max_piece_bytes / esize);
  if (ep_.max_msg_size() > 0) piece_elems_ = std::max<std::size_t>(1, std::min(piece_elems_, ep_.max_msg_size() / esize));
  window_ = window;
  if (ep_.tx_depth() > 0) window_ = std::min(window_, ep_.tx_depth());
  if (ep_.rx_depth() > 0) window_ = std::min(window_, ep_.rx_depth());
  window_ = std::max<std::size_t>(window_, 1);
  scratch_.assign(std::max<std::size_t>({max_count, scratch_count, 1}) * esize, 0);
  scratch_desc_ = ep_.register_memory(scratch_.data(), scratch_.size());
}

std::uint64_t FabricSteps::tag(int step_tag, std::size_t piece) const {
  return kStepsTagBit | (static_cast<std::uint64_t>(seq_ & 0xffffu) << 40) |
         (static_cast<std::uint64_t>(step_tag & 0xfffff) << 20) | static_cast<std::uint64_t>(piece & 0xfffff);
}

void FabricSteps::run(const std::vector<XferStep>& steps, unsigned char* data, void* desc,
                      const std::function<bool()>& stop, const unsigned char* input, void* input_desc) {
  ++seq_;
  for (std::size_t first = 0; first < steps.size();) {
    std::size_t last = first;
    while (last + 1 < steps.size() && steps[last].with_next) ++last;
    run_group(steps.data() + first, last - first + 1, data, desc, stop, input, input_desc);
    first = last + 1;
  }
}

void FabricSteps::run_group(const XferStep* group, std::size_t nsteps, unsigned char* data, void* desc,
                            const std::function<bool()>& stop, const unsigned char* input, void* input_desc) {
  const std::size_t esize = dtype_size(dtype_);
  const RedOp reduce_op = op_ == RedOp::kAvg ? RedOp::kSum : op_;
  // A group's reducing receives each take their own part of the scratch
  // buffer and are reduced in order once all have arrived; a step alone
  // reduces each piece as it lands.
  const bool ordered = nsteps > 1;
  progress_.assign(nsteps, {});
  std::size_t nops = 0, scratch_at = 0;
  for (std::size_t k = 0; k < nsteps; ++k) {
    const XferStep& s = group[k];
    Progress& p = progress_[k];
    p.send_pieces = s.send_peer >= 0 ? (s.send_count + piece_elems_ - 1) / piece_elems_ : 0;
    p.recv_pieces = s.recv_peer >= 0 ? (s.recv_count + piece_elems_ - 1) / piece_elems_ : 0;
    p.sends_left = p.send_pieces;
    p.recvs_left = p.recv_pieces;
    p.ops_at = nops;
    nops += p.send_pieces + p.recv_pieces;
    p.recv_base = s.reduce ? scratch_.data() + scratch_at * esize : data + s.recv_offset * esize;
    p.recv_desc = s.reduce ? scratch_desc_ : desc;
    if (s.reduce && ordered) scratch_at += s.recv_count;
    if (scratch_at * esize > scratch_.size())
      throw_api_error("libfabric", -FI_ENOMEM, "FI_ENOMEM", "a step group receives more than the scratch buffer holds",
                      "FabricSteps::run", __FILE__, __LINE__);
    // Recursive doubling sends the elements it receives into: what arrives
    // is reduced only once every send of the step has left the buffer.
    p.overlap = s.reduce && s.send_peer >= 0 && s.send_offset < s.recv_offset + s.recv_count &&
                s.recv_offset < s.send_offset + s.send_count;
  }
  ops_.assign(nops, FabricOp{});
  deferred_.clear();
  auto reduce_piece = [&](std::size_t k, std::size_t piece) {
    const XferStep& s = group[k];
    const std::size_t first = piece * piece_elems_;
    const std::size_t n = std::min(piece_elems_, s.recv_count - first);
    reduce_into(data + (s.recv_offset + first) * esize, progress_[k].recv_base + first * esize, n, dtype_, reduce_op);
  };
  auto unfinished = [&] {
    for (const Progress& p : progress_)
      if (p.sends_left > 0 || p.recvs_left > 0) return true;
    return false;
  };
  FabricOp* done[32];
  unsigned loops = 0;
  PollPacer pacer;
  while (unfinished()) {
    bool progressed = false;
    for (std::size_t k = 0; k < nsteps; ++k) {
      const XferStep& s = group[k];
      Progress& p = progress_[k];
      while (p.next_recv < p.recv_pieces && p.recv_inflight < window_) {
        const std::size_t first = p.next_recv * piece_elems_;
        const std::size_t n = std::min(piece_elems_, s.recv_count - first);
        FabricOp& op = ops_[p.ops_at + p.send_pieces + p.next_recv];
        op.kind = 1;
        op.unit = p.next_recv;
        op.slot = static_cast<int>(k);
        if (!ep_.post_recv(p.recv_base + first * esize, n * esize, p.recv_desc, tag(s.tag, p.next_recv), &op)) break;
        ++p.recv_inflight;
        ++p.next_recv;
        progressed = true;
      }
    }
    for (std::size_t k = 0; k < nsteps; ++k) {
      const XferStep& s = group[k];
      Progress& p = progress_[k];
      const fi_addr_t dest = s.send_peer >= 0 ? ep_.peer(s.send_peer) : FI_ADDR_UNSPEC;
      const unsigned char* send_base = s.send_from_input ? input : data;
      void* send_desc = s.send_from_input ? input_desc : desc;
      while (p.next_send < p.send_pieces && p.send_inflight < window_) {
        const std::size_t first = p.next_send * piece_elems_;
        const std::size_t n = std::min(piece_elems_, s.send_count - first);
        const unsigned char* src = send_base + (s.send_offset + first) * esize;
        if (n * esize <= ep_.inject_size()) {
          // The provider copies it: done once accepted (and reducing into it later is safe).
          if (!ep_.inject(src, n * esize, dest, tag(s.tag, p.next_send))) break;
          --p.sends_left;
          ++p.next_send;
          progressed = true;
          continue;
        }
        FabricOp& op = ops_[p.ops_at + p.next_send];
        op.kind = 0;
        op.unit = p.next_send;
        op.slot = static_cast<int>(k);
        if (!ep_.post_send(src, n * esize, send_desc, dest, tag(s.tag, p.next_send), &op)) break;
        ++p.send_inflight;
        ++p.next_send;
        progressed = true;
      }
    }
    const int got = ep_.poll(done, 32, pacer.block_ms());
    for (int i = 0; i < got; ++i) {
      FabricOp* op = done[i];
      const std::size_t k = static_cast<std::size_t>(op->slot);
      Progress& p = progress_[k];
      if (op->kind == 0) {
        --p.send_inflight;
        --p.sends_left;
        continue;
      }
      if (group[k].reduce && !ordered) {
        // Reduced as each piece lands (overlapping the next pieces' transfer) when no send reads it.
        if (p.overlap) deferred_.push_back(op->unit);
        else reduce_piece(k, op->unit);
      }
      --p.recv_inflight;
      --p.recvs_left;
    }
    pacer.note(got > 0 || progressed);
    if (stop && (++loops & 63) == 0 && stop()) throw RingStopped("allreduce abandoned before it finished");
  }
  if (!ordered) {
    for (const std::size_t piece : deferred_) reduce_piece(0, piece);
    return;
  }
  parts_.clear();
  std::size_t own_at = 0, count = 0, offset = 0;
  for (std::size_t k = 0; k < nsteps; ++k) {
    if (!group[k].reduce || group[k].recv_peer < 0) continue;
    parts_.push_back(progress_[k].recv_base);
    if (group[k].reduce_before_own) own_at = parts_.size();
    count = group[k].recv_count;
    offset = group[k].recv_offset;
  }
  reduce_ordered(data + offset * esize, parts_.data(), parts_.size(), own_at, count, dtype_, reduce_op);
}

}  // namespace nodeprobe::allreduce
