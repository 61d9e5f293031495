#pragma once
/// The few numbers that sum up a probe in one line (accept's verdict table,
/// the HTML summary). Which metrics count as "key" is a table in
/// key_numbers.cpp, keyed by probe and metric name (adjust it when a probe
/// names its metrics differently); a probe not in it shows its check counts
/// and first metrics.

#include <string>
#include <vector>

#include "nodeprobe/metric_select.h"

namespace nodeprobe {

struct KeyMetric {
  std::string probe;        ///< probe name or prefix ("allreduce" matches "allreduce.mpi")
  std::string metric;       ///< metric name
  Labels labels;            ///< required labels ("*": any value)
  std::string caption;      ///< shown before the value ("bf16")
  bool lowest = false;      ///< show the lowest matching value instead of the highest
};

/// The built-in table.
const std::vector<KeyMetric>& key_metric_table();

/// "bf16 250 TFLOP/s, fp32 19.1 TFLOP/s" / "12 checks: 9 pass, 3 warn" / "".
std::string key_numbers(const ProbeResult& p, std::size_t max_items = 3);

}  // namespace nodeprobe
