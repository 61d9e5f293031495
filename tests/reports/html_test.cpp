// The HTML page: self-contained, escaped, with charts built from what the
// report holds (and nothing invented for what it lacks).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "format_checkers.h"
#include "nodeprobe/compare.h"
#include "nodeprobe/render_html.h"
#include "nodeprobe/render_markdown.h"
#include "report_fixtures.h"

namespace nodeprobe {
namespace {

std::string page(const Report& r, const HtmlOptions& o = {}) {
  std::ostringstream s;
  render_html(r, s, o);
  return s.str();
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Html, SelfContainedWithCspAndNoExternalReferences) {
  const std::string h = page(testing::chart_report());
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  // No URL the browser would fetch: no src= or href= other than fragments and data:.
  const std::regex ref(R"re((src|href)\s*=\s*"([^"]*)")re");
  for (std::sregex_iterator it(h.begin(), h.end(), ref), end; it != end; ++it) {
    const std::string url = (*it)[2];
    EXPECT_TRUE(url.rfind("#", 0) == 0 || url.rfind("data:", 0) == 0) << url;
  }
  EXPECT_EQ(h.find("http://"), h.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(h.find("https://"), std::string::npos);
  EXPECT_EQ(h.find("@import"), std::string::npos);
  EXPECT_EQ(h.find("url("), std::string::npos);
}

TEST(Html, ChartsForBusbwGemmAndIoAreInlineSvg) {
  const std::string h = page(testing::chart_report());
  for (const char* id : {"chart-busbw", "chart-gemm", "chart-io-workers-throughput", "chart-io-workers-au"})
    EXPECT_NE(h.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(count(h, "<svg "), 4u);
  EXPECT_EQ(count(h, "<polyline"), 2u /*busbw*/ + 1u /*io mb/s*/ + 1u /*io au*/);
  EXPECT_EQ(count(h, "class=\"ref\""), 4u);  // the GEMM peak marker per precision
  // Each SVG is well-formed XML on its own.
  for (auto p = h.find("<svg "); p != std::string::npos; p = h.find("<svg ", p + 1)) {
    const auto end = h.find("</svg>", p);
    testing::XmlNode n;
    EXPECT_EQ(testing::parse_xml(h.substr(p, end + 6 - p), &n), "");
  }
  EXPECT_NE(h.find("id=\"limits\""), std::string::npos);
  EXPECT_NE(h.find("net.core.somaxconn = 65535"), std::string::npos);  // the remedy
}

TEST(Html, ReportWithoutMetricsHasNoChartsButExplainsSkips) {
  Report r = testing::base_report();
  testing::add_probe(r, "gemm", Status::kSkip, "not available: nodeprobe-gemm is not part of this build");
  const std::string h = page(r);
  EXPECT_EQ(h.find("<svg "), std::string::npos);
  EXPECT_NE(h.find("not available: nodeprobe-gemm is not part of this build"), std::string::npos);
}

TEST(Html, TextIsEscaped) {
  Report r = testing::base_report("<script>alert(1)</script>");
  testing::add_probe(r, "x\"><img src=y>", Status::kError, "a < b & \"c\"");
  const std::string h = page(r);
  EXPECT_EQ(h.find("<script>alert"), std::string::npos);
  EXPECT_EQ(h.find("<img"), std::string::npos);
  EXPECT_NE(h.find("a &lt; b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(count(h, "<script>"), 1u);  // ours only
}

TEST(Html, ComparisonAddsTableEnvironmentAndDashedBeforeSeries) {
  Report b = testing::chart_report(1.0, "before"), a = testing::chart_report(0.8, "after");
  a.host.nccl = "2.21.5";
  const Comparison c = compare_reports(b, a, {});
  HtmlOptions o;
  o.before = &b;
  o.comparison = &c;
  const std::string h = page(a, o);
  EXPECT_NE(h.find("id=\"compare\""), std::string::npos);
  EXPECT_NE(h.find("badge v-worse"), std::string::npos);
  EXPECT_NE(h.find("2.18.5"), std::string::npos);  // the environment diff
  EXPECT_NE(h.find("(before)"), std::string::npos);
  EXPECT_GT(count(h, "stroke-dasharray=\"5 3\""), 0u);
}

TEST(Markdown, TablesFindingsAndVerdict) {
  std::ostringstream s;
  render_markdown(testing::chart_report(), s);
  const std::string m = s.str();
  EXPECT_NE(m.find("| limits | warn |"), std::string::npos);
  EXPECT_NE(m.find("`limits.somaxconn`"), std::string::npos);
  EXPECT_NE(m.find("1. echo 'net.core.somaxconn = 65535'"), std::string::npos);
  EXPECT_NE(m.find("**verdict: warn**"), std::string::npos);
}

}  // namespace
}  // namespace nodeprobe
