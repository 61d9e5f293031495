#pragma once
/// Renderings of a Comparison: terminal text, Markdown, JSON. (HTML is part
/// of render_html.h: the after-report's page with the comparison in it.)

#include <ostream>
#include <string>
#include <vector>

#include "nodeprobe/compare.h"

namespace nodeprobe {

/// Verdicts in the order people read them: worse, better, ambiguous, same, n/a.
int verdict_order(Verdict v);

/// Metric comparison table, one-sided metrics, status changes, environment diff.
void render_compare_text(const Comparison& c, std::ostream& out, bool color = false);
void render_compare_markdown(const Comparison& c, std::ostream& out);

/// Machine-readable comparison ("schema": "nodeprobe.compare/1").
Json compare_to_json(const Comparison& c);

/// "94.0 (90.1..96.2) %" as the descriptor shows the metric; "1.23" when no spread.
std::string format_side(const Side& s, const MetricDescriptor& d);

/// "probe/name{axes}" (#2 for a repeat).
std::string metric_label(const MetricDiff& d);

/// One line per cause: "io: workers 2 -> 1, prefetch 2 -> 1" and, indented,
/// what moved: "throughput -48.1 % worse (1523 -> 790 MB/s), AU ... worse".
std::vector<std::string> cause_lines(const Cause& c);
/// "+4.2 %", "-inf %", "n/a".
std::string format_delta(double pct);

}  // namespace nodeprobe
