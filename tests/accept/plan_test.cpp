// accept's plan: entries, availability, GPU and mpirun requirements, --only,
// placeholders, budgets, and the progress line.
#include <algorithm>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <sstream>

#include "accept.h"
#include "nodeprobe/metric_descriptor.h"
#include "accept_progress.h"
#include "test_support.h"
#include "verdict_table.h"

namespace nodeprobe::diag {
namespace {

using nodeprobe::testing::TempDir;

void make_exe(const TempDir& d, const std::string& name) {
  nodeprobe::testing::write_file(d.file(name), "#!/bin/sh\nexit 0\n");
  ::chmod(d.file(name).c_str(), 0755);
}

const PlannedProbe* find(const std::vector<PlannedProbe>& plan, const std::string& name) {
  for (const auto& p : plan)
    if (p.entry->name == name) return &p;
  return nullptr;
}

TEST(AcceptPlan, EveryProbeHasAnEntryWithDeadlinesPerProfile) {
  std::set<std::string> exes;
  for (const auto& e : accept_entries()) {
    exes.insert(e.executable);
    EXPECT_FALSE(e.steps.empty()) << e.name;
    EXPECT_GT(e.quick_deadline_s, 0) << e.name;
    EXPECT_GE(e.full_deadline_s, e.quick_deadline_s) << e.name;
  }
  for (const char* x : {"nodeprobe-limits", "nodeprobe-gemm", "nodeprobe-io", "nodeprobe-allreduce"})
    EXPECT_TRUE(exes.count(x)) << x;
}

TEST(AcceptPlan, AllreduceTimesEnoughIterationsForCompareToJudge) {
  // Each timed iteration of each launch is one sample; compare calls a
  // change worse only with 7 or more a side (docs/compare.md), in the quick
  // profile too.
  for (const auto& e : accept_entries()) {
    if (e.executable != "nodeprobe-allreduce") continue;
    for (const auto& st : e.steps)
      for (const auto* args : {&st.quick, &st.full}) {
        const auto n = std::find(args->begin(), args->end(), "-n");
        ASSERT_NE(n, args->end()) << e.name;
        ASSERT_NE(n + 1, args->end()) << e.name;
        const auto l = std::find(args->begin(), args->end(), "--launches");
        const int launches = l != args->end() && l + 1 != args->end() ? std::stoi(*(l + 1)) : 1;
        EXPECT_GE(std::stoi(*(n + 1)) * launches, 7) << e.name;
      }
  }
}

TEST(AcceptPlan, MissingExecutablesAreNotAvailableNeverFaked) {
  TempDir bin;
  make_exe(bin, "nodeprobe-limits");
  AcceptOptions opt;
  PlanContext ctx;
  ctx.bin_dir = bin.path() + "/";
  ctx.mpirun = "/usr/bin/mpirun";
  const auto plan = accept_plan(opt, ctx);
  EXPECT_TRUE(find(plan, "limits")->skip_reason.empty());
  EXPECT_EQ(find(plan, "gemm")->skip_reason, "not available: nodeprobe-gemm is not part of this build");
  EXPECT_EQ(find(plan, "io")->skip_reason, "not available: nodeprobe-io is not part of this build");
}

TEST(AcceptPlan, GpuAndMpirunRequirementsGiveReasons) {
  TempDir bin;
  make_exe(bin, "nodeprobe-allreduce");
  AcceptOptions opt;
  PlanContext ctx;
  ctx.bin_dir = bin.path() + "/";
  auto plan = accept_plan(opt, ctx);
  EXPECT_NE(find(plan, "allreduce.nccl")->skip_reason.find("no NVIDIA GPU visible"), std::string::npos);
  EXPECT_EQ(find(plan, "allreduce")->skip_reason, "not available: no mpirun (Open MPI) in NODEPROBE_MPIRUN, where the build found MPI, or PATH");
  ctx.mpirun = "/usr/bin/mpirun";
  ctx.gpu_present = true;
  ctx.gpu_count = 8;
  ctx.root = true;
  plan = accept_plan(opt, ctx);
  const auto* nccl = find(plan, "allreduce.nccl");
  EXPECT_TRUE(nccl->skip_reason.empty());
  auto np = [](const ProbeSpec& s) {
    auto it = std::find(s.args.begin(), s.args.end(), "--np");
    return it == s.args.end() || it + 1 == s.args.end() ? std::string() : *(it + 1);
  };
  EXPECT_EQ(np(nccl->steps.at(0)), "8");  // one rank per GPU
  EXPECT_EQ(np(find(plan, "allreduce")->steps.at(0)), "2");
  EXPECT_TRUE(nccl->steps.at(0).launcher.empty());  // the probe starts its ranks itself
  EXPECT_EQ(nccl->steps.at(0).env_set.at(0), "OMPI_ALLOW_RUN_AS_ROOT=1");
}

TEST(AcceptPlan, OnlySelectsByNameOrPrefixAndProfilesChangeArgs) {
  AcceptOptions opt;
  opt.only = {"allreduce"};
  PlanContext ctx;
  ctx.bin_dir = "/nonexistent/";
  auto plan = accept_plan(opt, ctx);
  EXPECT_EQ(plan.size(), 2u);  // allreduce and allreduce.nccl
  for (const auto& p : plan) EXPECT_EQ(p.entry->name.rfind("allreduce", 0), 0u);
  opt.only = {"io", "limits"};
  plan = accept_plan(opt, ctx);
  ASSERT_EQ(plan.size(), 2u);
  const auto* io = find(plan, "io");
  ASSERT_EQ(io->steps.size(), 1u);
  EXPECT_EQ(io->steps[0].name, "io");
  EXPECT_EQ(io->steps[0].args.at(0), "accept");
  EXPECT_TRUE(io->needs_dataset);
  opt.profile = "full";
  opt.only = {"allreduce"};
  ctx.sysroot = "/fixture";
  plan = accept_plan(opt, ctx);
  const auto& args = plan.at(0).steps.at(0).args;
  EXPECT_NE(std::find(args.begin(), args.end(), "64M"), args.end());
  EXPECT_EQ(args.back(), "/fixture");  // --sysroot passed on
  opt.only = {"nothing"};
  EXPECT_TRUE(accept_plan(opt, ctx).empty());
}

TEST(AcceptPlan, Budgets) {
  EXPECT_EQ(accept_budget_s("quick", false), 20);
  EXPECT_EQ(accept_budget_s("quick", true), 60);
  EXPECT_EQ(accept_budget_s("full", false), 600);
}

TEST(AcceptProgress, LineShowsProbeElapsedAndEstimate) {
  FakeClock clock;
  std::ostringstream out;
  Progress p(out, true, clock, 14);
  p.begin(2, 8, "io", 6);
  clock.advance(4.1);
  EXPECT_NE(p.line().find("[3/8] io"), std::string::npos);
  EXPECT_NE(p.line().find("4.1 s of ~6 s"), std::string::npos);
  EXPECT_NE(p.line().find("total   4.1 s of ~14 s"), std::string::npos);
  p.end(Status::kPass, 4.1);
  EXPECT_NE(out.str().find("\r\033[K[3/8] io"), std::string::npos);
  EXPECT_NE(out.str().find("pass"), std::string::npos);
}

TEST(AcceptProgress, DisabledPrintsNothing) {
  FakeClock clock;
  std::ostringstream out;
  Progress p(out, false, clock, 14);
  p.begin(0, 1, "limits", 1);
  p.end(Status::kPass, 0.5);
  EXPECT_EQ(out.str(), "");
}

TEST(VerdictTable, StatusKeyNumbersReasonsFindingsAndExitCode) {
  Report r;
  ProbeResult a;
  a.name = "gemm";
  a.status = Status::kSkip;
  a.reason = "not available: nodeprobe-gemm is not part of this build";
  r.probes.push_back(a);
  ProbeResult b;
  b.name = "allreduce.mpi";
  b.status = Status::kPass;
  // As nodeprobe-allreduce declares it: busbw is a key number ("busbw max").
  b.descriptors = {measured("busbw", "GB/s", Better::kHigher, "bus bandwidth").axes({"size"}).key(1, "busbw max")};
  b.metrics.push_back({"busbw", 12.5, "GB/s", Better::kHigher, {{"size", "1M"}}, std::nullopt});
  r.probes.push_back(b);
  Finding f;
  f.id = "limits.memlock";
  f.title = "Locked-memory limit (memlock) below recommendation";
  f.remedy = {"first step", "second step"};
  r.findings.push_back(f);
  r.verdict = Status::kWarn;
  std::ostringstream out;
  render_verdict_table(r, out, false, 0);
  const std::string t = out.str();
  EXPECT_NE(t.find("gemm           skip    0.0 s    not available"), std::string::npos) << t;
  EXPECT_NE(t.find("busbw max 12.5 GB/s"), std::string::npos) << t;
  EXPECT_NE(t.find("fix: first step"), std::string::npos);
  EXPECT_EQ(t.find("second step"), std::string::npos);
  EXPECT_NE(t.find("verdict: warn    (exit 0)"), std::string::npos) << t;
}

}  // namespace
}  // namespace nodeprobe::diag
