#pragma once
/// The allreduce probe's metric descriptors, declared once. Axes: the target
/// (backend, provider: a run may measure several), message size and placement;
/// dtype, op, iterations and backend flags are settings (config).

#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::allreduce {

const std::vector<MetricDescriptor>& allreduce_metrics();

}  // namespace nodeprobe::allreduce
