// The fleet's judgement on hand-made fleets: the schedule, robust outliers,
// pair slowness attributed to a node or a link, GPUs, limits that differ,
// actions, the drain list and the verdict; and the run-time model.
#include <gtest/gtest.h>

#include <set>

#include "fleet_test_util.h"
#include "nodeprobe/fleet_analysis.h"

namespace nodeprobe {
namespace {

using fleet_testing::make_fleet;
using fleet_testing::set_pair;

std::vector<const FleetOutlier*> of_kind(const FleetReport& r, const std::string& kind) {
  std::vector<const FleetOutlier*> v;
  for (const auto& o : r.outliers)
    if (o.kind == kind) v.push_back(&o);
  return v;
}

TEST(PairSchedule, EveryPairOnceAndNoNodeTwiceInARound) {
  for (int n = 2; n <= 17; ++n) {
    const auto rounds = pair_schedule(n);
    EXPECT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 ? n : n - 1)) << n;
    std::set<std::pair<int, int>> seen;
    for (const auto& round : rounds) {
      EXPECT_EQ(round.size(), static_cast<std::size_t>(n / 2)) << n;  // odd n: one bye per round
      std::set<int> busy;
      for (const auto& p : round) {
        EXPECT_LT(p.a, p.b);
        EXPECT_TRUE(busy.insert(p.a).second) << "node " << p.a << " twice in a round of " << n;
        EXPECT_TRUE(busy.insert(p.b).second) << "node " << p.b << " twice in a round of " << n;
        EXPECT_TRUE(seen.insert({p.a, p.b}).second) << "pair measured twice";
      }
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
  }
  EXPECT_TRUE(pair_schedule(1).empty());
  EXPECT_TRUE(pair_schedule(0).empty());
}

TEST(RobustSpread, MedianAndMadIgnoreTheOutlierItself) {
  const RobustSpread s = robust_spread({10, 10.2, 9.9, 10.1, 2.5});
  EXPECT_DOUBLE_EQ(s.median, 10);
  EXPECT_NEAR(s.mad, 0.1, 1e-9);
  EXPECT_EQ(s.n, 5u);
  EXPECT_EQ(robust_spread({}).n, 0u);
}

TEST(IsOutlier, ShareRuleMadRuleAndTheirFloor) {
  OutlierOptions o;
  const RobustSpread s = robust_spread({100, 101, 99, 100, 100, 101, 100, 99});
  std::string why;
  EXPECT_TRUE(is_outlier(80, s, Better::kHigher, o, &why));
  EXPECT_NE(why.find("0.80 x the fleet median"), std::string::npos) << why;
  // 93 is far beyond 5 MADs of a tight fleet and more than 5 % off: flagged by the MAD rule.
  EXPECT_TRUE(is_outlier(93, s, Better::kHigher, o, &why));
  EXPECT_NE(why.find("MADs below"), std::string::npos) << why;
  // 98 is beyond 5 MADs too, but only 2 % off: a tight fleet's jitter, not an outlier.
  EXPECT_FALSE(is_outlier(98, s, Better::kHigher, o));
  EXPECT_FALSE(is_outlier(130, s, Better::kHigher, o));  // faster is never an outlier
  // Lower is better (time): too high is the bad side.
  EXPECT_TRUE(is_outlier(130, s, Better::kLower, o, &why));
  EXPECT_FALSE(is_outlier(70, s, Better::kLower, o));
  EXPECT_FALSE(is_outlier(std::nan(""), s, Better::kHigher, o));
  EXPECT_FALSE(is_outlier(10, s, Better::kUnknown, o));
  // Fewer values than mad_min_n: the MAD of a handful of numbers is no spread,
  // only the share rule speaks.
  const RobustSpread few = robust_spread({100, 101, 99, 100});
  EXPECT_FALSE(is_outlier(93, few, Better::kHigher, o));
  EXPECT_TRUE(is_outlier(80, few, Better::kHigher, o));
}

TEST(JudgeFleet, OneHostAtAQuarterRateIsTheOnlyNodeOutlier) {
  FleetReport r = make_fleet(4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) set_pair(r, a, b, a == 2 || b == 2 ? 0.0062 : 0.0250);
  judge_fleet(r, {}, OutlierOptions{});
  const auto nodes = of_kind(r, "node");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->host, "h3");
  EXPECT_NEAR(nodes[0]->ratio, 0.25, 0.01);
  EXPECT_TRUE(of_kind(r, "link").empty()) << "a slow node's pairs are not link outliers";
  EXPECT_EQ(r.nodes[2].verdict, Status::kWarn);
  EXPECT_EQ(r.nodes[2].action, "reboot");
  ASSERT_EQ(r.drain.size(), 1u);
  EXPECT_EQ(r.drain[0].host, "h3");
  EXPECT_EQ(r.nodes[0].action, "none");
  EXPECT_EQ(r.nodes[0].verdict, Status::kPass);
  EXPECT_EQ(r.verdict, Status::kFail);  // a node to drain
  for (const auto& p : r.pairs) EXPECT_GT(p.ratio_to_median, 0);
}

TEST(JudgeFleet, OneSlowPairIsALinkOutlierNamingBothEndsAndNoNodeOutlier) {
  FleetReport r = make_fleet(4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) set_pair(r, a, b, a == 0 && b == 1 ? 0.0062 : 0.0250);
  judge_fleet(r, {}, OutlierOptions{});
  EXPECT_TRUE(of_kind(r, "node").empty());
  const auto links = of_kind(r, "link");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(std::set<std::string>({links[0]->host, links[0]->peer}), std::set<std::string>({"h1", "h2"}));
  EXPECT_NEAR(links[0]->ratio, 0.25, 0.01);
  EXPECT_EQ(links[0]->action, "contact-support");
  EXPECT_TRUE(r.drain.empty()) << "neither end is to blame";
  EXPECT_EQ(r.nodes[0].verdict, Status::kPass);
  EXPECT_EQ(r.verdict, Status::kWarn);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "fleet.outlier");
}

// Measured on a loaded CI machine (tests/fleet/netns_fleet_test.cpp, the link
// h1-h2 shaped to a quarter): the slow link and one noisy pair of h2 made h2's
// median 0.77 x, and h2 was called a node outlier to reboot. The slow link is
// set aside before the nodes are scored.
TEST(JudgeFleet, ASlowLinkAndOneNoisyPairDoNotMakeANodeOutlier) {
  FleetReport r = make_fleet(4);
  set_pair(r, 0, 1, 0.00127);
  set_pair(r, 1, 2, 0.00413);
  set_pair(r, 0, 2, 0.00536);
  set_pair(r, 1, 3, 0.00545);
  set_pair(r, 2, 3, 0.00548);
  set_pair(r, 0, 3, 0.00550);
  judge_fleet(r, {}, OutlierOptions{});
  EXPECT_TRUE(of_kind(r, "node").empty());
  const auto links = of_kind(r, "link");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(std::set<std::string>({links[0]->host, links[0]->peer}), std::set<std::string>({"h1", "h2"}));
  EXPECT_TRUE(r.drain.empty());
}

// Measured on this machine with no load (the same test): h3-h4's median was
// 0.82 x, but its fastest allreduce reached the others' speed. A link is slow
// in every allreduce; one that dipped is noise.
TEST(JudgeFleet, APairThatDippedButReachedItsEndsSpeedIsNoLink) {
  auto fleet = [](double best_of_h3_h4) {
    FleetReport r = make_fleet(4);
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) set_pair(r, a, b, 0.0055);
    FleetPair& p = r.pairs.back();  // h3-h4
    p.busbw = p.stats.min = p.stats.median = 0.0042;
    p.stats.max = best_of_h3_h4;
    judge_fleet(r, {}, OutlierOptions{});
    return r;
  };
  const FleetReport dipped = fleet(0.0054);
  EXPECT_TRUE(dipped.outliers.empty());
  EXPECT_EQ(dipped.verdict, Status::kPass);
  // The same median with every allreduce slow is the link.
  const FleetReport slow = fleet(0.0043);
  ASSERT_EQ(of_kind(slow, "link").size(), 1u);
  EXPECT_NE(of_kind(slow, "link")[0]->reason.find("best allreduce"), std::string::npos);
}

// Measured on the loaded 2-core CI machine (netns_fleet_test.cpp, h1-h2
// shaped to a quarter): besides the slow link, h2's other two pairs read
// 0.88 x and 0.81 x, so h2's median (0.845 x) fell below 85 % and h2 was a
// node to reboot. Each of those pairs reached the fleet's speed at least once:
// moments, not the node. A node slow in every allreduce stays an outlier.
TEST(JudgeFleet, ANodeWhosePairsReachedTheFleetsSpeedOnceIsNoOutlier) {
  auto fleet = [](double best_of_h2_pairs) {
    FleetReport r = make_fleet(4);
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        const double ratio = a == 0 && b == 1 ? 0.25 : a == 1 && b == 2 ? 0.88 : a == 1 && b == 3 ? 0.81 : 1;
        set_pair(r, a, b, 0.0055 * ratio);
        if (a == 1 && b >= 2) r.pairs.back().stats.max = std::max(r.pairs.back().busbw, best_of_h2_pairs);
      }
    judge_fleet(r, {}, OutlierOptions{});
    return r;
  };
  const FleetReport noisy = fleet(0.0054);
  EXPECT_TRUE(of_kind(noisy, "node").empty());
  ASSERT_EQ(of_kind(noisy, "link").size(), 1u);
  EXPECT_EQ(std::set<std::string>({of_kind(noisy, "link")[0]->host, of_kind(noisy, "link")[0]->peer}),
            std::set<std::string>({"h1", "h2"}));
  // The same medians with every allreduce slow: h2 is the node.
  const FleetReport slow = fleet(0);
  ASSERT_EQ(of_kind(slow, "node").size(), 1u);
  EXPECT_EQ(of_kind(slow, "node")[0]->host, "h2");
}

// Two slow pairs of three at one node: most of its pairs are slow, the node.
TEST(JudgeFleet, ANodeSlowInMostOfItsPairsIsTheNodeNotTwoLinks) {
  FleetReport r = make_fleet(4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) set_pair(r, a, b, a == 0 && b != 3 ? 0.006 : 0.025);
  judge_fleet(r, {}, OutlierOptions{});
  ASSERT_EQ(of_kind(r, "node").size(), 1u);
  EXPECT_EQ(of_kind(r, "node")[0]->host, "h1");
}

// The fleet measures a would-be node outlier's pairs again, alone, before it
// judges (fleet_phases.cpp): node_suspects names exactly the nodes the judge
// would call outliers as the pairs stand, and none when the slow pairs are
// one link's.
TEST(JudgeFleet, NodeSuspectsAreTheNodesTheJudgeWouldCallOutliers) {
  FleetReport slow_node = make_fleet(4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) set_pair(slow_node, a, b, a == 2 || b == 2 ? 0.006 : 0.025);
  EXPECT_EQ(node_suspects(slow_node, OutlierOptions{}), std::vector<std::string>({"h3"}));
  judge_fleet(slow_node, {}, OutlierOptions{});
  ASSERT_EQ(of_kind(slow_node, "node").size(), 1u);
  EXPECT_EQ(of_kind(slow_node, "node")[0]->host, "h3");

  FleetReport slow_link = make_fleet(4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) set_pair(slow_link, a, b, a == 0 && b == 1 ? 0.006 : 0.025);
  EXPECT_TRUE(node_suspects(slow_link, OutlierOptions{}).empty());
  EXPECT_EQ(link_suspects(slow_link, OutlierOptions{}).size(), 1u);

  // The pair that made the node slow measured again at the fleet's speed: no suspect.
  for (auto& p : slow_node.pairs)
    if (p.a == "h3" || p.b == "h3") p.busbw = p.stats.median = p.stats.max = 0.025;
  EXPECT_TRUE(node_suspects(slow_node, OutlierOptions{}).empty());

  FleetReport two = make_fleet(2);
  set_pair(two, 0, 1, 0.001);
  EXPECT_TRUE(node_suspects(two, OutlierOptions{}).empty());
}

TEST(JudgeFleet, ThreeNodesStillTellANodeFromALink) {
  FleetReport slow_node = make_fleet(3);
  set_pair(slow_node, 0, 1, 0.025);
  set_pair(slow_node, 0, 2, 0.006);
  set_pair(slow_node, 1, 2, 0.006);
  judge_fleet(slow_node, {}, OutlierOptions{});
  ASSERT_EQ(of_kind(slow_node, "node").size(), 1u);
  EXPECT_EQ(of_kind(slow_node, "node")[0]->host, "h3");

  FleetReport slow_link = make_fleet(3);
  set_pair(slow_link, 0, 1, 0.006);
  set_pair(slow_link, 0, 2, 0.025);
  set_pair(slow_link, 1, 2, 0.025);
  judge_fleet(slow_link, {}, OutlierOptions{});
  EXPECT_TRUE(of_kind(slow_link, "node").empty());
  ASSERT_EQ(of_kind(slow_link, "link").size(), 1u);
}

TEST(JudgeFleet, TwoNodesCannotBeJudgedAgainstEachOther) {
  FleetReport r = make_fleet(2);
  set_pair(r, 0, 1, 0.001);
  judge_fleet(r, {}, OutlierOptions{});
  EXPECT_TRUE(r.outliers.empty());
  EXPECT_EQ(r.verdict, Status::kPass);
}

TEST(JudgeFleet, ALostNodeIsDrainedAndTheRestJudgedWithoutIt) {
  FleetReport r = make_fleet(4);
  r.nodes[3].verdict = Status::kTimeout;
  r.nodes[3].timed_out_in = "pairs";
  r.nodes[3].reason = "silent for 6.1 s during pairs";
  set_pair(r, 0, 1, 0.025);
  set_pair(r, 0, 2, 0.025);
  set_pair(r, 1, 2, 0.024);
  judge_fleet(r, {}, OutlierOptions{});
  EXPECT_EQ(r.nodes[3].verdict, Status::kTimeout);
  EXPECT_EQ(r.nodes[3].action, "reboot");
  ASSERT_EQ(r.drain.size(), 1u);
  EXPECT_NE(r.drain[0].reason.find("lost during pairs"), std::string::npos);
  EXPECT_TRUE(r.outliers.empty());
  EXPECT_EQ(r.verdict, Status::kFail);
}

TEST(JudgeFleet, ASlowGpuIsAGpuOutlierAndAllSlowGpusOfAHostAreTheHost) {
  std::vector<Report> reps(4);
  for (int n = 0; n < 4; ++n)
    for (int g = 0; g < 4; ++g) {
      double v = 250;
      if (n == 1 && g == 2) v = 190;  // one GPU 24 % slower than its siblings
      if (n == 3) v = 150;            // every GPU of h4
      fleet_testing::add_metric(reps[static_cast<std::size_t>(n)], "gemm", "gemm.tflops", v,
                                {{"gpu", std::to_string(g)}, {"precision", "bf16"}, {"size", "8192"}});
    }
  FleetReport r = make_fleet(4);
  judge_fleet(r, fleet_testing::pointers(reps), OutlierOptions{});
  const auto gpus = of_kind(r, "gpu");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->host, "h2");
  EXPECT_EQ(gpus[0]->gpu, "2");
  EXPECT_EQ(gpus[0]->action, "reset-gpu");
  const auto nodes = of_kind(r, "node");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->host, "h4");
  EXPECT_NE(nodes[0]->reason.find("all 4 GPUs"), std::string::npos) << nodes[0]->reason;
  EXPECT_EQ(r.nodes[1].action, "reset-gpu");
  EXPECT_EQ(r.nodes[3].action, "reboot");
  // The node entries carry their key numbers.
  bool key = false;
  for (const auto& m : r.nodes[0].metrics) key |= m.labels.count("key") > 0;
  EXPECT_TRUE(key);
}

TEST(JudgeFleet, TheNodeWhoseLimitsDifferIsNamed) {
  std::vector<Report> reps(4);
  for (int n = 0; n < 4; ++n) {
    ProbeResult p;
    p.name = "limits";
    Check c;
    c.id = "limits.nofile.soft";
    c.status = n == 1 ? Status::kWarn : Status::kPass;
    c.observed = n == 1 ? "512" : "1048576";
    c.expected = ">= 65535";
    p.checks.push_back(c);
    Check same;
    same.id = "limits.thp";
    same.status = Status::kPass;
    same.observed = "madvise";
    p.checks.push_back(same);
    reps[static_cast<std::size_t>(n)].probes.push_back(p);
  }
  FleetReport r = make_fleet(4);
  judge_fleet(r, fleet_testing::pointers(reps), OutlierOptions{});
  ASSERT_EQ(r.outliers.size(), 1u);
  EXPECT_EQ(r.outliers[0].host, "h2");
  EXPECT_EQ(r.outliers[0].metric, "limits:limits.nofile.soft");
  EXPECT_EQ(r.outliers[0].action, "tune");
  EXPECT_NE(r.outliers[0].reason.find("3 of 4 nodes have 1048576"), std::string::npos) << r.outliers[0].reason;
  EXPECT_EQ(r.nodes[1].action, "tune");
  EXPECT_TRUE(r.drain.empty());
}

TEST(JudgeFleet, NodeFindingsGiveTheActionAndTheFirstProblem) {
  std::vector<Report> reps(3);
  Finding warn;
  warn.id = "limits.somaxconn";
  warn.severity = Severity::kWarn;
  warn.title = "net.core.somaxconn below recommendation";
  Finding err;
  err.id = "gpu.xid";
  err.severity = Severity::kError;
  err.title = "GPU Xid error reported by the driver";
  reps[0].findings = {warn};
  reps[1].findings = {warn, err};
  FleetReport r = make_fleet(3);
  judge_fleet(r, fleet_testing::pointers(reps), OutlierOptions{});
  EXPECT_EQ(r.nodes[0].action, "tune");
  EXPECT_EQ(r.nodes[0].verdict, Status::kWarn);
  EXPECT_EQ(r.nodes[1].action, "reboot");
  EXPECT_EQ(r.nodes[1].verdict, Status::kFail);
  EXPECT_EQ(r.nodes[1].reason, "gpu.xid: GPU Xid error reported by the driver");  // the problem behind the action
  EXPECT_EQ(r.nodes[2].action, "none");
  ASSERT_EQ(r.drain.size(), 1u);
  EXPECT_EQ(r.drain[0].host, "h2");
  EXPECT_EQ(r.drain[0].reason, "gpu.xid: GPU Xid error reported by the driver");
}

TEST(Actions, RankAndDrainAndThePlaybookActionWithSeverityFallback) {
  EXPECT_LT(fleet_action_rank("none"), fleet_action_rank("tune"));
  EXPECT_LT(fleet_action_rank("reset-gpu"), fleet_action_rank("reboot"));
  EXPECT_LT(fleet_action_rank("replace"), fleet_action_rank("contact-support"));
  EXPECT_EQ(fleet_action_rank("reformat"), -1);
  EXPECT_EQ(worse_action("tune", "reboot"), "reboot");
  EXPECT_FALSE(action_drains("tune"));
  EXPECT_FALSE(action_drains("restart-job"));
  EXPECT_TRUE(action_drains("reset-gpu"));
  EXPECT_TRUE(action_drains("contact-support"));
  Finding f;
  f.severity = Severity::kInfo;
  EXPECT_EQ(finding_action(f), "none");
  f.severity = Severity::kWarn;
  EXPECT_EQ(finding_action(f), "tune");
  f.severity = Severity::kError;
  EXPECT_EQ(finding_action(f), "reboot");
  // The playbook's action wins where the diagnosis gave one ...
  f.action = "restart-job";
  EXPECT_EQ(finding_action(f), "restart-job");
  f.severity = Severity::kWarn;
  f.action = "replace";
  EXPECT_EQ(finding_action(f), "replace");
  // ... but an informational finding asks for nothing, and an unknown action is not trusted.
  f.severity = Severity::kInfo;
  EXPECT_EQ(finding_action(f), "none");
  f.severity = Severity::kError;
  f.action = "reformat";
  EXPECT_EQ(finding_action(f), "reboot");
}

TEST(TimeModel, PairsGrowWithRoundsAndTheRestAsMeasured) {
  FleetTimings t;
  t.nodes = 4;
  t.startup_s = 2;
  t.local_s = 15;
  t.mesh_s = 0.2;
  t.round_s = {2, 3, 2.5};
  t.ring_point_s = {3};
  const Json m = fleet_time_model(t);
  EXPECT_DOUBLE_EQ(m["measured"]["total_s"].get<double>(), 2 + 15 + 0.2 + 7.5 + 3);
  ASSERT_EQ(m["predicted"].size(), 3u);
  const Json& p16 = m["predicted"][0];
  EXPECT_EQ(p16["nodes"], 16);
  EXPECT_EQ(p16["rounds"], 15);
  EXPECT_DOUBLE_EQ(p16["pairs_s"].get<double>(), 15 * 2.5);
  EXPECT_DOUBLE_EQ(p16["ring_s"].get<double>(), 3 * 3.0);  // 4, 8, 16 (the pairs gave 2)
  EXPECT_EQ(m["predicted"][2]["rounds"], 255);
  EXPECT_NEAR(m["predicted"][2]["mesh_s"].get<double>(), 0.2 * 4, 1e-9);  // 255 peers: 4 batches of 64
  t.repeats = 3;
  EXPECT_EQ(fleet_time_model(t, {5})["predicted"][0]["rounds"], 15);  // odd: 5 rounds, 3 repeats
}

}  // namespace
}  // namespace nodeprobe
