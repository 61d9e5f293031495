#pragma once
/// Injectable clocks: probes take a Clock& so tests drive time with FakeClock.

#include <chrono>
#include <string>

namespace nodeprobe {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Monotonic seconds since an arbitrary origin.
  virtual double now_s() const = 0;
  /// Sleeps (or, for a fake clock, advances) by `seconds`.
  virtual void sleep_s(double seconds) = 0;
};

class SteadyClock final : public Clock {
 public:
  double now_s() const override;
  void sleep_s(double seconds) override;
};

/// Test clock: time moves only when told.
class FakeClock final : public Clock {
 public:
  double now_s() const override { return t_; }
  void sleep_s(double seconds) override { t_ += seconds; }
  void advance(double seconds) { t_ += seconds; }

 private:
  double t_ = 0;
};

/// The process-wide steady clock.
Clock& steady_clock();

/// Current UTC time as ISO 8601 with milliseconds ("2026-11-29T16:39:36.123Z").
std::string utc_now_iso8601();

/// A run id: UTC time plus random suffix ("20261129T163936Z-3f9a1c").
std::string make_run_id();

}  // namespace nodeprobe
