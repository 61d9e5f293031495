// The HTML report opened in headless Chromium (OS package `chromium`): it
// renders, its script runs to the end (data-render="ok" in the DOM), the
// console stays silent (no error, no blocked fetch), and a screenshot is
// taken. A control page with a deliberate script error proves the console
// scan would catch one. Skips with the reason when no Chromium is installed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "nodeprobe/report_json.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "headless_shell"})
    for (const char* dir : {"/usr/bin/", "/usr/local/bin/", "/usr/lib64/chromium-browser/", "/snap/bin/"}) {
      const std::string p = std::string(dir) + name;
      if (::access(p.c_str(), X_OK) == 0) return p;
    }
  return {};
}

std::vector<std::string> chromium_argv(const std::string& exe, const TempDir& tmp) {
  return {exe,
          "--headless",
          "--no-sandbox",  // CI runs as root
          "--disable-gpu",
          "--disable-dev-shm-usage",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--disable-extensions",
          "--host-resolver-rules=MAP * ~NOTFOUND",
          "--user-data-dir=" + tmp.file("profile"),
          "--enable-logging=stderr",
          "--v=0"};
}

/// Console lines Chromium logged for the page ("CONSOLE" messages, blocked loads).
std::string console_lines(const std::string& log) {
  std::istringstream in(log);
  std::string out;
  for (std::string l; std::getline(in, l);)
    if (l.find(":CONSOLE") != std::string::npos || l.find("Refused to") != std::string::npos ||
        l.find("net::ERR_") != std::string::npos)
      out += l + "\n";
  return out;
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    exe = find_chromium();
    if (exe.empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium, or dnf install chromium-headless)";
  }
  SpawnResult open(const std::string& page, std::vector<std::string> extra) {
    auto argv = chromium_argv(exe, tmp);
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("file://" + page);
    return testing::run(argv, 90);
  }
  std::string exe;
  TempDir tmp;
};

TEST_F(Browser, ReportRendersWithoutConsoleErrorsAndScreenshots) {
  Report before = testing::chart_report(1.0, "before"), after = testing::chart_report(0.8, "after");
  write_file(tmp.file("before.json"), dump_report(before));
  write_file(tmp.file("after.json"), dump_report(after));
  auto r = testing::run({std::string(NODEPROBE_BIN_DIR) + "/nodeprobe", "report", tmp.file("after.json"),
                         "--compare", tmp.file("before.json"), "--html", tmp.file("report.html")});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = open(tmp.file("report.html"), {"--dump-dom"});
  ASSERT_TRUE(r.exited_ok()) << r.describe() << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("data-render=\"ok\""), std::string::npos) << "the page script did not finish";
  EXPECT_NE(r.out.find("id=\"chart-busbw\""), std::string::npos);
  EXPECT_EQ(console_lines(r.err), "");

  r = open(tmp.file("report.html"), {"--screenshot=" + tmp.file("report.png"), "--window-size=1280,1800",
                                     "--hide-scrollbars"});
  ASSERT_TRUE(r.exited_ok()) << r.describe();
  const std::string png = read_file(tmp.file("report.png"));
  ASSERT_GT(png.size(), 10000u);  // a blank page compresses to far less
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  if (const char* keep = std::getenv("NODEPROBE_KEEP_SCREENSHOT")) std::filesystem::copy_file(tmp.file("report.png"), keep,
                                                                        std::filesystem::copy_options::overwrite_existing);
}

/// The tick labels on the y axis of one chart in the DOM Chromium rendered.
std::vector<std::string> dom_y_ticks(const std::string& dom, const std::string& chart_id) {
  std::vector<std::string> out;
  const auto at = dom.find("id=\"chart-" + chart_id + "\"");
  if (at == std::string::npos) return out;
  const std::string svg = dom.substr(at, dom.find("</svg>", at) - at);
  const std::string mark = "class=\"tk\" text-anchor=\"end\">";
  for (auto p = svg.find(mark); p != std::string::npos; p = svg.find(mark, p + 1)) {
    const auto b = p + mark.size();
    out.push_back(svg.substr(b, svg.find('<', b) - b));
  }
  return out;
}

// Golden reports of the real probes (scripts/golden-reports.sh), rendered by
// `nodeprobe report` and opened in Chromium: the AU axis runs 0..100 %, the
// io-sweep draws its workers charts, the allreduce legend tells shm from tcp.
TEST_F(Browser, GoldenReportsChartAuInPercentWorkersAndDistinctLegends) {
  const std::string golden = std::string(NODEPROBE_FIXTURES) + "/reports/";
  const std::string nodeprobe = std::string(NODEPROBE_BIN_DIR) + "/nodeprobe";
  for (const char* name : {"io-sweep", "allreduce"}) {
    const auto r = testing::run({nodeprobe, "report", golden + name + ".json", "--html", tmp.file(std::string(name) + ".html")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto sweep = open(tmp.file("io-sweep.html"), {"--dump-dom"});
  ASSERT_TRUE(sweep.exited_ok()) << sweep.describe();
  EXPECT_NE(sweep.out.find("data-render=\"ok\""), std::string::npos);
  EXPECT_EQ(console_lines(sweep.err), "");
  const auto ticks = dom_y_ticks(sweep.out, "io-workers-au");
  ASSERT_FALSE(ticks.empty()) << "no AU vs workers chart from io-sweep in the rendered page";
  EXPECT_EQ(ticks.front(), "0");
  EXPECT_EQ(ticks.back(), "100");
  EXPECT_NE(sweep.out.find(">AU (%)<"), std::string::npos);
  EXPECT_FALSE(dom_y_ticks(sweep.out, "io-workers-samples").empty());

  auto ar = open(tmp.file("allreduce.html"), {"--dump-dom"});
  ASSERT_TRUE(ar.exited_ok()) << ar.describe();
  const auto at = ar.out.find("id=\"chart-busbw\"");
  ASSERT_NE(at, std::string::npos);
  const std::string svg = ar.out.substr(at, ar.out.find("</svg>", at) - at);
  EXPECT_NE(svg.find(">provider=shm</tspan>"), std::string::npos);
  EXPECT_NE(svg.find(">provider=tcp</tspan>"), std::string::npos);

  // And the pages are painted: a screenshot of each, far from blank.
  for (const char* name : {"io-sweep", "allreduce"}) {
    const auto shot = open(tmp.file(std::string(name) + ".html"),
                           {"--screenshot=" + tmp.file(std::string(name) + ".png"), "--window-size=1280,1400", "--hide-scrollbars"});
    ASSERT_TRUE(shot.exited_ok()) << shot.describe();
    const std::string png = read_file(tmp.file(std::string(name) + ".png"));
    EXPECT_GT(png.size(), 30000u) << name;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  }
}

TEST_F(Browser, TheConsoleScanCatchesAScriptErrorAndABlockedFetch) {
  write_file(tmp.file("bad.html"),
             "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
             "script-src 'unsafe-inline'\"></head><body><img src=\"http://198.18.0.1/x.png\">"
             "<script>undefinedFunction();</script></body></html>");
  const auto r = open(tmp.file("bad.html"), {"--dump-dom"});
  const std::string lines = console_lines(r.err);
  EXPECT_NE(lines.find("Uncaught ReferenceError"), std::string::npos) << r.err.substr(0, 3000);
  EXPECT_NE(lines.find("Content Security Policy"), std::string::npos) << lines;  // the fetch was blocked and logged
}

}  // namespace
}  // namespace nodeprobe
