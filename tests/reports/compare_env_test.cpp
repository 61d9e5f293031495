// The environment half of compare, and its renderings.
#include <gtest/gtest.h>

#include <sstream>

#include "nodeprobe/compare.h"
#include "nodeprobe/render_compare.h"
#include "report_fixtures.h"

namespace nodeprobe {
namespace {

using testing::add_probe;
using testing::base_report;
using testing::metric;

const FieldDiff* find(const std::vector<FieldDiff>& v, const std::string& section, const std::string& key) {
  for (const auto& f : v)
    if (f.section == section && f.key == key) return &f;
  return nullptr;
}

Report with_limits(const std::string& somaxconn) {
  Report r = base_report();
  auto& p = r.probes[add_probe(r, "limits", Status::kPass)];
  Check c;
  c.id = "limits.somaxconn";
  c.observed = somaxconn;
  p.checks.push_back(c);
  p.environment["limits.somaxconn"] = somaxconn;  // what the probe observed, as nodeprobe-limits writes it
  return r;
}

TEST(EnvironmentDiff, ShowsVersionsInstanceTypeEnvLimitsAndConfig) {
  Report b = with_limits("128"), a = with_limits("65535");
  b.host.kernel = "4.18.0-477.el8";
  a.host.kernel = "4.18.0-513.el8";
  b.host.driver = "535.104.05";
  a.host.driver = "550.54.15";
  b.host.cuda_runtime = a.host.cuda_runtime = "12.2";
  b.host.nccl = "2.18.5";
  a.host.nccl = "2.21.5";
  b.host.libfabric = "1.18.1";
  a.host.libfabric = "1.19.0";
  b.host.instance_type = "p4d.24xlarge";
  a.host.instance_type = "p4de.24xlarge";
  b.host.env = {{"NCCL_DEBUG", "INFO"}, {"FI_PROVIDER", "efa"}};
  a.host.env = {{"NCCL_DEBUG", "WARN"}, {"NCCL_SOCKET_IFNAME", "ens32"}};
  b.probes[0].config = Json{{"workers", 4}};
  a.probes[0].config = Json{{"workers", 8}};
  const auto d = environment_diff(b, a);
  ASSERT_TRUE(find(d, "host", "kernel"));
  EXPECT_EQ(find(d, "host", "kernel")->after, "4.18.0-513.el8");
  EXPECT_TRUE(find(d, "host", "driver"));
  EXPECT_FALSE(find(d, "host", "cuda_runtime"));  // unchanged: not listed
  EXPECT_TRUE(find(d, "host", "nccl"));
  EXPECT_TRUE(find(d, "host", "libfabric"));
  EXPECT_EQ(find(d, "host", "instance_type")->before, "p4d.24xlarge");
  EXPECT_EQ(find(d, "env", "NCCL_DEBUG")->after, "WARN");
  EXPECT_EQ(find(d, "env", "FI_PROVIDER")->after, "(unset)");
  EXPECT_EQ(find(d, "env", "NCCL_SOCKET_IFNAME")->before, "(unset)");
  ASSERT_TRUE(find(d, "environment:limits", "limits.somaxconn"));
  EXPECT_EQ(find(d, "environment:limits", "limits.somaxconn")->before, "128");
  EXPECT_EQ(find(d, "environment:limits", "limits.somaxconn")->probe, "limits");
  EXPECT_EQ(find(d, "config:limits", "workers")->after, "8");
  EXPECT_EQ(find(d, "host", "kernel")->probe, "");
}

TEST(EnvironmentDiff, WhatOneSideNeverLearntIsNotAChange) {
  // Run A's allreduce timed out before it loaded NCCL or wrote its settings.
  Report b = with_limits("128"), a = with_limits("128");
  a.host.nccl = "2.28.9";
  a.host.mpi = "Open MPI v4.1.4";
  b.probes[add_probe(b, "allreduce", Status::kTimeout, "deadline")].config = Json::object();
  a.probes[add_probe(a, "allreduce", Status::kPass)].config = Json{{"iters", 5}};
  EXPECT_TRUE(environment_diff(b, a).empty());
  // A setting present on both sides but changed, or added, is a change.
  b.probes[1].config = Json{{"iters", 20}};
  a.probes[1].config = Json{{"iters", 5}, {"check", 1}};
  const auto d = environment_diff(b, a);
  EXPECT_EQ(find(d, "config:allreduce", "iters")->after, "5");
  EXPECT_EQ(find(d, "config:allreduce", "check")->before, "(unset)");
}

TEST(EnvironmentDiff, IdenticalRunsHaveNone) {
  const Report r = with_limits("128");
  EXPECT_TRUE(environment_diff(r, r).empty());
}

TEST(CompareRender, TextMarkdownAndJsonCarryVerdictsAndEnvironment) {
  Report b = base_report("before"), a = base_report("after");
  b.probes[add_probe(b, "io", Status::kPass)].metrics = {metric("mb_per_s", 100, "MB/s", Better::kHigher, {{"workers", "4"}}, 98, 102, 10)};
  a.probes[add_probe(a, "io", Status::kPass)].metrics = {metric("mb_per_s", 70, "MB/s", Better::kHigher, {{"workers", "4"}}, 69, 71, 10)};
  a.host.kernel = "5.14";
  const auto c = compare_reports(b, a, {}, "b.json", "a.json");
  std::ostringstream t, m;
  render_compare_text(c, t);
  EXPECT_NE(t.str().find("worse"), std::string::npos);
  EXPECT_NE(t.str().find("io/mb_per_s{workers=4}"), std::string::npos);
  EXPECT_NE(t.str().find("-30.0 %"), std::string::npos);
  EXPECT_NE(t.str().find("host kernel: 4.18.0-513.el8.x86_64 -> 5.14"), std::string::npos);
  // The host change is listed as the likely cause next to what moved.
  EXPECT_NE(t.str().find("io: host kernel 4.18.0-513.el8.x86_64 -> 5.14"), std::string::npos) << t.str();
  render_compare_markdown(c, m);
  EXPECT_NE(m.str().find("| **worse** |"), std::string::npos);
  const Json j = compare_to_json(c);
  EXPECT_EQ(j["schema"], "nodeprobe.compare/2");
  EXPECT_EQ(j["causes"][0]["probe"], "io");
  EXPECT_EQ(j["summary"]["worse"], 1);
  EXPECT_EQ(j["metrics"][0]["verdict"], "worse");
  EXPECT_EQ(j["environment"][0]["key"], "kernel");
}

}  // namespace
}  // namespace nodeprobe
