#pragma once
/// nodeprobe-gemm's metric descriptors, declared once (unit, direction, axes,
/// chart). Every timed number carries the spread of its repetitions.

#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::gemm {

const std::vector<MetricDescriptor>& gemm_metrics();

}  // namespace nodeprobe::gemm
