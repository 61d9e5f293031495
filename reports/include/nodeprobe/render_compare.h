#pragma once
/// Renderings of a Comparison: terminal text, Markdown, JSON. (HTML is part
/// of render_html.h: the after-report's page with the comparison in it.)

#include <ostream>

#include "nodeprobe/compare.h"

namespace nodeprobe {

/// Verdicts in the order people read them: worse, better, ambiguous, same, n/a.
int verdict_order(Verdict v);

/// Metric comparison table, one-sided metrics, status changes, environment diff.
void render_compare_text(const Comparison& c, std::ostream& out, bool color = false);
void render_compare_markdown(const Comparison& c, std::ostream& out);

/// Machine-readable comparison ("schema": "nodeprobe.compare/1").
Json compare_to_json(const Comparison& c);

/// "1.23 (1.20..1.30)" or "1.23" when no spread.
std::string format_side(const Side& s);
/// "+4.2 %", "-inf %", "n/a".
std::string format_delta(double pct);

}  // namespace nodeprobe
