// The fleet report: JSON round trip, the JSON Schema (validated with an
// independent validator), loading errors, text and HTML, and compare.
#include <gtest/gtest.h>

#include <sstream>

#include "fleet_test_util.h"
#include "nodeprobe/fleet_analysis.h"
#include "nodeprobe/fleet_compare.h"
#include "nodeprobe/fleet_json.h"
#include "nodeprobe/fleet_render.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

const std::string kSchema = std::string(NODEPROBE_SOURCE_DIR) + "/reports/schema/fleet.schema.json";

// A judged 4-node fleet with one slow host, a lost node's pair, a ring and a mesh.
FleetReport sample() {
  FleetReport r = fleet_testing::make_fleet(5);
  r.config = {{"profile", "quick"}, {"pairs", "quick"}, {"target", "fabric:tcp"}};
  r.phases.push_back({"local", Status::kPass, 12.5, 90, "", 5});
  r.phases.push_back({"pairs", Status::kTimeout, 9.1, 180, "lost h5", 5});
  r.nodes[4].verdict = Status::kTimeout;
  r.nodes[4].timed_out_in = "pairs";
  r.nodes[4].reason = "silent for 6 s during pairs";
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) fleet_testing::set_pair(r, a, b, a == 2 || b == 2 ? 0.006 : 0.025);
  FleetPair lost;
  lost.a = "h1";
  lost.b = "h5";
  lost.rank_b = 4;
  lost.status = Status::kTimeout;
  lost.reason = "not measured: h5 was lost before its round";
  r.pairs.push_back(lost);
  FleetRingPoint two;
  two.nodes = 2;
  two.source = "pairs";
  two.bytes = 8 << 20;
  two.busbw = 0.025;
  two.retention = 1;
  FleetRingPoint four = two;
  four.nodes = 4;
  four.source = "ring";
  four.busbw = 0.006;
  four.retention = 0.24;
  r.ring = {two, four};
  r.mesh = {{"check", {{"status", "pass"}}}};
  FleetTimings t;
  t.nodes = 5;
  t.round_s = {2, 2, 2, 2, 2};
  r.model = fleet_time_model(t);
  judge_fleet(r, {}, OutlierOptions{});
  return r;
}

TEST(FleetJson, RoundTripKeepsEveryField) {
  const FleetReport r = sample();
  const std::string text = dump_fleet_report(r);
  const FleetReport back = parse_fleet_report(text, "sample");
  EXPECT_EQ(dump_fleet_report(back), text);
  EXPECT_EQ(back.nodes.size(), 5u);
  EXPECT_EQ(back.nodes[4].timed_out_in, "pairs");
  EXPECT_EQ(back.outliers.size(), r.outliers.size());
  EXPECT_EQ(back.ring[0].source, "pairs");
  EXPECT_EQ(document_schema(text), "nodeprobe.fleet/1");
}

TEST(FleetJson, ValidAgainstTheSchema) {
  bool available = false;
  const Json j = fleet_to_json(sample());
  const std::string errors = testing::schema_errors(nlohmann::json::parse(j.dump()), &available, kSchema);
  if (!available) GTEST_SKIP() << "no JSON Schema validator in this build";
  EXPECT_EQ(errors, "");
  // The schema is not a rubber stamp: a link outlier without its peer fails.
  Json bad = j;
  bad["outliers"] = Json::array({{{"kind", "link"}, {"host", "h1"}, {"metric", "pair_busbw"}, {"value", 1},
                                  {"fleet_median", 1}, {"ratio", 1}, {"reason", "x"}}});
  EXPECT_NE(testing::schema_errors(nlohmann::json::parse(bad.dump()), nullptr, kSchema), "");
  Json bad_action = j;
  bad_action["nodes"][0]["action"] = "reformat";
  EXPECT_NE(testing::schema_errors(nlohmann::json::parse(bad_action.dump()), nullptr, kSchema), "");
}

TEST(FleetJson, ForeignDocumentsAreRefusedInOneLine) {
  EXPECT_THROW(parse_fleet_report("{", "x"), ReportError);
  try {
    parse_fleet_report(R"({"schema":"nodeprobe.report/1"})", "node.json");
    FAIL();
  } catch (const ReportError& e) {
    EXPECT_EQ(std::string(e.what()), "node.json: not a nodeprobe fleet report (schema \"nodeprobe.report/1\")");
  }
  EXPECT_THROW(parse_fleet_report(R"({"schema":"nodeprobe.fleet/2"})", "x"), ReportError);
  EXPECT_THROW(parse_fleet_report(R"({"schema":"nodeprobe.fleet/1","tool":{}})", "x"), ReportError);
  EXPECT_EQ(document_schema("not json"), "");
}

TEST(FleetText, ALinePerNodeThenOutliersThenSlowestPairs) {
  std::ostringstream o;
  render_fleet_text(sample(), o, 3);
  const std::string t = o.str();
  for (const char* want : {"nodeprobe fleet: 5 node(s), verdict fail", "h3 ", "timeout", "outliers", "node h3: slow in its pairs",
                           "slowest pairs (6 measured of 7)", "h1 <-> h5: timeout", "ring allreduce: 2 nodes (median pair)",
                           "drain", "h5 (reboot): lost during pairs", "model: 16 nodes"})
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
  EXPECT_LT(t.find("outliers"), t.find("slowest pairs"));
  // Slowest first: a pair with h3 is listed before a fast one.
  EXPECT_LT(t.find("h3    "), t.find("h4    "));
}

TEST(FleetHtml, SelfContainedPageWithEverySection) {
  std::ostringstream o;
  render_fleet_html(sample(), o);
  const std::string h = o.str();
  for (const char* want : {"<!DOCTYPE html>", "id=\"nodes\"", "id=\"outliers\"", "id=\"pairs\"", "id=\"ring\"",
                           "id=\"drain\"", "id=\"phases\"", "<svg", "cell lo", "default-src 'none'"})
    EXPECT_NE(h.find(want), std::string::npos) << want;
  EXPECT_EQ(h.find("src=\"http"), std::string::npos);
  EXPECT_EQ(h.find("href=\"http"), std::string::npos);
  EXPECT_EQ(h.find("<script src"), std::string::npos);
}

TEST(FleetCompare, NodesArePairedByHostAndPairsByTheirEnds) {
  FleetReport before = sample();
  FleetReport after = sample();
  // After a fix h3 is as fast as the others; h1 left, h9 came.
  for (auto& p : after.pairs)
    if (p.status == Status::kPass) {
      p.busbw = 0.025;
      p.stats.median = p.stats.mean = p.stats.min = p.stats.max = p.stats.p5 = p.stats.p95 = 0.025;
    }
  after.nodes[0].host = "h9";
  for (auto& p : after.pairs) {
    if (p.a == "h1") p.a = "h9";
    if (p.b == "h1") p.b = "h9";
  }
  after.outliers.clear();
  after.drain.clear();
  after.nodes[2].verdict = Status::kPass;
  after.nodes[2].action = "none";
  after.nodes[2].findings.clear();
  after.nodes[2].metrics.clear();
  const FleetComparison c = compare_fleets(before, after, CompareOptions{}, "before.json", "after.json");
  EXPECT_EQ(c.only_before, std::vector<std::string>({"h1"}));
  EXPECT_EQ(c.only_after, std::vector<std::string>({"h9"}));
  ASSERT_EQ(c.changes.size(), 1u);
  EXPECT_EQ(c.changes[0].host, "h3");
  EXPECT_EQ(c.changes[0].action_before, "reboot");
  EXPECT_EQ(c.changes[0].action_after, "none");
  // h2<->h3 got 4x faster; pairs with h1/h9 have no partner on the other side.
  int better = 0, pairs = 0;
  for (const auto& d : c.metrics) {
    if (d.probe != "pair") continue;
    ++pairs;
    if (d.judgement.verdict == Verdict::kBetter) ++better;
    EXPECT_TRUE(d.labels.at("a") != "h1" && d.labels.at("b") != "h1");
  }
  EXPECT_EQ(pairs, 3);  // h2-h3, h2-h4, h3-h4
  EXPECT_EQ(better, 2);
  EXPECT_FALSE(c.any_worse());
  std::ostringstream t;
  render_fleet_compare_text(c, t);
  EXPECT_NE(t.str().find("node h3: warn (reboot) -> pass (none)"), std::string::npos) << t.str();
  EXPECT_EQ(fleet_compare_to_json(c)["schema"], "nodeprobe.fleet-compare/1");
  const FleetComparison back = compare_fleets(after, before, CompareOptions{});
  EXPECT_TRUE(back.any_worse());
  EXPECT_TRUE(c.settings.empty());
}

// Pairs carried by NCCL are not the same measurement as pairs over libfabric:
// the change of backend is named as the likely cause; run-specific settings
// (deadlines, the interface address) are not.
TEST(FleetCompare, ASettingThatChangesTheMeasurementIsNamed) {
  FleetReport before = sample(), after = sample();
  before.config = {{"profile", "quick"}, {"pair_target", "fabric:tcp"}, {"timeout_s", 60},
                   {"interface", {{"ip", "198.18.0.1"}}}, {"pair_bytes", 4194304}};
  after.config = {{"profile", "quick"}, {"pair_target", "nccl"}, {"timeout_s", 90},
                  {"interface", {{"ip", "198.18.0.9"}}}};
  const FleetComparison c = compare_fleets(before, after, CompareOptions{});
  ASSERT_EQ(c.settings, std::vector<std::string>({"pair_target fabric:tcp -> nccl"}))
      << "pair_bytes is not recorded after: nothing said of it";
  std::ostringstream t, md;
  render_fleet_compare_text(c, t);
  EXPECT_NE(t.str().find("setting changed (the likely cause of what moved): pair_target fabric:tcp -> nccl\n"),
            std::string::npos)
      << t.str();
  render_fleet_compare_markdown(c, md);
  EXPECT_NE(md.str().find("`pair_target fabric:tcp -> nccl`"), std::string::npos) << md.str();
  EXPECT_EQ(fleet_compare_to_json(c)["settings_changed"][0], "pair_target fabric:tcp -> nccl");
}

}  // namespace
}  // namespace nodeprobe
