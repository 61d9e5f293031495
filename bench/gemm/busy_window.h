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
  /// NVML's power readings lag the load by tens of milliseconds (the energy
  /// counter moves in steps, the "instantaneous" field is itself averaged): on
  /// an H200, a 30 ms BF16 burst read 1040 W from the counter on a 700 W card,
  /// and 125 W from the instantaneous field at full clocks. Power is read
  /// only over windows at least this long: a bound chosen, not calibrated
  /// (the same run's 0.53 s FP32 window read 705 W on the 700 W card).
  static constexpr double kMinPowerWindow_s = 0.25;
  /// Whether the window is long enough to read power in (kMinPowerWindow_s).
  bool power_readable() const { return seconds() >= kMinPowerWindow_s; }
  /// Mean power over the window from the energy counter (-1: the counter did
  /// not move, or the window is too short to read power in).
  double energy_power_w() const;
  /// The largest instantaneous reading (-1: none, or the window is too short).
  double power_instant_max_w() const;
  double seconds() const;
  Json to_json() const;
  /// "SM clock 1410-1980 MHz, 612 W (energy counter, 0.31 s), throttle reasons none".
  std::string describe() const;
  /// Why the window has no power figure ("power not read (a 0.03 s window; ...)").
  std::string power_not_read() const;

 private:
  std::vector<std::pair<double, NvmlSample>> samples_;
};

}  // namespace nodeprobe::gemm
