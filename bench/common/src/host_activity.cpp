#include "nodeprobe/host_activity.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "nodeprobe/clock.h"

namespace nodeprobe {
namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

// CPU seconds of this process and of the children it has waited for.
double own_cpu_s() {
  double s = 0;
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) == 0) s += seconds(u.ru_utime) + seconds(u.ru_stime);
  if (::getrusage(RUSAGE_CHILDREN, &u) == 0) s += seconds(u.ru_utime) + seconds(u.ru_stime);
  return s;
}

// Ranks of one job that share this node (Open MPI, PMIx, Slurm).
bool several_local_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"})
    if (const char* s = std::getenv(v); s && std::atoi(s) > 1) return true;
  return false;
}

}  // namespace

std::optional<CpuJiffies> read_proc_stat() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return parse_proc_stat(line);
}

std::optional<CpuJiffies> parse_proc_stat(const std::string& text) {
  std::istringstream in(text);
  std::string cpu;
  if (!(in >> cpu) || cpu != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal (guest time is inside user)
  double v[8] = {};
  int n = 0;
  while (n < 8 && in >> v[n]) ++n;
  if (n < 4) return std::nullopt;
  CpuJiffies j;
  j.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  j.steal = v[7];
  j.total = j.busy + v[3] + v[4];
  return j;
}

std::optional<HostActivity> host_activity_between(const CpuJiffies& a, const CpuJiffies& b, double wall_s,
                                                  double own_cpu_s, double ticks_per_s, int cpus) {
  if (!(wall_s > 0) || !(ticks_per_s > 0) || cpus <= 0 || b.busy < a.busy || b.steal < a.steal ||
      b.total <= a.total)
    return std::nullopt;
  HostActivity h;
  h.seconds = wall_s;
  h.cpus = cpus;
  // Jiffies tick at 100 Hz: a short run's reading is coarse, never negative.
  const double busy_s = (b.busy - a.busy) / ticks_per_s;
  h.other_cpus = std::max(0.0, std::min(static_cast<double>(cpus), (busy_s - own_cpu_s) / wall_s));
  h.steal_cpus = std::min(static_cast<double>(cpus), (b.steal - a.steal) / ticks_per_s / wall_s);
  return h;
}

ActivityMeter::ActivityMeter() {
  if (several_local_ranks()) return;
  start_ = read_proc_stat();
  wall0_ = steady_clock().now_s();
  own0_ = own_cpu_s();
}

std::optional<HostActivity> ActivityMeter::stop() const {
  if (!start_) return std::nullopt;
  const auto end = read_proc_stat();
  if (!end) return std::nullopt;
  const long hz = ::sysconf(_SC_CLK_TCK);
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return host_activity_between(*start_, *end, steady_clock().now_s() - wall0_, own_cpu_s() - own0_,
                               static_cast<double>(hz), static_cast<int>(cpus));
}

}  // namespace nodeprobe
