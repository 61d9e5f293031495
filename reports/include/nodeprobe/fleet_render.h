#pragma once
/// People's views of a fleet report: terminal text (a line per node, the
/// outliers, the slowest pairs, the drain list) and one self-contained HTML
/// page built from the node report's HTML building blocks.

#include <ostream>

#include "nodeprobe/fleet.h"

namespace nodeprobe {

/// `slowest`: how many pairs to list (the slowest first).
void render_fleet_text(const FleetReport& r, std::ostream& out, std::size_t slowest = 5);

void render_fleet_html(const FleetReport& r, std::ostream& out);

}  // namespace nodeprobe
