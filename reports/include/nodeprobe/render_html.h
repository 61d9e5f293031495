#pragma once
/// One self-contained HTML page for a report: inline CSS, a few lines of
/// inline script, inline SVG charts; no network fetch when viewed (a
/// Content-Security-Policy forbids any). With a comparison it also shows the
/// before/after table, the environment diff and "before" series in charts.

#include <ostream>
#include <string>

#include "nodeprobe/compare.h"
#include "nodeprobe/report.h"

namespace nodeprobe {

struct HtmlOptions {
  const Report* before = nullptr;          ///< baseline drawn beside `r` (dashed)
  const Comparison* comparison = nullptr;  ///< before -> r
  std::string title;                       ///< default: "nodeprobe report: HOST"
};

void render_html(const Report& r, std::ostream& out, const HtmlOptions& opt = {});

}  // namespace nodeprobe
