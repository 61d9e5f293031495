// The executable's surface: help, version, JSON-only stdout, report shape.
#include <gtest/gtest.h>

#include "io_test_util.h"
#include "test_support.h"

namespace nodeprobe::io::testing {
namespace {

TEST(IoCli, HelpAndVersion) {
  const auto bin = nodeprobe::testing::bin("nodeprobe-io");
  auto r = nodeprobe::testing::run({bin, "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.describe() << " " << r.start_error << " " << r.err;
  for (const char* sub : {"prepare", "read", "sweep", "clean", "accept"})
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
  r = nodeprobe::testing::run({bin, "read", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--prefetch"), std::string::npos);
  EXPECT_NE(r.out.find("--cold"), std::string::npos);
  r = nodeprobe::testing::run({bin, "--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("nodeprobe-io"), std::string::npos);
}

TEST(IoCli, JsonDashKeepsStdoutPureAndReportsValidate) {
  Scratch s(NODEPROBE_IO_SCRATCH);
  const IoRun p = run_io({"prepare", "--dir", s.sub("ds"), "--files", "16", "--size", "512k", "--size-spread", "0",
                          "--shards", "2"});
  ASSERT_EQ(p.proc.exit_code, 0) << p.proc.err;
  EXPECT_EQ(report_problems(p.report), "");  // the whole stdout parsed as one JSON document
  EXPECT_EQ(p.probe().at("name"), "io-prepare");
  EXPECT_EQ(p.report.at("tool").at("name"), "nodeprobe-io");
  EXPECT_GT(p.metric("write_throughput"), 0);
  // Its spread: 16 samples of 512 kB make 2 windows (8 samples, 4 MB or more each), each written and synced.
  EXPECT_EQ(p.probe().at("metrics").at(0).at("stats").at("n"), 2);

  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "-w", "1", "--label", "t1"});
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  EXPECT_EQ(report_problems(r.report), "");
  EXPECT_EQ(r.report.at("run").at("label"), "t1");
  EXPECT_EQ(r.report.at("verdict"), "pass");
  for (const char* k : {"workers", "batch", "prefetch", "method", "cache", "step_ms", "pin", "dir"})
    EXPECT_TRUE(r.probe().at("config").contains(k)) << k;

  const IoRun c = run_io({"clean", "--dir", s.sub("ds")});
  ASSERT_EQ(c.proc.exit_code, 0) << c.proc.err;
  EXPECT_EQ(report_problems(c.report), "");
  EXPECT_EQ(c.probe().at("name"), "io-clean");
}

TEST(IoCli, RunnerStyleArgumentsAfterTheSubcommand) {
  // nodeprobe accept appends --json PATH --quiet --timeout S after the probe's own arguments.
  Scratch s(NODEPROBE_IO_SCRATCH);
  const auto out = s.sub("r.json");
  const auto r = nodeprobe::testing::run({nodeprobe::testing::bin("nodeprobe-io"), "accept", "--data-dir", s.path(),
                                          "--profile", "quick", "--json", out, "--quiet", "--timeout", "60"},
                                         90);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  const auto doc = nlohmann::json::parse(nodeprobe::testing::read_file(out));
  EXPECT_EQ(report_problems(doc), "");
  EXPECT_EQ(doc.at("probes").at(0).at("name"), "io");
}

}  // namespace
}  // namespace nodeprobe::io::testing
