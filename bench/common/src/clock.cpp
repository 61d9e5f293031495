#include "nodeprobe/clock.h"

#include <ctime>
#include <random>
#include <thread>

namespace nodeprobe {

double SteadyClock::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SteadyClock::sleep_s(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

Clock& steady_clock() {
  // Never destroyed: the stop watcher (stop.cpp) is a detached thread that
  // reads the clock when it wakes, which can be after exit() has run the
  // static destructors (UBSan: "invalid vptr" in stop.cpp's watch()).
  static Clock* const c = new SteadyClock;
  return *c;
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms.count()));
  return out;
}

std::string make_run_id() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%06x", rd() & 0xffffffu);
  return std::string(buf) + suffix;
}

}  // namespace nodeprobe
