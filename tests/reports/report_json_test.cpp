#include <gtest/gtest.h>

#include <cmath>

#include "nodeprobe/report_json.h"
#include "sample_report.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

TEST(ReportJson, RoundTripKeepsEveryField) {
  const Report a = testing::full_sample_report();
  const std::string text = dump_report(a);
  const Report b = parse_report(text, "mem");
  EXPECT_EQ(dump_report(b), text);
  ASSERT_EQ(b.probes.size(), 2u);
  EXPECT_EQ(b.probes[0].metrics[0].labels.at("provider"), "efa");
  ASSERT_TRUE(b.probes[0].metrics[0].stats.has_value());
  EXPECT_DOUBLE_EQ(b.probes[0].metrics[0].stats->p95, 42.8);
  EXPECT_FALSE(b.probes[0].metrics[1].stats.has_value());
  EXPECT_EQ(b.probes[0].metrics[1].better, Better::kLower);
  EXPECT_EQ(b.probes[0].checks[0].finding, "efa.fallback_tcp");
  EXPECT_EQ(b.findings[0].count, 3);
  EXPECT_EQ(b.findings[0].evidence[0].line, 42);
  EXPECT_EQ(b.findings[0].facts["interface"], "eth0");
  EXPECT_EQ(b.findings[0].action, "tune");
  EXPECT_EQ(b.action, "tune");
  EXPECT_EQ(b.host.env.at("FI_PROVIDER"), "efa");
  EXPECT_EQ(b.host.memory_bytes, 1204000000000LL);
  EXPECT_EQ(b.verdict, Status::kWarn);
}

TEST(ReportJson, KeysAreInContractOrder) {
  const std::string text = dump_report(testing::full_sample_report());
  const char* order[] = {"\"schema\"", "\"tool\"", "\"run\"", "\"host\"",
                         "\"probes\"", "\"findings\"", "\"verdict\""};
  std::size_t last = 0;
  for (const char* k : order) {
    const auto pos = text.find(k);
    ASSERT_NE(pos, std::string::npos) << k;
    EXPECT_GT(pos, last) << k;
    last = pos;
  }
}

TEST(ReportJson, UnknownEnumStringsMapToUnknown) {
  Json j = testing::full_sample_report();
  j["probes"][0]["status"] = "exploded";
  j["probes"][0]["metrics"][0]["better"] = "sideways";
  j["findings"][0]["severity"] = "apocalyptic";
  const Report r = parse_report(j.dump(), "mem");
  EXPECT_EQ(r.probes[0].status, Status::kUnknown);
  EXPECT_EQ(r.probes[0].metrics[0].better, Better::kUnknown);
  EXPECT_EQ(r.findings[0].severity, Severity::kUnknown);
}

TEST(ReportJson, NullNumbersReadAsNaN) {
  Json j = testing::full_sample_report();
  j["probes"][0]["metrics"][0]["value"] = nullptr;
  const Report r = parse_report(j.dump(), "mem");
  EXPECT_TRUE(std::isnan(r.probes[0].metrics[0].value));
}

void expect_one_line_error(const std::string& text, const std::string& fragment) {
  try {
    parse_report(text, "in.json");
    FAIL() << "accepted: " << text.substr(0, 80);
  } catch (const ReportError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind("in.json: ", 0), 0u) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(ReportJson, MalformedAndForeignInputGiveOneLineErrors) {
  expect_one_line_error("{\"schema\": ", "not valid JSON");
  expect_one_line_error("\x01\x02garbage", "not valid JSON");
  expect_one_line_error("[1,2,3]", "top level is not an object");
  expect_one_line_error("{\"name\": \"package.json\"}", "no \"schema\" field");
  expect_one_line_error("{\"schema\": \"https://json-schema.org/draft-07\"}", "not a nodeprobe report");
  expect_one_line_error("{\"schema\": \"nodeprobe.report/3\"}", "not supported");
  expect_one_line_error("{\"schema\": \"nodeprobe.report/1\", \"tool\": {}}", "malformed report");
  Json j = testing::full_sample_report();
  j["probes"][0]["metrics"][0]["value"] = "fast";
  expect_one_line_error(j.dump(), "malformed report");
}

TEST(ReportJson, MinorVersionsOfTheSameMajorAreRead) {
  Json j = testing::full_sample_report();
  j["schema"] = "nodeprobe.report/2.3";
  EXPECT_NO_THROW(parse_report(j.dump(), "mem"));
}

TEST(ReportJson, WritesSchema2AndReadsSchema1) {
  const Report r = testing::full_sample_report();
  EXPECT_EQ(Json(r)["schema"], "nodeprobe.report/2");
  // A /1 report has no descriptors and keeps its schema when read.
  Json j = Json(r);
  j["schema"] = "nodeprobe.report/1";
  j["probes"][0].erase("descriptors");
  j["probes"][0].erase("environment");
  const Report old = parse_report(j.dump(), "v1.json");
  EXPECT_EQ(old.schema, "nodeprobe.report/1");
  EXPECT_TRUE(old.probes[0].descriptors.empty());
  EXPECT_EQ(old.probes[0].metrics.size(), 2u);
}

TEST(ReportJson, DescriptorsRoundTrip) {
  const Report r = testing::full_sample_report();
  const Report back = parse_report(dump_report(r), "mem");
  ASSERT_EQ(back.probes[0].descriptors.size(), 3u);
  const MetricDescriptor& d = back.probes[0].descriptors[0];
  EXPECT_EQ(d.name, "busbw");
  EXPECT_EQ(d.kind, MetricKind::kMeasured);
  EXPECT_EQ(d.axes, (std::vector<std::string>{"size", "provider"}));
  EXPECT_EQ(d.chart.id, "busbw");
  EXPECT_TRUE(d.chart.x_log2);
  EXPECT_EQ(d.key.rank, 1);
  const MetricDescriptor& pct = back.probes[0].descriptors[2];
  EXPECT_EQ(pct.kind, MetricKind::kCount);
  EXPECT_EQ(pct.display.scale, 100);
  EXPECT_EQ(pct.display.unit, "%");
  ASSERT_TRUE(pct.display.max);
  EXPECT_EQ(*pct.display.max, 100);
  EXPECT_EQ(back.probes[0].environment, r.probes[0].environment);
  EXPECT_EQ(dump_report(back), dump_report(r));
}

TEST(ReportJson, RunToRunFactorRoundTripsAndNonsenseMeansNone) {
  Report r = testing::full_sample_report();
  r.probes[0].descriptors[0].run_to_run = 2.5;
  Json j = Json::parse(dump_report(r));
  EXPECT_EQ(j["probes"][0]["descriptors"][0]["run_to_run"], 2.5);
  EXPECT_FALSE(j["probes"][0]["descriptors"][1].contains("run_to_run")) << "1 (none) is left out";
  EXPECT_EQ(parse_report(j.dump(), "mem").probes[0].descriptors[0].run_to_run, 2.5);
  for (const Json& bad : {Json(0.5), Json(-3), Json("x")}) {
    j["probes"][0]["descriptors"][0]["run_to_run"] = bad;
    EXPECT_EQ(parse_report(j.dump(), "mem").probes[0].descriptors[0].run_to_run, 1) << bad.dump();
  }
  r.probes[0].descriptors[0].run_to_run_where = {{"cache=warm", 1.5}};
  j = Json::parse(dump_report(r));
  EXPECT_EQ(j["probes"][0]["descriptors"][0]["run_to_run_where"]["cache=warm"], 1.5);
  EXPECT_EQ(parse_report(j.dump(), "mem").probes[0].descriptors[0].run_to_run_where.at("cache=warm"), 1.5);
  j["probes"][0]["descriptors"][0]["run_to_run_where"] = {{"cache=warm", 0.5}, {"nolabel", 2}, {"cache=cold", "x"}};
  EXPECT_TRUE(parse_report(j.dump(), "mem").probes[0].descriptors[0].run_to_run_where.empty());
  // The factor for a metric: the larger of the descriptor's own and the matching label's.
  MetricDescriptor d;
  d.run_to_run = 1.2;
  d.run_to_run_where = {{"cache=warm", 1.5}};
  EXPECT_EQ(run_to_run_for(d, {{"cache", "warm"}, {"layout", "files"}}), 1.5);
  EXPECT_EQ(run_to_run_for(d, {{"cache", "cold"}}), 1.2);
}

TEST(ReportJson, LoadReportNamesTheFile) {
  testing::TempDir d;
  try {
    load_report(d.file("absent.json"));
    FAIL();
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open " + d.file("absent.json") + ": "), std::string::npos) << e.what();
  }
  testing::write_file(d.file("empty.json"), "");
  EXPECT_THROW(load_report(d.file("empty.json")), ReportError);
}

TEST(Verdict, FindingsRaiseIt) {
  Report r = testing::full_sample_report();
  r.probes[0].status = Status::kPass;
  r.findings[0].severity = Severity::kInfo;
  EXPECT_EQ(compute_verdict(r), Status::kPass);
  r.findings[0].severity = Severity::kWarn;
  EXPECT_EQ(compute_verdict(r), Status::kWarn);
  r.findings[0].severity = Severity::kError;
  EXPECT_EQ(compute_verdict(r), Status::kFail);
  r.probes.clear();
  r.findings.clear();
  EXPECT_EQ(compute_verdict(r), Status::kSkip);
}

}  // namespace
}  // namespace nodeprobe
