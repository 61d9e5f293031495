#include "nodeprobe/finding_ids.h"

#include <gtest/gtest.h>

#include <set>

namespace nodeprobe {
namespace {

TEST(FindingVocabulary, ContainsTheDesignIdsOnce) {
  std::set<std::string_view> seen;
  for (const auto& k : finding_vocabulary()) {
    EXPECT_TRUE(seen.insert(k.id).second) << k.id;
    EXPECT_FALSE(k.title.empty());
  }
  for (const char* id : {"gpu.not_found", "gpu.driver_kernel_mismatch", "gpu.cuda_driver_insufficient",
                         "gpu.xid", "gpu.oom", "gpu.count_mismatch", "gpu.pcie_degraded",
                         "gpu.compute_wrong", "gpu.compute_slow", "nccl.timeout",
                         "nccl.network_config", "nccl.shm", "efa.missing", "efa.fallback_tcp",
                         "net.unreachable", "selinux.avc", "limits.memlock", "limits.nofile",
                         "limits.shm", "limits.max_map_count", "limits.somaxconn",
                         "limits.netdev_backlog", "cpu.governor", "io.starved",
                         "storage.mount_options", "storage.slow", "probe.timeout", "probe.crash"})
    EXPECT_NE(find_finding_kind(id), nullptr) << id;
  EXPECT_EQ(find_finding_kind("gpu.bogus"), nullptr);
}

ProbeResult limits_result() {
  ProbeResult p;
  p.name = "limits";
  auto add = [&](std::string id, Status s, std::string fix, std::string finding) {
    Check c;
    c.id = std::move(id);
    c.status = s;
    c.observed = "1024";
    c.expected = ">= 65535";
    c.fix = std::move(fix);
    c.finding = std::move(finding);
    p.checks.push_back(c);
  };
  add("limits.nofile.soft", Status::kWarn, "raise nofile", "limits.nofile");
  add("limits.nofile.hard", Status::kWarn, "raise nofile", "limits.nofile");
  add("limits.dev_shm.size", Status::kFail, "grow /dev/shm", "limits.shm");
  add("limits.shmmax", Status::kPass, "", "limits.shm");
  add("mem.thp", Status::kWarn, "echo madvise", "");
  return p;
}

TEST(FindingsFromChecks, GroupsByIdAndKeepsEvidence) {
  const auto f = findings_from_checks({limits_result()});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].id, "limits.nofile");
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_EQ(f[0].evidence.size(), 2u);
  EXPECT_EQ(f[0].remedy, std::vector<std::string>{"raise nofile"});  // de-duplicated
  EXPECT_EQ(f[0].probe, "limits");
  EXPECT_EQ(f[1].id, "limits.shm");
  EXPECT_EQ(f[1].severity, Severity::kError);
  EXPECT_EQ(f[1].evidence.size(), 1u);  // the passing shmmax check is not evidence
}

TEST(FindingsFromProbeStatus, TimeoutsAndCrashes) {
  ProbeResult t, c, e;
  t.name = "gemm";
  t.status = Status::kTimeout;
  t.reason = "exceeded 60 s";
  c.name = "io";
  c.status = Status::kError;
  c.reason = "crashed: nodeprobe-io killed by SIGSEGV (signal 11)";
  e.name = "allreduce";
  e.status = Status::kError;
  e.reason = "mpirun not found";
  const auto f = findings_from_probe_status({t, c, e});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].id, "probe.timeout");
  EXPECT_EQ(f[1].id, "probe.crash");
  EXPECT_FALSE(f[1].remedy.empty());
}

}  // namespace
}  // namespace nodeprobe
