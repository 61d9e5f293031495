#pragma once
/// Sample statistics for repeated measurements.

#include <functional>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// n, median, mean, min, max, p5, p95 (linear interpolation between closest
/// ranks) and sample standard deviation (n-1). Non-finite samples are ignored;
/// an empty input gives n = 0 and zeros.
Stats compute_stats(std::vector<double> samples);

/// The stats of f(samples) for a monotone f, from the stats of the samples:
/// order statistics map exactly (swapped when f decreases), mean becomes
/// f(mean) and stddev |f'(mean)| x stddev. Used where several metrics come
/// from the same samples (time, algbw and busbw of one allreduce; step time
/// and throughput) so that their spreads always agree.
Stats map_stats(const Stats& s, const std::function<double(double)>& f);

/// Percentile q in [0, 1] of sorted, non-empty data (linear interpolation).
double percentile_sorted(const std::vector<double>& sorted, double q);

}  // namespace nodeprobe
