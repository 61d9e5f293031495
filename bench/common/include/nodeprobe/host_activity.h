#pragma once
/// How busy the host was with other work while a probe ran: the CPU time the
/// whole machine spent (/proc/stat) minus this process's and its waited-for
/// children's (getrusage), per second of the run. compare shows it next to
/// the metrics that moved: a probe slowed by a neighbour is not a node that
/// got worse.

#include <optional>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// The machine's CPU jiffies so far, from /proc/stat's first ("cpu ") line.
struct CpuJiffies {
  double busy = 0;   ///< user nice system irq softirq steal
  double steal = 0;  ///< time the hypervisor ran something else
  double total = 0;  ///< busy + idle + iowait
};
/// Parses /proc/stat text; nullopt when its first line is not "cpu ...".
std::optional<CpuJiffies> parse_proc_stat(const std::string& text);
/// The machine's CPU jiffies now; nullopt where /proc/stat is unreadable.
std::optional<CpuJiffies> read_proc_stat();

/// The activity between two readings; nullopt when the interval is empty or
/// the readings make no sense (a counter went backwards).
/// `own_cpu_s`: this process's and its children's CPU seconds in between.
std::optional<HostActivity> host_activity_between(const CpuJiffies& a, const CpuJiffies& b, double wall_s,
                                                  double own_cpu_s, double ticks_per_s, int cpus);

/// Measures one stretch of a run (a probe's): start at construction, stop()
/// reads again. Under a launcher that put several ranks of one job on this
/// node, the other ranks' CPU would read as a neighbour's: nothing is
/// measured then (stop() gives nullopt), nor where /proc/stat is unreadable.
class ActivityMeter {
 public:
  ActivityMeter();
  std::optional<HostActivity> stop() const;

 private:
  std::optional<CpuJiffies> start_;
  double wall0_ = 0, own0_ = 0;
};

}  // namespace nodeprobe
