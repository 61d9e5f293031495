#pragma once
/// Sample statistics for repeated measurements.

#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// n, median, mean, min, max, p5, p95 (linear interpolation between closest
/// ranks) and sample standard deviation (n-1). Non-finite samples are ignored;
/// an empty input gives n = 0 and zeros.
Stats compute_stats(std::vector<double> samples);

/// Percentile q in [0, 1] of sorted, non-empty data (linear interpolation).
double percentile_sorted(const std::vector<double>& sorted, double q);

}  // namespace nodeprobe
