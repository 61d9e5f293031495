#include <gtest/gtest.h>

#include <algorithm>

#include "ar_math.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/stats.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/report_json.h"
#include "report_build.h"
#include "test_support.h"

namespace nodeprobe::allreduce {
namespace {

Placement measured(double time_us, double busbw, long wrong, std::vector<double> ranks = {}) {
  Placement p;
  p.measured = true;
  p.time_us = time_us;
  p.algbw = busbw / 1.5;
  p.busbw = busbw;
  p.wrong = wrong;
  p.rank_time_us = std::move(ranks);
  return p;
}

RunData sample() {
  RunData d;
  d.nranks = 4;
  d.hosts.rank_host = {"h1", "h2", "h3", "h4"};
  d.hosts.hosts = d.hosts.rank_host;
  d.hosts.rank_node = {0, 1, 2, 3};
  TargetResult f;
  f.target = {"fabric", "tcp"};
  f.transport = "tcp;ofi_rxm";
  f.rank_devices = {"cpu", "cpu", "cpu", "cpu"};
  SizeRow r;
  r.bytes = 1 << 20;
  r.count = r.bytes / 4;
  r.oop = measured(1000, 1.5, 0, {1000, 1010, 990, 2500});
  r.ip = measured(900, 1.6, 0);
  f.rows = {r};
  TargetResult m = f;
  m.target = {"mpi", ""};
  m.transport = "ob1:tcp";
  m.rows[0].oop = measured(2000, 0.75, 0, {2000, 2000, 2000, 2000});
  d.targets = {f, m};
  d.compare = true;
  return d;
}

/// The first metric `name` of a target ("fabric:tcp", "mpi"; "" = any).
const Metric* find_metric(const ProbeResult& p, const std::string& name, const std::string& target) {
  for (const auto& m : p.metrics) {
    if (m.name != name) continue;
    if (target.empty()) return &m;
    const auto b = m.labels.find("backend"), pr = m.labels.find("provider");
    if (b == m.labels.end() || pr == m.labels.end()) continue;
    if (b->second == target || b->second + ":" + pr->second == target) return &m;
  }
  return nullptr;
}

const Check* find_check(const ProbeResult& p, const std::string& id) {
  for (const auto& c : p.checks)
    if (c.id == id) return &c;
  return nullptr;
}

TEST(ReportBuild, MetricsCarryTheirAxesAndSettingsStayInConfig) {
  RunData d = sample();
  d.config = Json{{"datatype", "float"}, {"op", "sum"}, {"iters", 20}};
  const ProbeResult p = build_probe(d);
  EXPECT_TRUE(descriptor_problems(p).empty());
  const Metric* m = find_metric(p, "busbw", "fabric:tcp");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->unit, "GB/s");
  EXPECT_EQ(m->labels, (Labels{{"backend", "fabric"}, {"provider", "tcp"}, {"size", "1048576"},
                               {"placement", "out-of-place"}}));
  EXPECT_EQ(p.config.at("datatype"), "float");
  // The requested provider is the axis; what MPI really used is environment.
  EXPECT_EQ(find_metric(p, "busbw", "mpi")->labels.at("provider"), "auto");
  EXPECT_EQ(p.environment.at("transport.mpi"), "ob1:tcp");
  const Metric* ratio = find_metric(p, "busbw_ratio", "");
  ASSERT_NE(ratio, nullptr);
  EXPECT_DOUBLE_EQ(ratio->value, 2.0);
}

TEST(ReportBuild, TimeAlgbwAndBusbwShareTheirSamples) {
  RunData d = sample();
  Placement& p = d.targets[0].rows[0].oop;
  p.time_stats = compute_stats({900, 1000, 1100, 1000, 950});
  p.time_us = 990;
  p.algbw = algbw_gbps(d.targets[0].rows[0].bytes, 990e-6);
  p.busbw = allreduce_busbw(p.algbw, d.nranks);
  const ProbeResult r = build_probe(d);
  const Metric* t = find_metric(r, "time", "fabric:tcp");
  const Metric* a = find_metric(r, "algbw", "fabric:tcp");
  const Metric* b = find_metric(r, "busbw", "fabric:tcp");
  ASSERT_TRUE(t && a && b && t->stats && a->stats && b->stats);
  EXPECT_EQ(t->stats->n, 5u);
  EXPECT_EQ(a->stats->n, 5u);
  // The slowest iteration is the lowest bandwidth; busbw is algbw x 2(n-1)/n throughout.
  EXPECT_NEAR(a->stats->min, algbw_gbps(1 << 20, 1100e-6), 1e-12);
  EXPECT_NEAR(a->stats->max, algbw_gbps(1 << 20, 900e-6), 1e-12);
  EXPECT_NEAR(b->stats->p5 / a->stats->p5, 1.5, 1e-12);
  EXPECT_NEAR(b->stats->median / a->stats->median, 1.5, 1e-12);
  // A placement measured without per-iteration samples still has its one sample.
  EXPECT_EQ(find_metric(r, "time", "mpi")->stats->n, 1u);
}

TEST(ReportBuild, StragglerNamedAndPerRankRows) {
  const ProbeResult p = build_probe(sample());
  const Check* s = find_check(p, "ranks.stragglers");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->status, Status::kWarn);
  EXPECT_NE(s->observed.find("rank 3 (host h4)"), std::string::npos);
  EXPECT_EQ(p.status, Status::kWarn);
  ASSERT_EQ(p.data["ranks"].size(), 4u);
  EXPECT_EQ(p.data["ranks"][3]["host"], "h4");
  EXPECT_DOUBLE_EQ(p.data["ranks"][3]["targets"]["fabric:tcp"]["time_us"].get<double>(), 2500);
}

TEST(ReportBuild, OversubscribedRanksAreNotComparedForStragglers) {
  RunData d = sample();
  d.hosts.oversubscribed = cpu_oversubscription({"m1", "m1", "m1", "m1"}, {"0", "1", "0-1", "1"});
  ASSERT_EQ(d.hosts.oversubscribed, "4 ranks (0-3) share 2 CPUs on one machine");
  const ProbeResult p = build_probe(d);
  const Check* s = find_check(p, "ranks.stragglers");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->status, Status::kSkip);
  EXPECT_EQ(s->observed.rfind("not judged: 4 ranks (0-3) share 2 CPUs on one machine (slowest: rank 3 (host h4)", 0),
            0u)
      << s->observed;
  // The slow rank is still listed in data, and the run is not warned for it.
  EXPECT_EQ(p.data["stragglers"].size(), 1u);
  EXPECT_EQ(p.status, Status::kPass);
  EXPECT_EQ(p.environment.at("oversubscribed"), d.hosts.oversubscribed);
}

TEST(ReportBuild, CpuOversubscriptionCountsEachMachinesCpuUnion) {
  // One rank bound to each core of a machine is not oversubscribed...
  EXPECT_EQ(cpu_oversubscription({"a", "a", "a", "a"}, {"0", "1", "2", "3"}), "");
  // ...nor are two VMs (own boot ids) with one CPU each.
  EXPECT_EQ(cpu_oversubscription({"a", "b"}, {"0", "0"}), "");
  // Ranks on two machines: only the crowded one is named, with its ranks.
  EXPECT_EQ(cpu_oversubscription({"a", "b", "a", "b", "a"}, {"0-1", "0-7", "0-1", "0-7", "1"}),
            "3 ranks (0,2,4) share 2 CPUs on one machine");
  EXPECT_EQ(cpu_oversubscription({"a", "a", "b", "b"}, {"3", "3", "0", "0"}),
            "2 ranks (0-1) share 1 CPU on one machine; 2 ranks (2-3) share 1 CPU on one machine");
  // An unreadable or malformed list is not judged.
  EXPECT_EQ(cpu_oversubscription({"a", "a", "a"}, {"", "0", "x"}), "");
  EXPECT_EQ(cpu_oversubscription({"a", "a"}, {"0-", "3-1"}), "");
  // This process's own list reads back.
  const std::string mine = affinity_list();
  EXPECT_FALSE(mine.empty());
  EXPECT_EQ(cpu_oversubscription({"a"}, {mine}), "");
}

TEST(ReportBuild, WrongDataFailsWhateverTheSpeed) {
  RunData d = sample();
  d.targets[1].rows[0].ip.wrong = 3;
  d.targets[1].status = Status::kFail;
  const ProbeResult p = build_probe(d);
  EXPECT_EQ(p.status, Status::kFail);
  EXPECT_EQ(find_check(p, "data.mpi")->status, Status::kFail);
  EXPECT_EQ(find_check(p, "data.fabric.tcp")->status, Status::kPass);
}

TEST(ReportBuild, SkippedTargetIsVisibleButDoesNotFail) {
  RunData d = sample();
  d.targets[0].rows[0].oop.rank_time_us = {1, 1, 1, 1};
  TargetResult n;
  n.target = {"nccl", ""};
  n.status = Status::kSkip;
  n.reason = "no usable GPU: cudaGetDeviceCount() failed: cudaErrorNoDevice (100)";
  d.targets.push_back(n);
  d.compare = false;
  const ProbeResult p = build_probe(d);
  EXPECT_EQ(p.status, Status::kPass);
  EXPECT_EQ(find_check(p, "target.nccl")->status, Status::kSkip);
  RunData only;
  only.targets = {n};
  const ProbeResult s = build_probe(only);
  EXPECT_EQ(s.status, Status::kSkip);
  EXPECT_NE(s.reason.find("cudaErrorNoDevice"), std::string::npos);
}

TEST(ReportBuild, ForcedTimeoutKeepsWhatFinished) {
  const ProbeResult p = build_probe(sample(), Status::kTimeout, "deadline passed; rank 2 silent");
  EXPECT_EQ(p.status, Status::kTimeout);
  EXPECT_EQ(p.reason, "deadline passed; rank 2 silent");
  EXPECT_NE(find_metric(p, "busbw", "mpi"), nullptr);
}

TEST(ReportBuild, MeshFailureRaisesNetUnreachable) {
  RunData d;
  d.nranks = 2;
  d.hosts.rank_host = {"a", "b"};
  MeshResult m;
  m.ip = {"10.0.0.1", "10.0.0.2"};
  m.port = {29400, 29400};
  m.listen_error = {"", ""};
  MeshLink ok;
  ok.from = 0;
  ok.to = 1;
  ok.ok = true;
  ok.rtt_us = 50;
  MeshLink bad;
  bad.from = 1;
  bad.to = 0;
  bad.error = "timed out after 2 s";
  bad.target = "10.0.0.1:29400";
  m.links = {ok, bad};
  d.mesh = m;
  const ProbeResult p = build_probe(d);
  const Check* c = find_check(p, "mesh.reachability");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kFail);
  EXPECT_EQ(c->finding, "net.unreachable");
  EXPECT_NE(c->observed.find("b (rank 1) -> a (10.0.0.1:29400): timed out"), std::string::npos);
  EXPECT_EQ(p.data["mesh"]["rtt_us"][0][1].get<double>(), 50);
  EXPECT_TRUE(p.data["mesh"]["rtt_us"][1][0].is_null());
  EXPECT_EQ(p.status, Status::kFail);
}

TEST(ReportBuild, ReportValidatesAgainstTheSchema) {
  RunData d = sample();
  ScalingResult s;
  ScalingPoint pt;
  pt.nodes = 1;
  pt.ranks = 1;
  pt.step_s = 0.1;
  s.points = {pt};
  d.scaling = s;
  d.scaling_target = "mpi";
  const char* argv[] = {"nodeprobe-allreduce"};
  Report r = new_report("nodeprobe-allreduce", 1, const_cast<char**>(argv), "");
  r.host.hostname = "h1";
  r.probes = {build_probe(d)};
  r.findings = findings_from_checks(r.probes);
  r.verdict = compute_verdict(r);
  Json j;
  to_json(j, r);
  bool available = false;
  const std::string errors = testing::schema_errors(nlohmann::json::parse(j.dump()), &available);
  if (!available) GTEST_SKIP() << "no JSON schema validator in this build";
  EXPECT_EQ(errors, "");
}

}  // namespace
}  // namespace nodeprobe::allreduce
