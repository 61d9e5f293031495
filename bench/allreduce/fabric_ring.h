#pragma once
/// The pipelined ring allreduce over one libfabric endpoint, apart from how
/// the ranks found each other: the fabric backend connects them through MPI,
/// nodeprobe-fleet through its own coordinator (so that a stopped peer ends a
/// measurement at a deadline instead of hanging a collective).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "ar_types.h"
#include "fabric_ep.h"
#include "ring.h"

namespace nodeprobe::allreduce {

/// Thrown by FabricRing::allreduce when its `stop` callback said so.
class RingStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FabricRing {
 public:
  /// A ring of `nranks` over `ep` (peers already inserted: rank r is ep.peer(r)),
  /// chunks of at most `max_chunk_bytes` (also bounded by the provider's
  /// message size), `window` chunks in flight per direction (bounded by the
  /// provider's queue depths). Registers its scratch buffer with `ep`.
  FabricRing(FabricEndpoint& ep, int rank, int nranks, DType dtype, RedOp op, std::size_t max_chunk_bytes,
             std::size_t window);

  /// One in-place allreduce of `count` elements of `data` (registered as
  /// `desc`; nullptr when the provider needs no registration). `stop` is polled
  /// while waiting; when it returns true the operation is abandoned with
  /// RingStopped (the endpoint must then be closed, not reused). avg is summed;
  /// the caller divides.
  void allreduce(unsigned char* data, void* desc, std::size_t count, const std::function<bool()>& stop = {});

  std::size_t max_chunk_elems() const { return chunk_elems_; }
  std::size_t window() const { return window_; }

 private:
  std::size_t chunk_for(std::size_t count) const;
  std::uint64_t tag(std::size_t unit) const;

  FabricEndpoint& ep_;
  int rank_ = 0, nranks_ = 1;
  DType dtype_;
  RedOp op_;
  std::size_t chunk_elems_ = 1, window_ = 1;
  std::vector<unsigned char> scratch_;
  void* scratch_desc_ = nullptr;
  RingPlan plan_;
  std::size_t plan_count_ = 0;
  std::uint64_t seq_ = 0;
  std::vector<FabricOp> sends_, recvs_;
  std::vector<char> recv_done_;
};

}  // namespace nodeprobe::allreduce
