#pragma once
/// The nccl-tests table (same columns, formats and footer), so numbers can be
/// put side by side with all_reduce_perf output.

#include <string>
#include <vector>

#include "ar_types.h"
#include "options.h"

namespace nodeprobe::allreduce {

/// The three "#" header lines.
std::string table_header();
/// One line: size, count, type, redop, root, then time/algbw/busbw/#wrong out-of-place and in-place.
/// nccl-tests' columns: redop "none" where the collective does not reduce,
/// root -1 where it has none.
std::string table_row(const SizeRow& row, const Plan& plan);
/// "# Out of bounds values : N OK" and "# Avg bus bandwidth    : X".
std::string table_footer(const std::vector<SizeRow>& rows);
/// nccl-tests' time column: %7.2f below 100 us, %7.1f below 10 ms, %7.0f above.
std::string format_time_us(double us);

/// busbw of A over B per size (out-of-place): "size  A  B  ratio" lines. Sizes
/// present in both only.
std::string ratio_table(const TargetResult& a, const TargetResult& b);

}  // namespace nodeprobe::allreduce
