// Chart axes for any double a report may carry (issue 14: report --html,
// compare --format html and report --compare crashed in svg.cpp on all
// values 5e-324, on +1.7e308 and -1.7e308 in one chart, and on NaN / inf).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <regex>
#include <sstream>

#include "axis.h"
#include "nodeprobe/compare.h"
#include "nodeprobe/render_compare.h"
#include "nodeprobe/render_html.h"
#include "nodeprobe/render_markdown.h"
#include "nodeprobe/render_text.h"
#include "report_fixtures.h"
#include "svg.h"

namespace nodeprobe {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void expect_drawable(const svg::Axis& a, double lo, double hi) {
  SCOPED_TRACE(::testing::Message() << "lo=" << lo << " hi=" << hi);
  ASSERT_GE(a.ticks.size(), 2u);
  EXPECT_LE(a.ticks.size(), 52u);
  for (std::size_t i = 0; i < a.ticks.size(); ++i) {
    EXPECT_TRUE(std::isfinite(a.ticks[i]));
    if (i > 0) {
      EXPECT_LT(a.ticks[i - 1], a.ticks[i]);
    }
  }
  EXPECT_EQ(a.lo, a.ticks.front());
  EXPECT_EQ(a.hi, a.ticks.back());
  // Finite data inside the range it asked for stays on the axis.
  if (std::isfinite(lo) && std::isfinite(hi)) {
    EXPECT_LE(a.lo, std::min(lo, hi));
    EXPECT_GE(a.hi, std::max(lo, hi));
  }
}

TEST(Axis, NiceTicksForOrdinaryRanges) {
  const svg::Axis a = svg::nice_axis(0, 97);
  EXPECT_EQ(a.ticks, (std::vector<double>{0, 20, 40, 60, 80, 100}));
  const svg::Axis b = svg::nice_axis(3, 3);  // one value: widened around it, 0-based
  expect_drawable(b, 3, 3);
  EXPECT_EQ(b.lo, 0);
}

TEST(Axis, ExtremeAndDegenerateRangesAreDrawable) {
  const double v[] = {0, 5e-324, -5e-324, 1e-310, DBL_MIN, 1e-300, 1, -1, 1e15, 1.7e308, -1.7e308, DBL_MAX,
                      -DBL_MAX, kInf, -kInf, kNaN};
  for (double lo : v)
    for (double hi : v) expect_drawable(svg::nice_axis(lo, hi), lo, hi);
  std::mt19937_64 rng(14);
  for (int i = 0; i < 20000; ++i) {  // any bit pattern is a double a report may hold
    double a, b;
    const std::uint64_t x = rng(), y = rng();
    std::memcpy(&a, &x, sizeof a);
    std::memcpy(&b, &y, sizeof b);
    expect_drawable(svg::nice_axis(a, b, 1 + static_cast<int>(i % 12)), a, b);
  }
}

TEST(Axis, FractionNeverOverflows) {
  EXPECT_DOUBLE_EQ(svg::axis_fraction(0, -1.7e308, 1.7e308), 0.5);
  EXPECT_DOUBLE_EQ(svg::axis_fraction(1.7e308, -1.7e308, 1.7e308), 1);
  EXPECT_DOUBLE_EQ(svg::axis_fraction(5, 5, 5), 0.5);
  EXPECT_DOUBLE_EQ(svg::axis_fraction(kNaN, 0, 1), 0);
  EXPECT_DOUBLE_EQ(svg::axis_fraction(kInf, 0, 1), 1);
}

// No NaN or infinity in any SVG number (a browser drops such elements).
void expect_clean_svg(const std::string& s) {
  static const std::regex bad(R"re(="[^"]*(nan|inf)[^"]*")re", std::regex::icase);
  std::smatch m;
  EXPECT_FALSE(std::regex_search(s, m, bad)) << m.str();
}

TEST(Axis, ChartsOfExtremeValues) {
  const std::vector<std::vector<double>> sets = {
      {5e-324, 5e-324, 5e-324}, {1.7e308, -1.7e308, 1}, {kNaN, kInf, -kInf, 2}, {kNaN}, {-1e-320, 1e-320}};
  for (const auto& ys : sets) {
    svg::LineChart lc;
    svg::Series s;
    for (std::size_t i = 0; i < ys.size(); ++i) s.points.push_back({std::ldexp(1.0, static_cast<int>(i) * 500 - 1000), ys[i]});
    lc.series.push_back(s);
    lc.log2_x = true;
    lc.x_bytes = true;
    expect_clean_svg(svg::line_chart(lc));
    lc.log2_x = false;
    for (auto& p : lc.series[0].points) p.first = p.second;  // extremes on x too
    expect_clean_svg(svg::line_chart(lc));
    svg::BarChart bc;
    svg::BarGroup g;
    for (double y : ys) g.bars.push_back({"s", y, false, -1});
    g.reference = ys.front();
    bc.groups.push_back(g);
    expect_clean_svg(svg::bar_chart(bc));
  }
}

// Every renderer on reports whose measured values are all extreme.
Report with_values(const Report& base, const std::function<double(std::size_t)>& value) {
  Report r = base;
  std::size_t i = 0;
  for (auto& p : r.probes)
    for (auto& m : p.metrics) {
      m.value = value(i++);
      if (m.stats) m.stats->median = m.stats->p5 = m.stats->p95 = m.stats->min = m.stats->max = m.value;
    }
  return r;
}

TEST(Axis, EveryRendererSurvivesExtremeReports) {
  const Report base = testing::chart_report();
  const std::vector<Report> extremes = {
      with_values(base, [](std::size_t) { return 5e-324; }),
      with_values(base, [](std::size_t i) { return i % 2 ? 1.7e308 : -1.7e308; }),
      with_values(base, [](std::size_t i) { return i % 3 == 0 ? kNaN : i % 3 == 1 ? kInf : -kInf; }),
      with_values(base, [](std::size_t) { return 0.0; }),
  };
  for (const auto& r : extremes) {
    std::ostringstream out;
    render_text(r, out, {});
    render_markdown(r, out);
    HtmlOptions h;
    std::ostringstream html;
    render_html(r, html, h);
    expect_clean_svg(html.str());
    for (const Report* before : {&base, &r}) {
      const Comparison c = compare_reports(*before, r, {}, "before.json", "after.json");
      render_compare_text(c, out, false);
      render_compare_markdown(c, out);
      HtmlOptions ch;
      ch.before = before;
      ch.comparison = &c;
      std::ostringstream page;
      render_html(r, page, ch);
      expect_clean_svg(page.str());
    }
  }
}

}  // namespace
}  // namespace nodeprobe
