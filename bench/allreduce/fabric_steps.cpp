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
                         std::size_t max_piece_bytes, std::size_t window)
    : ep_(ep), dtype_(dtype), op_(op) {
  const std::size_t esize = dtype_size(dtype_);
  piece_elems_ = std::max<std::size_t>(1, max_piece_bytes / esize);
  if (ep_.max_msg_size() > 0) piece_elems_ = std::max<std::size_t>(1, std::min(piece_elems_, ep_.max_msg_size() / esize));
  window_ = window;
  if (ep_.tx_depth() > 0) window_ = std::min(window_, ep_.tx_depth());
  if (ep_.rx_depth() > 0) window_ = std::min(window_, ep_.rx_depth());
  window_ = std::max<std::size_t>(window_, 1);
  scratch_.assign(std::max<std::size_t>(max_count, 1) * esize, 0);
  scratch_desc_ = ep_.register_memory(scratch_.data(), scratch_.size());
}

std::uint64_t FabricSteps::tag(int step_tag, std::size_t piece) const {
  return kStepsTagBit | (static_cast<std::uint64_t>(seq_ & 0xffffu) << 40) |
         (static_cast<std::uint64_t>(step_tag & 0xfffff) << 20) | static_cast<std::uint64_t>(piece & 0xfffff);
}

void FabricSteps::run(const std::vector<XferStep>& steps, unsigned char* data, void* desc,
                      const std::function<bool()>& stop, const unsigned char* input, void* input_desc) {
  ++seq_;
  const std::size_t esize = dtype_size(dtype_);
  const RedOp reduce_op = op_ == RedOp::kAvg ? RedOp::kSum : op_;
  FabricOp* done[32];
  unsigned loops = 0;
  for (const XferStep& s : steps) {
    const std::size_t send_pieces = s.send_peer >= 0 ? (s.send_count + piece_elems_ - 1) / piece_elems_ : 0;
    const std::size_t recv_pieces = s.recv_peer >= 0 ? (s.recv_count + piece_elems_ - 1) / piece_elems_ : 0;
    ops_.assign(send_pieces + recv_pieces, FabricOp{});
    const fi_addr_t dest = s.send_peer >= 0 ? ep_.peer(s.send_peer) : FI_ADDR_UNSPEC;
    const unsigned char* send_base = s.send_from_input ? input : data;
    void* send_desc = s.send_from_input ? input_desc : desc;
    unsigned char* recv_base = s.reduce ? scratch_.data() : data + s.recv_offset * esize;
    void* recv_desc = s.reduce ? scratch_desc_ : desc;
    std::size_t next_send = 0, next_recv = 0, sends_left = send_pieces, recvs_left = recv_pieces;
    std::size_t send_inflight = 0, recv_inflight = 0;
    // Recursive doubling sends the elements it receives into: what arrives
    // is reduced only once every send of the step has left the buffer.
    const bool overlap = s.reduce && s.send_peer >= 0 && s.send_offset < s.recv_offset + s.recv_count &&
                         s.recv_offset < s.send_offset + s.send_count;
    std::vector<std::size_t>& deferred = deferred_;
    deferred.clear();
    auto reduce_piece = [&](std::size_t piece) {
      const std::size_t first = piece * piece_elems_;
      const std::size_t n = std::min(piece_elems_, s.recv_count - first);
      reduce_into(data + (s.recv_offset + first) * esize, scratch_.data() + first * esize, n, dtype_, reduce_op);
    };
    PollPacer pacer;
    while (sends_left > 0 || recvs_left > 0) {
      bool progressed = false;
      while (next_recv < recv_pieces && recv_inflight < window_) {
        const std::size_t first = next_recv * piece_elems_;
        const std::size_t n = std::min(piece_elems_, s.recv_count - first);
        FabricOp& op = ops_[send_pieces + next_recv];
        op.kind = 1;
        op.unit = next_recv;
        if (!ep_.post_recv(recv_base + first * esize, n * esize, recv_desc, tag(s.tag, next_recv), &op)) break;
        ++recv_inflight;
        ++next_recv;
        progressed = true;
      }
      while (next_send < send_pieces && send_inflight < window_) {
        const std::size_t first = next_send * piece_elems_;
        const std::size_t n = std::min(piece_elems_, s.send_count - first);
        const unsigned char* src = send_base + (s.send_offset + first) * esize;
        if (n * esize <= ep_.inject_size()) {
          // The provider copies it: done once accepted (and reducing into it later is safe).
          if (!ep_.inject(src, n * esize, dest, tag(s.tag, next_send))) break;
          --sends_left;
          ++next_send;
          progressed = true;
          continue;
        }
        FabricOp& op = ops_[next_send];
        op.kind = 0;
        op.unit = next_send;
        if (!ep_.post_send(src, n * esize, send_desc, dest, tag(s.tag, next_send), &op)) break;
        ++send_inflight;
        ++next_send;
        progressed = true;
      }
      const int got = ep_.poll(done, 32, pacer.block_ms());
      for (int i = 0; i < got; ++i) {
        FabricOp* op = done[i];
        if (op->kind == 0) {
          --send_inflight;
          --sends_left;
          continue;
        }
        if (s.reduce) {
          // Reduced as each piece lands (overlapping the next pieces' transfer) when no send reads it.
          if (overlap) deferred.push_back(op->unit);
          else reduce_piece(op->unit);
        }
        --recv_inflight;
        --recvs_left;
      }
      pacer.note(got > 0 || progressed);
      if (stop && (++loops & 63) == 0 && stop()) throw RingStopped("allreduce abandoned before it finished");
    }
    for (const std::size_t piece : deferred) reduce_piece(piece);
  }
}

}  // namespace nodeprobe::allreduce
