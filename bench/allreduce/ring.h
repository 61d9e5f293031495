#pragma once
/// The ring allreduce schedule of the fabric backend: reduce-scatter then
/// allgather over n segments, each segment cut into chunks so that a chunk can
/// travel on while the next one is still arriving (pipelining).
///
/// Global step s runs from 0 to 2(n-1)-1; steps below n-1 reduce, the others
/// copy. At step s a rank sends segment (rank - s) mod n to rank+1 and receives
/// segment (rank - s - 1) mod n from rank-1. Unit u = s * chunks + c is chunk c
/// of step s; send unit u (s >= 1) carries what receive unit u - chunks brought.

#include <cstddef>
#include <vector>

namespace nodeprobe::allreduce {

/// One chunk to send or receive, in elements of the buffer.
struct RingUnit {
  int step = 0;
  int segment = 0;
  std::size_t offset = 0;  ///< first element
  std::size_t count = 0;   ///< elements (0: nothing to move for this unit)
  bool reduce = false;     ///< receive side: reduce into the buffer (else copy)
};

struct RingPlan {
  int nranks = 1;
  int rank = 0;
  std::size_t chunks = 0;       ///< chunks per step
  std::vector<RingUnit> send;   ///< indexed by unit u = step * chunks + chunk
  std::vector<RingUnit> recv;
  int next() const { return (rank + 1) % nranks; }
  int prev() const { return (rank + nranks - 1) % nranks; }
  /// The receive unit send unit `u` waits for, or -1 when it can go at once.
  long depends_on(std::size_t u) const {
    return u < chunks ? -1 : static_cast<long>(u - chunks);
  }
};

/// Elements of segment `seg` when `count` elements are split over `n` segments
/// (the first count % n segments hold one more).
std::size_t segment_count(std::size_t count, int n, int seg);
/// First element of segment `seg`.
std::size_t segment_offset(std::size_t count, int n, int seg);

/// The schedule of `rank` among `nranks` for `count` elements in chunks of at most
/// `chunk_elems` elements (>= 1).
RingPlan plan_ring(int nranks, int rank, std::size_t count, std::size_t chunk_elems);

}  // namespace nodeprobe::allreduce
