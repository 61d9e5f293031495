#include "busy_window.h"

#include <algorithm>
#include <cstdio>

namespace nodeprobe::gemm {

void BusyWindow::add(const NvmlSample& s, double t_s) { samples_.emplace_back(t_s, s); }

int BusyWindow::sm_clock_min() const {
  int v = -1;
  for (const auto& [t, s] : samples_)
    if (s.sm_clock_mhz >= 0 && (v < 0 || s.sm_clock_mhz < v)) v = s.sm_clock_mhz;
  return v;
}

int BusyWindow::sm_clock_max() const {
  int v = -1;
  for (const auto& [t, s] : samples_) v = std::max(v, s.sm_clock_mhz);
  return v;
}

long long BusyWindow::throttle_reasons() const {
  long long m = -1;
  for (const auto& [t, s] : samples_)
    if (s.throttle_reasons >= 0) m = (m < 0 ? 0 : m) | (s.throttle_reasons & ~0x1LL);
  return m;
}

double BusyWindow::energy_power_w() const {
  if (!power_readable()) return -1;
  const NvmlSample* first = nullptr;
  const NvmlSample* last = nullptr;
  double t0 = 0, t1 = 0;
  for (const auto& [t, s] : samples_) {
    if (s.energy_mj < 0) continue;
    if (!first) {
      first = &s;
      t0 = t;
    }
    last = &s;
    t1 = t;
  }
  if (!first || last == first || t1 <= t0 || last->energy_mj <= first->energy_mj) return -1;
  return static_cast<double>(last->energy_mj - first->energy_mj) / 1000.0 / (t1 - t0);
}

double BusyWindow::power_instant_max_w() const {
  if (!power_readable()) return -1;
  double v = -1;
  for (const auto& [t, s] : samples_) v = std::max(v, s.power_instant_w);
  return v;
}

double BusyWindow::seconds() const {
  return samples_.size() < 2 ? 0 : samples_.back().first - samples_.front().first;
}

Json BusyWindow::to_json() const {
  Json j = Json::object();
  j["samples"] = count();
  j["seconds"] = seconds();
  if (sm_clock_min() >= 0) {
    j["sm_clock_min_mhz"] = sm_clock_min();
    j["sm_clock_max_mhz"] = sm_clock_max();
  }
  if (throttle_reasons() >= 0) j["throttle_reasons"] = describe_throttle_reasons(throttle_reasons());
  if (energy_power_w() >= 0) j["power_energy_counter_w"] = energy_power_w();
  if (power_instant_max_w() >= 0) j["power_instant_max_w"] = power_instant_max_w();
  if (!samples_.empty() && !power_readable()) j["power_not_read"] = power_not_read();
  if (!samples_.empty()) j["last"] = nodeprobe::gemm::to_json(samples_.back().second);
  return j;
}

std::string BusyWindow::describe() const {
  if (samples_.empty()) return "no NVML samples";
  char buf[96];
  std::string out;
  if (sm_clock_min() >= 0) {
    std::snprintf(buf, sizeof buf, "SM clock %d-%d MHz", sm_clock_min(), sm_clock_max());
    out += buf;
  }
  const auto add = [&out](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (energy_power_w() >= 0) {
    std::snprintf(buf, sizeof buf, "%.0f W (energy counter over %.2f s)", energy_power_w(), seconds());
    add(buf);
  } else if (power_instant_max_w() >= 0) {
    std::snprintf(buf, sizeof buf, "%.0f W (instantaneous, max)", power_instant_max_w());
    add(buf);
  } else if (!power_readable()) {
    add(power_not_read());
  } else if (samples_.back().second.power_draw_w >= 0) {
    std::snprintf(buf, sizeof buf, "%.0f W (1 s average: may include idle time)",
                  samples_.back().second.power_draw_w);
    add(buf);
  }
  add("throttle reasons " + describe_throttle_reasons(throttle_reasons()));
  add(std::to_string(count()) + " sample(s)");
  return out;
}

std::string BusyWindow::power_not_read() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "power not read (a %.2f s window; NVML's readings need %.2f s or more)", seconds(),
                kMinPowerWindow_s);
  return buf;
}

std::string describe_throttle_reasons(long long mask) {
  if (mask < 0) return "unknown";
  if (mask == 0) return "none";
  static const std::pair<long long, const char*> kBits[] = {
      {0x1, "GpuIdle"},          {0x2, "ApplicationsClocksSetting"},
      {0x4, "SwPowerCap"},       {0x8, "HwSlowdown"},
      {0x10, "SyncBoost"},       {0x20, "SwThermalSlowdown"},
      {0x40, "HwThermalSlowdown"}, {0x80, "HwPowerBrakeSlowdown"},
      {0x100, "DisplayClockSetting"}};
  std::string s;
  for (const auto& [bit, name] : kBits)
    if (mask & bit) s += (s.empty() ? "" : ", ") + std::string(name);
  return s.empty() ? "other" : s;
}

}  // namespace nodeprobe::gemm
