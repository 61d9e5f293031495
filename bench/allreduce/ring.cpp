#include "ring.h"

#include <algorithm>

namespace nodeprobe::allreduce {

std::size_t segment_count(std::size_t count, int n, int seg) {
  const std::size_t un = static_cast<std::size_t>(n);
  const std::size_t us = static_cast<std::size_t>(seg);
  return count / un + (us < count % un ? 1 : 0);
}

std::size_t segment_offset(std::size_t count, int n, int seg) {
  const std::size_t un = static_cast<std::size_t>(n);
  const std::size_t us = static_cast<std::size_t>(seg);
  return us * (count / un) + std::min(us, count % un);
}

RingPlan plan_ring(int nranks, int rank, std::size_t count, std::size_t chunk_elems) {
  RingPlan p;
  p.nranks = nranks;
  p.rank = rank;
  if (nranks <= 1) return p;
  chunk_elems = std::max<std::size_t>(chunk_elems, 1);
  const std::size_t largest = segment_count(count, nranks, 0);
  p.chunks = std::max<std::size_t>(1, (largest + chunk_elems - 1) / chunk_elems);
  const int steps = 2 * (nranks - 1);
  const std::size_t units = static_cast<std::size_t>(steps) * p.chunks;
  p.send.resize(units);
  p.recv.resize(units);
  auto seg_of = [&](int s) { return ((rank - s) % nranks + nranks) % nranks; };
  for (int s = 0; s < steps; ++s) {
    const int send_seg = seg_of(s);
    const int recv_seg = seg_of(s + 1);
    for (std::size_t c = 0; c < p.chunks; ++c) {
      const std::size_t u = static_cast<std::size_t>(s) * p.chunks + c;
      auto fill = [&](RingUnit& unit, int seg) {
        const std::size_t seg_n = segment_count(count, nranks, seg);
        const std::size_t begin = std::min(seg_n, c * chunk_elems);
        const std::size_t end = std::min(seg_n, begin + chunk_elems);
        unit.step = s;
        unit.segment = seg;
        unit.offset = segment_offset(count, nranks, seg) + begin;
        unit.count = end - begin;
        unit.reduce = s < nranks - 1;
      };
      fill(p.send[u], send_seg);
      fill(p.recv[u], recv_seg);
    }
  }
  return p;
}

}  // namespace nodeprobe::allreduce
