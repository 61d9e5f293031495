#pragma once
/// Runs a schedule of exchanges (coll_plan.h) over one libfabric endpoint:
/// each step (or group of steps marked with_next, all at once) posts its
/// receive and its send (in pieces of at most the provider's message size, a
/// window of them in flight), waits for both and reduces what arrived. The fabric backend's recursive doubling and
/// Rabenseifner allreduce; the ring stays in FabricRing (pipelined across steps).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ar_types.h"
#include "coll_plan.h"
#include "fabric_ep.h"

namespace nodeprobe::allreduce {

class FabricSteps {
 public:
  /// Pieces of at most `max_piece_bytes` (and the provider's limit), `window`
  /// in flight per direction; a scratch buffer of `max_count` elements (or
  /// `scratch_count`, when larger: a one-shot group receives n-1 vectors)
  /// registered with `ep` takes what a reducing step receives.
  FabricSteps(FabricEndpoint& ep, DType dtype, RedOp op, std::size_t max_count, std::size_t max_piece_bytes,
              std::size_t window, std::size_t scratch_count = 0);

  /// Runs `steps` on `data` (registered as `desc`); steps marked
  /// send_from_input send from `input` (registered as `input_desc`). `stop`
  /// as FabricRing's; throws RingStopped. avg is summed; the caller divides.
  void run(const std::vector<XferStep>& steps, unsigned char* data, void* desc,
           const std::function<bool()>& stop = {}, const unsigned char* input = nullptr,
           void* input_desc = nullptr);

 private:
  /// Where one step of the running group stands.
  struct Progress {
    std::size_t send_pieces = 0, recv_pieces = 0, next_send = 0, next_recv = 0;
    std::size_t sends_left = 0, recvs_left = 0, send_inflight = 0, recv_inflight = 0;
    std::size_t ops_at = 0;  ///< its sends' FabricOps, then its receives'
    unsigned char* recv_base = nullptr;
    void* recv_desc = nullptr;
    bool overlap = false;
  };
  std::uint64_t tag(int step_tag, std::size_t piece) const;
  // Steps marked with_next, and the one after the last of them, run as one group.
  void run_group(const XferStep* group, std::size_t nsteps, unsigned char* data, void* desc,
                 const std::function<bool()>& stop, const unsigned char* input, void* input_desc);

  FabricEndpoint& ep_;
  DType dtype_;
  RedOp op_;
  std::size_t piece_elems_ = 1, window_ = 1;
  std::vector<unsigned char> scratch_;
  void* scratch_desc_ = nullptr;
  std::uint64_t seq_ = 0;
  std::vector<FabricOp> ops_;
  std::vector<std::size_t> deferred_;
  std::vector<void*> parts_;
  std::vector<Progress> progress_;
};

}  // namespace nodeprobe::allreduce
