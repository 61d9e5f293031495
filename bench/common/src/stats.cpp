#include "nodeprobe/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nodeprobe {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Stats compute_stats(std::vector<double> samples) {
  samples.erase(std::remove_if(samples.begin(), samples.end(),
                               [](double v) { return !std::isfinite(v); }),
                samples.end());
  Stats s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.median = percentile_sorted(samples, 0.5);
  s.p5 = percentile_sorted(samples, 0.05);
  s.p95 = percentile_sorted(samples, 0.95);
  const double n = static_cast<double>(samples.size());
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  if (samples.size() > 1) {
    double ss = 0;
    for (double v : samples) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / (n - 1));
  }
  return s;
}

Stats map_stats(const Stats& s, const std::function<double(double)>& f) {
  Stats o = s;
  if (s.n == 0) return o;
  o.median = f(s.median);
  o.mean = f(s.mean);
  const double lo = f(s.min), hi = f(s.max), p5 = f(s.p5), p95 = f(s.p95);
  const bool decreasing = hi < lo;
  o.min = decreasing ? hi : lo;
  o.max = decreasing ? lo : hi;
  o.p5 = decreasing ? p95 : p5;
  o.p95 = decreasing ? p5 : p95;
  const double h = std::max(std::fabs(s.mean) * 1e-6, 1e-12);
  o.stddev = std::fabs((f(s.mean + h) - f(s.mean - h)) / (2 * h)) * s.stddev;
  return o;
}

}  // namespace nodeprobe
