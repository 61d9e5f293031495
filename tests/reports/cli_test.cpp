// `nodeprobe compare` and `nodeprobe report` as users run them: exit codes,
// one-line errors on bad input, every output format.
#include <gtest/gtest.h>

#include "format_checkers.h"
#include "nodeprobe/report_json.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

std::string bin(const std::string& name) { return std::string(NODEPROBE_BIN_DIR) + "/" + name; }

SpawnResult np(std::vector<std::string> args) {
  args.insert(args.begin(), bin("nodeprobe"));
  return testing::run(args, 60);
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(tmp.file("before.json"), dump_report(testing::chart_report(1.0, "before")));
    write_file(tmp.file("same.json"), dump_report(testing::chart_report(1.0, "again")));
    Report worse = testing::chart_report(0.7, "after");
    worse.host.nccl = "2.21.5";
    write_file(tmp.file("after.json"), dump_report(worse));
    write_file(tmp.file("better.json"), dump_report(testing::chart_report(1.3, "better")));
    write_file(tmp.file("garbage.json"), "{\"schema\": \"nodeprobe.report/1\", \"tool\": ");
    write_file(tmp.file("foreign.json"), "{\"benchmarks\": []}");
    Report future = testing::chart_report();
    future.schema = "nodeprobe.report/3";
    write_file(tmp.file("future.json"), dump_report(future));
  }
  TempDir tmp;
};

TEST_F(Cli, CompareExitCodesGateOnWorseMetrics) {
  auto r = np({"compare", tmp.file("before.json"), tmp.file("after.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("worse"), std::string::npos);
  EXPECT_NE(r.out.find("host nccl: 2.18.5 -> 2.21.5"), std::string::npos) << r.out;
  r = np({"compare", tmp.file("before.json"), tmp.file("better.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("no metric worse"), std::string::npos);
  r = np({"compare", tmp.file("before.json"), tmp.file("same.json")});
  EXPECT_EQ(r.exit_code, 0);
  // A 30 % drop passes a 50 % threshold.
  r = np({"compare", "--threshold", "50", tmp.file("before.json"), tmp.file("after.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST_F(Cli, CompareBadInputIsExit2WithOneLine) {
  for (const char* bad : {"garbage.json", "foreign.json", "future.json", "missing.json"}) {
    const auto r = np({"compare", tmp.file("before.json"), tmp.file(bad)});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("nodeprobe compare: ", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  const auto future = np({"compare", tmp.file("before.json"), tmp.file("future.json")});
  EXPECT_NE(future.err.find("nodeprobe.report/3 is not supported"), std::string::npos) << future.err;
  EXPECT_EQ(np({"compare", tmp.file("before.json")}).exit_code, 64);
  // A threshold that is not a finite, non-negative percentage: usage error, one line.
  for (const char* t : {"-3", "nan", "NaN", "inf"}) {
    const auto r = np({"compare", "--threshold", t, tmp.file("before.json"), tmp.file("after.json")});
    EXPECT_EQ(r.exit_code, 64) << t << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("threshold"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(Cli, CompareFormats) {
  auto r = np({"compare", "--format", "json", tmp.file("before.json"), tmp.file("after.json")});
  EXPECT_EQ(r.exit_code, 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "nodeprobe.compare/2");
  EXPECT_GT(j["summary"]["worse"].get<int>(), 0);
  r = np({"compare", "--format", "md", tmp.file("before.json"), tmp.file("after.json")});
  EXPECT_NE(r.out.find("| verdict | metric |"), std::string::npos);
  r = np({"compare", "--format", "html", "--out", tmp.file("c.html"), tmp.file("before.json"), tmp.file("after.json")});
  EXPECT_EQ(r.exit_code, 1);
  const std::string html = read_file(tmp.file("c.html"));
  EXPECT_NE(html.find("id=\"compare\""), std::string::npos);
  EXPECT_NE(html.find("(before)"), std::string::npos);
}

TEST_F(Cli, ReportRendersTextMarkdownJsonAndHtml) {
  auto r = np({"report", tmp.file("before.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: warn"), std::string::npos);
  r = np({"report", tmp.file("before.json"), "--format", "md"});
  EXPECT_NE(r.out.find("## nodeprobe report: **warn**"), std::string::npos);
  r = np({"report", tmp.file("before.json"), "--format", "json"});
  EXPECT_EQ(load_report(tmp.file("before.json")).run.label, parse_report(r.out, "stdout").run.label);
  r = np({"report", tmp.file("after.json"), "--compare", tmp.file("before.json"), "--html", tmp.file("r.html")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // --html alone writes the page, not text
  const std::string html = read_file(tmp.file("r.html"));
  EXPECT_NE(html.find("id=\"chart-busbw\""), std::string::npos);
  EXPECT_NE(html.find("id=\"compare\""), std::string::npos);
  r = np({"report", tmp.file("after.json"), "--compare", tmp.file("before.json"), "--format", "text"});
  EXPECT_NE(r.out.find("before: "), std::string::npos);
}

TEST_F(Cli, ReportBadInputIsExit2WithOneLine) {
  for (const char* bad : {"garbage.json", "foreign.json", "future.json", "missing.json"}) {
    const auto r = np({"report", tmp.file(bad), "--html", tmp.file("x.html")});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("nodeprobe report: ", 0), 0u) << r.err;
  }
  EXPECT_NE(np({"report", tmp.file("garbage.json")}).err.find("not valid JSON"), std::string::npos);
  EXPECT_NE(np({"report", tmp.file("foreign.json")}).err.find("not a nodeprobe report"), std::string::npos);
  EXPECT_EQ(np({"report", tmp.file("before.json"), "--compare", tmp.file("garbage.json")}).exit_code, 2);
  EXPECT_EQ(np({"report", tmp.file("before.json"), "--html", "/nonexistent/x.html"}).exit_code, 2);
  EXPECT_EQ(np({"report", tmp.file("before.json"), "--format", "yaml"}).exit_code, 64);
  const auto nan = np({"report", tmp.file("after.json"), "--compare", tmp.file("before.json"), "--threshold", "nan"});
  EXPECT_EQ(nan.exit_code, 64);
  EXPECT_EQ(std::count(nan.err.begin(), nan.err.end(), '\n'), 1) << nan.err;
}

TEST_F(Cli, ProbeExecutablesExportThroughTheCommonFlags) {
  const auto r = testing::run({bin("nodeprobe-limits"), "--quiet", "--passive", "--prometheus", tmp.file("l.prom"),
                               "--cloudwatch-emf", tmp.file("l.emf"), "--junit", tmp.file("l.xml")},
                              60);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.describe() << r.err;
  std::vector<testing::PromFamily> fams;
  EXPECT_EQ(testing::check_prometheus(read_file(tmp.file("l.prom")), &fams), "");
  bool has_checks = false;
  for (const auto& f : fams) has_checks |= f.name == "nodeprobe_check_status" && !f.samples.empty();
  EXPECT_TRUE(has_checks);
  EXPECT_EQ(testing::check_emf(read_file(tmp.file("l.emf"))), "");
  testing::XmlNode root;
  EXPECT_EQ(testing::check_junit(read_file(tmp.file("l.xml")), &root), "");
  EXPECT_EQ(*root.children.at(0).attr("name"), "nodeprobe-limits.limits");
  const auto bad = testing::run({bin("nodeprobe-limits"), "--quiet", "--junit", "/nonexistent/x.xml"}, 60);
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace nodeprobe
