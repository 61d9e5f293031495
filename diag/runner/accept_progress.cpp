#include "accept_progress.h"

#include <cstdio>

namespace nodeprobe::diag {

Progress::Progress(std::ostream& out, bool enabled, Clock& clock, double total_estimate_s)
    : out_(out), enabled_(enabled), clock_(clock), total_estimate_s_(total_estimate_s),
      run_start_(clock.now_s()) {}

Progress::~Progress() { stop_ticker(); }

std::string Progress::line() const {
  const double now = clock_.now_s();
  char buf[200];
  std::snprintf(buf, sizeof buf, "[%zu/%zu] %-22s %5.1f s of ~%.0f s | total %5.1f s of ~%.0f s",
                index_ + 1, total_, name_.c_str(), now - probe_start_, probe_estimate_s_,
                now - run_start_, total_estimate_s_);
  return buf;
}

void Progress::begin(std::size_t index, std::size_t total, const std::string& name, double estimate_s) {
  stop_ticker();
  {
    std::lock_guard<std::mutex> lock(mu_);
    index_ = index;
    total_ = total;
    name_ = name;
    probe_estimate_s_ = estimate_s;
    probe_start_ = clock_.now_s();
    stop_ = false;
  }
  if (!enabled_) return;
  out_ << "\r\033[K" << line() << std::flush;
  ticker_ = std::thread([this] { tick_loop(); });
}

void Progress::end(Status status, double duration_s) {
  stop_ticker();
  if (!enabled_) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "[%zu/%zu] %-22s %-7s %6.2f s", index_ + 1, total_, name_.c_str(),
                std::string(to_string(status)).c_str(), duration_s);
  out_ << "\r\033[K" << buf << "\n" << std::flush;
}

void Progress::tick_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
    const std::string l = line();
    out_ << "\r\033[K" << l << std::flush;
  }
}

void Progress::stop_ticker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

}  // namespace nodeprobe::diag
