#pragma once
// Charts of the HTML report, built from metric descriptors (internal): every
// metric whose descriptor names a chart is drawn in it, its x or group axis,
// scale, unit and range as the descriptor says; series are the remaining
// axes. A chart with no data is left out.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::html {

struct Chart {
  std::string id, title, svg, note;
};

/// Charts for `r`, with `before` (may be null) drawn dashed beside it.
std::vector<Chart> build_charts(const Report& r, const Report* before);

}  // namespace nodeprobe::html
