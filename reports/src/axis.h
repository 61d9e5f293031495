#pragma once
// Chart axis math (internal to the renderers): nice-number ticks and value
// -> position, safe for every double a report may carry. Reports come from
// other machines and from hand edits: equal, subnormal, infinite or NaN
// bounds and spans past the double range (-1.7e308 .. 1.7e308) must still
// give a drawable axis, never an empty tick list or a NaN coordinate.

#include <vector>

namespace nodeprobe::svg {

struct Axis {
  double lo = 0, hi = 1;      ///< ticks.front(), ticks.back()
  std::vector<double> ticks;  ///< at least two, finite, strictly increasing
};

/// Ticks covering [lo, hi] with about `target` steps of 1, 2, 2.5 or 5
/// times a power of ten. Non-finite bounds are replaced by the finite one
/// (or 0..1), equal or nearly equal bounds are widened around the value.
Axis nice_axis(double lo, double hi, int target = 5);

/// Where `v` lies on [lo, hi] as a fraction clamped to 0..1 (0.5 when the
/// axis has no width, 0 for NaN), without overflowing when hi - lo exceeds
/// the largest double.
double axis_fraction(double v, double lo, double hi);

}  // namespace nodeprobe::svg
