#pragma once
// Unit conversions shared by the exporters (internal).

#include <string>

namespace nodeprobe::detail {

/// A unit converted for export: value x scale, expressed in `unit`.
struct UnitMap {
  double scale = 1;
  std::string prom_suffix;  ///< Prometheus base-unit suffix ("seconds", "bytes_per_second", "")
  std::string cloudwatch;   ///< CloudWatch StandardUnit ("Seconds", "None", ...)
  double cw_scale = 1;
};

/// How a report unit ("GB/s", "us", "%", "TFLOP/s", ...) maps to each system.
UnitMap map_unit(const std::string& unit);

/// Lower-case [a-z0-9_] version of `s` (other characters become '_', runs folded).
std::string snake(const std::string& s);

}  // namespace nodeprobe::detail
