#pragma once
/// NVML samples over a timed window, reduced to what tells a slow GPU from a
/// throttled one. Host-only (nvml.h's NvmlSample), unit tested.

#include <string>
#include <utility>
#include <vector>

#include "nvml.h"

namespace nodeprobe::gemm {

/// Samples taken over a timed window (while the GPU runs the timed work):
/// clocks and throttle reasons as they were during the measurement, and the
/// power drawn, from the energy counter when it moved (a mean over the
/// window) and from the instantaneous field.
class BusyWindow {
 public:
  void add(const NvmlSample& s, double t_s);
  int count() const { return static_cast<int>(samples_.size()); }
  /// The last sample (PCIe link state under load), empty when none.
  NvmlSample last() const { return samples_.empty() ? NvmlSample{} : samples_.back().second; }
  int sm_clock_min() const;
  int sm_clock_max() const;
  /// Every throttle reason seen in any sample, "GpuIdle" left out (-1: none read).
  long long throttle_reasons() const;
  /// Mean power over the window from the energy counter (-1: the counter did not move).
  double energy_power_w() const;
  double power_instant_max_w() const;
  double seconds() const;
  Json to_json() const;
  /// "SM clock 1410-1980 MHz, 612 W (energy counter, 0.31 s), throttle reasons none".
  std::string describe() const;

 private:
  std::vector<std::pair<double, NvmlSample>> samples_;
};

}  // namespace nodeprobe::gemm
