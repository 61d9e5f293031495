#pragma once
/// Progress of `nodeprobe accept` on a terminal: the current probe, its
/// elapsed time against its estimate, and the run's total. A ticker thread
/// rewrites one line; nothing at all is printed when disabled (pipes, --quiet).

#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "nodeprobe/clock.h"
#include "nodeprobe/status.h"

namespace nodeprobe::diag {

class Progress {
 public:
  Progress(std::ostream& out, bool enabled, Clock& clock, double total_estimate_s);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// A probe starts (index is 0-based).
  void begin(std::size_t index, std::size_t total, const std::string& name, double estimate_s);
  /// It ended: the line is finished with its status and time.
  void end(Status status, double duration_s);

  /// The line shown now ("[3/8] io  4.1 s of ~6 s | total 7.3 s of ~14 s").
  std::string line() const;
  bool enabled() const { return enabled_; }

 private:
  void tick_loop();
  void stop_ticker();

  std::ostream& out_;
  bool enabled_;
  Clock& clock_;
  double total_estimate_s_;
  double run_start_;
  double probe_start_ = 0;
  double probe_estimate_s_ = 0;
  std::size_t index_ = 0, total_ = 0;
  std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace nodeprobe::diag
