// Each exporter against its format's rules, checked by the strict parsers
// in format_checkers.cpp (and the checkers against known-bad documents, so a
// lenient checker cannot make these tests pass).
#include <gtest/gtest.h>

#include <cmath>

#include "format_checkers.h"
#include "nodeprobe/exporters.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/metric_select.h"
#include "report_fixtures.h"

namespace nodeprobe {
namespace {

using testing::add_probe;
using testing::base_report;
using testing::check_emf;
using testing::check_junit;
using testing::check_prometheus;
using testing::metric;
using testing::PromFamily;

const PromFamily* family(const std::vector<PromFamily>& fams, const std::string& name) {
  for (const auto& f : fams)
    if (f.name == name) return &f;
  return nullptr;
}

Report nasty_report() {
  // Label values and texts with every character the formats must escape.
  Report r = testing::chart_report();
  auto& p = r.probes[add_probe(r, "io.bad", Status::kFail, "read \"failed\"\nat <offset> & 'later' \\ \x01")];
  p.metrics.push_back(metric("mb_per_s", 12.5, "MB/s", Better::kHigher,
                             {{"path", "/data/a \"b\"\\c\nd"}, {"9bad-label", "x"}, {"__reserved", "y"},
                              {"probe", "shadow"}}));
  p.metrics.push_back(metric("mb_per_s", std::nan(""), "MB/s", Better::kHigher, {{"workers", "99"}}));
  p.metrics.push_back(metric("odd.metric-name", 3, "widgets/s", Better::kHigher));
  p.metrics.push_back(metric("bytes", 1, "B", Better::kHigher, {{"invalid_utf8", "\xff\xfe ok"}}));
  Check c;
  c.id = "io.files";
  c.status = Status::kFail;
  c.observed = "0 <files>";
  c.expected = "> 0";
  c.fix = "nodeprobe-io prepare --dir D";
  c.finding = "storage.slow";
  p.checks.push_back(c);
  r.findings = findings_from_checks(r.probes);
  Finding log;
  log.id = "selinux.avc";
  log.severity = Severity::kError;
  log.title = "SELinux denied an access (AVC)";
  log.evidence = {{"/var/log/audit/audit.log", 12, "avc: denied { read } for pid=1 comm=\"python\""}};
  log.remedy = {"audit2allow -M nccl < /var/log/audit/audit.log", "semodule -i nccl.pp"};
  r.findings.push_back(log);
  r.verdict = compute_verdict(r);
  return r;
}

TEST(Prometheus, StrictParserAcceptsTheExportAndValuesAreInBaseUnits) {
  const Report r = nasty_report();
  const std::string text = to_prometheus(r);
  std::vector<PromFamily> fams;
  ASSERT_EQ(check_prometheus(text, &fams), "") << text;
  const PromFamily* busbw = family(fams, "nodeprobe_allreduce_busbw_bytes_per_second");
  ASSERT_TRUE(busbw) << text;
  EXPECT_EQ(busbw->type, "gauge");
  EXPECT_EQ(busbw->samples.size(), 20u);
  for (const auto& s : busbw->samples) {
    EXPECT_TRUE(s.labels.count("size"));
    EXPECT_TRUE(s.labels.count("probe"));
    EXPECT_GT(s.value, 1e6);  // GB/s exported as bytes per second
  }
  // AU is a fraction (its descriptor's unit): exported as a ratio, 0..1.
  const PromFamily* au = family(fams, "nodeprobe_io_sweep_au_ratio");
  ASSERT_TRUE(au);
  for (const auto& s : au->samples) EXPECT_LE(s.value, 1.0);
  const PromFamily* gemm = family(fams, "nodeprobe_gemm_gemm_tflops_flop_per_second");
  ASSERT_TRUE(gemm);
  // Escaped label values come back intact; bad label names were repaired.
  const PromFamily* mb = family(fams, "nodeprobe_io_mb_per_s_bytes_per_second");
  ASSERT_TRUE(mb);
  bool found = false;
  for (const auto& s : mb->samples)
    if (s.labels.count("path")) {
      found = true;
      EXPECT_EQ(s.labels.at("path"), "/data/a \"b\"\\c\nd");
      EXPECT_EQ(s.labels.at("_9bad_label"), "x");
      EXPECT_EQ(s.labels.at("label__reserved"), "y");
      EXPECT_EQ(s.labels.at("metric_probe"), "shadow");
      EXPECT_EQ(s.labels.at("probe"), "io.bad");
    } else if (s.labels.count("workers") && s.labels.at("workers") == "99") {
      EXPECT_TRUE(std::isnan(s.value));
    }
  EXPECT_TRUE(found);
  EXPECT_TRUE(family(fams, "nodeprobe_io_odd_metric_name_widgets_per_s"));
  // State sets: exactly one status is 1 per probe.
  const PromFamily* st = family(fams, "nodeprobe_probe_status");
  ASSERT_TRUE(st);
  std::map<std::string, double> ones;
  for (const auto& s : st->samples) ones[s.labels.at("probe")] += s.value;
  for (const auto& [probe, n] : ones) EXPECT_EQ(n, 1.0) << probe;
  EXPECT_TRUE(family(fams, "nodeprobe_verdict"));
  EXPECT_TRUE(family(fams, "nodeprobe_check_status"));
  EXPECT_TRUE(family(fams, "nodeprobe_findings"));
  EXPECT_TRUE(family(fams, "nodeprobe_run_timestamp_seconds"));
}

TEST(Prometheus, DuplicateSeriesAreLeftOutNotEmitted) {
  Report r = base_report();
  auto& p = r.probes[add_probe(r, "gemm", Status::kPass)];
  p.metrics = {metric("t", 1, "", Better::kHigher), metric("t", 2, "", Better::kHigher)};
  const std::string text = to_prometheus(r);
  EXPECT_EQ(check_prometheus(text), "") << text;
  EXPECT_NE(text.find("# nodeprobe: 1 duplicate series left out"), std::string::npos);
}

TEST(Prometheus, CheckerRejectsViolations) {
  EXPECT_NE(check_prometheus("# TYPE a gauge\na 1"), "");                            // no final newline
  EXPECT_NE(check_prometheus("a 1\n"), "");                                          // no TYPE
  EXPECT_NE(check_prometheus("# TYPE 1a gauge\n1a 1\n"), "");                        // bad name
  EXPECT_NE(check_prometheus("# TYPE a gauge\na{x=\"\\t\"} 1\n"), "");               // bad escape
  EXPECT_NE(check_prometheus("# TYPE a gauge\na{__x=\"1\"} 1\n"), "");               // reserved label
  EXPECT_NE(check_prometheus("# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n"), "");         // dup label
  EXPECT_NE(check_prometheus("# TYPE a gauge\na 1 1700000000\n"), "");               // timestamp
  EXPECT_NE(check_prometheus("# TYPE a gauge\na 1\na 2\n"), "");                     // dup series
  EXPECT_NE(check_prometheus("# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x=\"1\"} 1\n"), "");  // not contiguous
  EXPECT_NE(check_prometheus("# TYPE a gauge\n# TYPE a gauge\na 1\n"), "");          // two TYPEs
  EXPECT_NE(check_prometheus("# TYPE a gauge\na one\n"), "");                        // bad value
  EXPECT_NE(check_prometheus("# HELP a x \\q\n# TYPE a gauge\na 1\n"), "");          // bad HELP escape
  EXPECT_EQ(check_prometheus("# HELP a x \\n y\n# TYPE a gauge\na{b=\"\\\"\"} NaN\n"), "");
}

TEST(Emf, StrictCheckerAcceptsTheExport) {
  const Report r = nasty_report();
  EmfOptions opt;
  opt.timestamp_ms = 1767225600000;
  const std::string text = to_cloudwatch_emf(r, opt);
  std::size_t records = 0;
  ASSERT_EQ(check_emf(text, &records), "") << text;
  // The run, one per probe, one per (probe, label set).
  EXPECT_GT(records, r.probes.size() + 1);
  // A NaN value is left out rather than written (EMF values must be numbers).
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_NE(text.find("\"Unit\":\"Gigabytes/Second\""), std::string::npos);
  EXPECT_NE(text.find("\"Namespace\":\"nodeprobe\""), std::string::npos);
  EXPECT_NE(text.find("\"InstanceType\":\"p4d.24xlarge\""), std::string::npos);
}

TEST(Emf, SplitsDirectivesAtOneHundredMetricsAndCapsDimensions) {
  Report r = base_report();
  auto& p = r.probes[add_probe(r, "gemm", Status::kPass)];
  Labels many;
  for (int i = 0; i < 40; ++i) many["l" + std::to_string(i)] = "v";
  for (int i = 0; i < 250; ++i) p.metrics.push_back(metric("m" + std::to_string(i), i, "s", Better::kLower, many));
  const std::string text = to_cloudwatch_emf(r);
  std::size_t records = 0;
  ASSERT_EQ(check_emf(text, &records), "");
  EXPECT_EQ(records, 1u + 1u + 3u);  // run, probe, 250 metrics in 3 directives
}

TEST(Emf, CheckerRejectsViolations) {
  const std::string ok =
      R"({"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["D"]],"Metrics":[{"Name":"m","Unit":"Seconds"}]}]},"D":"x","m":1})";
  EXPECT_EQ(check_emf(ok + "\n"), "");
  EXPECT_NE(check_emf(R"({"D":"x","m":1})" "\n"), "");  // no _aws
  EXPECT_NE(check_emf(R"({"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["D"]],"Metrics":[{"Name":"m"}]}]},"m":1})" "\n"), "");  // dim missing
  EXPECT_NE(check_emf(R"({"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"m","Unit":"Furlongs"}]}]},"m":1})" "\n"), "");
  EXPECT_NE(check_emf(R"({"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"m"}]}]},"m":"1"})" "\n"), "");
  EXPECT_NE(check_emf("not json\n"), "");
}

TEST(Junit, StrictCheckerAcceptsTheExportWithFindingsAndRemedies) {
  const Report r = nasty_report();
  const std::string text = to_junit(r);
  testing::XmlNode root;
  ASSERT_EQ(check_junit(text, &root), "") << text;
  // A suite per probe plus the log-derived findings suite.
  EXPECT_EQ(root.children.size(), r.probes.size() + 1);
  bool saw_failure_with_remedy = false, saw_error = false, saw_warn = false, saw_orphan = false;
  for (const auto& suite : root.children)
    for (const auto& tc : suite.children)
      for (const auto& o : tc.children) {
        if (o.name == "failure" && *tc.attr("name") == "io.files") {
          EXPECT_EQ(*o.attr("type"), "storage.slow");
          EXPECT_EQ(*o.attr("message"), "Storage slower than expected");
          EXPECT_NE(o.text.find("1. nodeprobe-io prepare --dir D"), std::string::npos);
          saw_failure_with_remedy = true;
        }
        if (o.name == "failure" && *tc.attr("name") == "selinux.avc") {
          EXPECT_NE(o.text.find("1. audit2allow -M nccl"), std::string::npos);
          saw_orphan = true;
        }
        if (o.name == "failure" && *tc.attr("name") == "io.bad") saw_error = true;
        if (o.name == "system-out" && o.text.rfind("WARN: ", 0) == 0) saw_warn = true;
      }
  EXPECT_TRUE(saw_failure_with_remedy);
  EXPECT_TRUE(saw_orphan);
  EXPECT_TRUE(saw_error);
  EXPECT_TRUE(saw_warn);
}

TEST(Junit, CheckerRejectsViolations) {
  EXPECT_NE(check_junit("<testsuites><testsuite name=\"a\"></testsuites>"), "");  // mis-nested
  EXPECT_NE(check_junit("<testsuites a=\"1\" a=\"2\"/>"), "");                      // dup attribute
  EXPECT_NE(check_junit("<testsuites>&nbsp;</testsuites>"), "");                    // unknown entity
  EXPECT_NE(check_junit("<testsuites>\x01</testsuites>"), "");                      // control char
  EXPECT_NE(check_junit("<testsuite/>"), "");                                        // wrong root
  const std::string suite =
      "<testsuites><testsuite name=\"s\" tests=\"2\" failures=\"0\" errors=\"0\" time=\"0\" "
      "timestamp=\"2026-01-01T00:00:00\" hostname=\"h\"><testcase classname=\"c\" name=\"n\" time=\"0\"/>"
      "</testsuite></testsuites>";
  EXPECT_NE(check_junit(suite), "");  // tests="2" but one case
  std::string good = suite;
  good.replace(good.find("tests=\"2\""), 9, "tests=\"1\"");
  EXPECT_EQ(check_junit(good), "");
}

TEST(Utf8, InvalidSequencesAreReplaced) {
  EXPECT_EQ(sanitize_utf8("ok \xc3\xa9"), "ok \xc3\xa9");
  EXPECT_EQ(sanitize_utf8("\xff"), "\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_utf8("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(sanitize_utf8("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_NEAR(iso8601_to_epoch("2026-01-01T00:00:10.500Z"), 1767225610.5, 1e-6);
}

}  // namespace
}  // namespace nodeprobe
