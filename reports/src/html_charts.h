#pragma once
// Charts of the HTML report built from metric names and labels (internal).
// Each chart renders only what the report holds; a chart with no data is
// left out. Names are data here: adjust kLineCharts / the GEMM names when a
// probe names its metrics differently.

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
