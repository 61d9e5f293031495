#pragma once
/// Input patterns, expected results, the data check and the host reduction
/// kernels. Inputs are small integers chosen so that sums, products, minima
/// and maxima are exact in every type for realistic rank counts; the check
/// still allows a type-dependent tolerance for floating types (the order of
/// additions differs between algorithms).

#include <cstddef>
#include <cstdint>

#include "ar_types.h"
#include "nodeprobe/float16.h"

namespace nodeprobe::allreduce {

/// Round-to-nearest-even conversions for bfloat16 / float16 buffers.
using nodeprobe::bf16_to_float;
using nodeprobe::float_to_bf16;
using nodeprobe::float_to_half;
using nodeprobe::half_to_float;

/// The input value of element `i` on `rank` for check repetition `rep`.
double input_value(RedOp op, int rank, std::size_t i, int rep);
/// The correct result of element `i` over `nranks` ranks.
double expected_value(RedOp op, int nranks, std::size_t i, int rep);

/// Writes the inputs of `rank` into `buf` (`count` elements of `type`).
void fill_input(void* buf, std::size_t count, DType type, RedOp op, int rank, int rep);
/// Writes a value no correct result can have (so stale output is caught).
void fill_poison(void* buf, std::size_t count, DType type);

/// What one rank of a collective reads and writes: the collective, the
/// counts of this size, the ranks and the root (broadcast, reduce).
struct CollData {
  Coll coll = Coll::kAllReduce;
  CollCounts counts;
  DType type = DType::kFloat32;
  RedOp op = RedOp::kSum;
  int rank = 0, nranks = 1, root = 0;
};

/// Where one placement keeps a collective's data, as nccl-tests lays it out
/// (in elements): the input goes to the send buffer, or in place to the
/// result buffer at `input_at` (allgather: the rank's block); the first
/// `poison` elements of the result buffer are poisoned before it (out of
/// place all of it, in-place allgather the blocks of the other ranks too);
/// the result is read at `result_at` of the result buffer (in-place
/// reducescatter: the rank's block).
struct CollLayout {
  bool input_in_result = false;
  std::size_t input_at = 0, poison = 0, result_at = 0;
};
CollLayout coll_layout(const CollData& d, bool in_place);

/// Writes this rank's input (counts.send elements) into `send`: a reducing
/// collective's inputs as fill_input; the others carry values that name the
/// sending rank and the element, so a block from the wrong rank or at the
/// wrong offset shows. A broadcast's non-root ranks get poison.
void fill_coll_input(void* send, const CollData& d, int rep);
/// Wrong elements of this rank's result (counts.recv elements at `recv`; the
/// reduce's non-root ranks have none: 0).
long count_coll_wrong(const void* recv, const CollData& d, int rep);
/// Whether this rank has a result to check (all but the reduce's non-roots).
bool coll_has_result(const CollData& d);

/// Relative tolerance for `type` after reducing over `nranks` ranks (0 for integers).
double tolerance(DType type, int nranks);
/// Number of elements of `buf` that differ from the expected result.
long count_wrong(const void* buf, std::size_t count, DType type, RedOp op, int nranks, int rep);

/// dst[i] = dst[i] op src[i] for `count` elements (sum, prod, min, max; avg sums,
/// the caller divides once at the end with finish_avg).
void reduce_into(void* dst, const void* src, std::size_t count, DType type, RedOp op);
/// Reduces `nparts` received vectors of `count` elements into `own`, in a
/// fixed order: parts [0, own_at), then `own`, then parts [own_at, nparts):
/// (((p0 op p1) op own) op p2) for own_at 2. The ops are commutative, so a
/// one-shot allreduce that lists every rank's vector in rank order gives
/// every rank the same bits. parts[0] is overwritten when own_at > 1.
void reduce_ordered(void* own, void* const* parts, std::size_t nparts, std::size_t own_at, std::size_t count,
                    DType type, RedOp op);
/// Divides every element by `nranks` (for avg).
void finish_avg(void* buf, std::size_t count, DType type, int nranks);

}  // namespace nodeprobe::allreduce
