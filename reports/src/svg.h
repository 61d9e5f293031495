#pragma once
// Inline SVG charts for the HTML report (internal): no script, no external
// fonts or files; every point carries a <title> tooltip.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nodeprobe::svg {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y), any order
  bool dashed = false;                            ///< "before" series in a comparison
  int color = -1;                                 ///< palette index; -1: by position
};

struct LineChart {
  std::string title, x_label, y_label, y_unit;
  bool log2_x = false;       ///< message sizes
  bool x_bytes = false;      ///< tick labels as 1K, 64K, 1M ...
  std::optional<double> y_max_hint;  ///< e.g. 100 for percentages
  std::vector<Series> series;
};

struct Bar {
  std::string series;  ///< legend entry
  double value = 0;
  bool dashed = false;
  int color = -1;
};

struct BarGroup {
  std::string label;
  std::vector<Bar> bars;
  std::optional<double> reference;  ///< drawn as a marker line across the group (e.g. peak)
  std::string reference_label;
};

struct BarChart {
  std::string title, y_label, y_unit;
  std::vector<BarGroup> groups;
};

std::string line_chart(const LineChart& c);
std::string bar_chart(const BarChart& c);

/// XML-escapes text for SVG/HTML content and attributes.
std::string esc(const std::string& s);
/// Size in bytes as 8, 1K, 64K, 1M, 2G.
std::string bytes_label(double b);
/// Colour of palette index i.
const char* color(int i);

}  // namespace nodeprobe::svg
