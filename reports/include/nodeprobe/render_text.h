#pragma once
/// Terminal rendering of a report: what a person reads after a run.

#include <ostream>

#include "nodeprobe/report.h"

namespace nodeprobe {

struct TextOptions {
  bool color = false;     ///< ANSI colours (only on a terminal)
  bool verbose = false;   ///< also list passing checks and every metric
};

/// One line per probe, its non-passing checks with their fixes, key metrics,
/// findings with their first remedy step, and the verdict.
void render_text(const Report& r, std::ostream& out, const TextOptions& opt = {});

/// Formats a number for people: 3 significant digits, no exponent for usual ranges.
std::string format_number(double v);

}  // namespace nodeprobe
