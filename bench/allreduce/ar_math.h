#pragma once
/// The arithmetic of collective benchmarks (nccl-tests doc/PERFORMANCE.md):
/// bandwidth formulas, the size sweep, straggler detection.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ar_types.h"
#include "nodeprobe/size.h"  // parse_size / format_size: the one size convention

namespace nodeprobe::allreduce {

/// algbw in GB/s (1e9 B/s): bytes / seconds.
double algbw_gbps(std::size_t bytes, double seconds);
/// Allreduce bus bandwidth: algbw x 2(n-1)/n (0 for one rank).
double allreduce_busbw(double algbw, int nranks);
/// The factor 2(n-1)/n.
double allreduce_bus_factor(int nranks);
/// nccl-tests' bus factor of each collective: 2(n-1)/n for allreduce;
/// (n-1)/n for allgather, reducescatter and alltoall; 1 for broadcast,
/// reduce and sendrecv (0 for one rank, except those three).
double coll_bus_factor(Coll c, int nranks);

/// The sizes of a sweep as nccl-tests walks them: from min to max, multiplying by
/// `factor` (> 1) or, when factor is 0, adding `step`. Each size is rounded down to a
/// whole number of elements of `elem_size`; sizes that round to 0 are dropped.
std::vector<std::size_t> size_sweep(std::size_t min_bytes, std::size_t max_bytes, double factor,
                                    std::size_t step, std::size_t elem_size);

/// nccl-tests "# Avg bus bandwidth": mean of busbw over every printed value
/// (out-of-place and in-place, every size).
double average_busbw(const std::vector<SizeRow>& rows);

/// Indices whose value exceeds `factor` x the median (slow ranks). Empty for < 2 values.
std::vector<int> stragglers(const std::vector<double>& values, double factor = 1.5);

/// Median of values (0 when empty).
double median_of(std::vector<double> values);

}  // namespace nodeprobe::allreduce
