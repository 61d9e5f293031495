#pragma once
/// The io probes' metric descriptors, declared once: what each number means,
/// its unit, direction, axes (what one run varies), display and chart.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::io {

/// Metrics of a loader run. `axes`: none for `read` (one configuration, its
/// settings in config), {layout, method, cache} for `accept` (runs within one
/// probe), {layout, workers, prefetch} for `sweep`.
std::vector<MetricDescriptor> run_metrics(const std::vector<std::string>& axes);
/// write_throughput of `prepare` (and accept's datasets, axis layout there).
std::vector<MetricDescriptor> prepare_metrics(const std::vector<std::string>& axes);

/// The axes of accept's runs and of the sweep's points.
inline const std::vector<std::string> kAcceptAxes{"layout", "method", "cache"};
inline const std::vector<std::string> kSweepAxes{"layout", "workers", "prefetch"};

}  // namespace nodeprobe::io
