#pragma once
/// Markdown rendering of one report (for tickets, PR comments, wikis).

#include <ostream>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// Host, probes with status and reason, non-passing checks with fixes, every
/// metric, findings with all remedy steps, verdict.
void render_markdown(const Report& r, std::ostream& out);

/// Escapes Markdown table/emphasis characters and folds newlines.
std::string markdown_escape(const std::string& s);

}  // namespace nodeprobe
