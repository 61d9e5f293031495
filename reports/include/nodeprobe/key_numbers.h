#pragma once
/// The few numbers that sum up a probe in one line (accept's verdict table,
/// the HTML summary). Which metrics are key numbers, in which order, with
/// which caption, is in each metric's descriptor (MetricKey); the best value
/// follows the descriptor's direction. A probe without key metrics shows its
/// check counts and its first metrics.

#include <string>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// "bf16 250 TFLOP/s, fp32 19.1 TFLOP/s" / "AU best 94.0 %, best 1520 MB/s" /
/// "12 checks: 9 pass, 3 warn" / "".
std::string key_numbers(const ProbeResult& p, std::size_t max_items = 3);

}  // namespace nodeprobe
