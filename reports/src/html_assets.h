#pragma once
// Inline CSS and script of the HTML report (internal).

namespace nodeprobe::html {

extern const char* const kCss;
/// Filters the metrics table; marks the page as rendered (data-render="ok"),
/// which the headless-browser test reads back.
extern const char* const kScript;

}  // namespace nodeprobe::html
