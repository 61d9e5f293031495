#include "axis.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace nodeprobe::svg {
namespace {

double clamp_finite(double v) { return std::max(-DBL_MAX, std::min(DBL_MAX, v)); }

}  // namespace

Axis nice_axis(double lo, double hi, int target) {
  target = std::max(2, std::min(20, target));
  if (!std::isfinite(lo) && !std::isfinite(hi)) lo = 0, hi = 1;
  if (!std::isfinite(lo)) lo = hi;
  if (!std::isfinite(hi)) hi = lo;
  if (lo > hi) std::swap(lo, hi);
  // Halves never overflow: hi/2 - lo/2 is finite for any finite bounds.
  const double half_span = hi / 2 - lo / 2;
  const double mag = std::max(std::fabs(lo), std::fabs(hi));
  if (!(half_span * 2 > std::max(mag * 1e-9, 1e-300))) {
    // One value (or values equal to 9 digits, or subnormal): widen around
    // it; a value >= 0 (a count, a rate) gets a 0-based axis.
    const double pad = mag > 1e-300 ? mag / 2 : 1;
    const bool nonneg = lo >= 0;
    lo = nonneg ? 0 : clamp_finite(lo - pad);
    hi = clamp_finite(hi + pad);
  }
  Axis a;
  const double raw = (hi / 2 - lo / 2) * (2.0 / target);
  const double exp10 = std::floor(std::log10(raw));
  const double base = std::pow(10.0, exp10);
  double step = 0;
  if (std::isfinite(base) && base > 0) {
    const double frac = raw / base;
    double nice = 10;
    for (double m : {1.0, 2.0, 2.5, 5.0})
      if (m >= frac) {
        nice = m;
        break;
      }
    step = nice * base;
  }
  if (!std::isfinite(step) || !(step > 0)) step = raw;
  double k0 = std::floor(lo / step), k1 = std::ceil(hi / step);
  if (k0 * step > lo) k0 -= 1;  // lo / step underflowed to 0 (a subnormal bound)
  if (k1 * step < hi) k1 += 1;
  if (std::isfinite(k0) && std::isfinite(k1) && k1 - k0 >= 1 && k1 - k0 <= 50) {
    for (double k = k0; k <= k1; k += 1) {
      double v = clamp_finite(k * step);
      if (v == 0) v = 0;  // no "-0" label
      if (a.ticks.empty() || v > a.ticks.back()) a.ticks.push_back(v);
    }
  }
  if (a.ticks.size() < 2) a.ticks = {lo, hi};
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  return a;
}

double axis_fraction(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  const double half = hi / 2 - lo / 2;
  if (!(half > 0) || !std::isfinite(half)) return 0.5;
  const double f = (v / 2 - lo / 2) / half;
  if (std::isnan(f)) return 0;
  return std::max(0.0, std::min(1.0, f));
}

}  // namespace nodeprobe::svg
