// The diagnosis hook the lead wires into accept (AcceptHooks::diagnose):
// called in-process after the probes, its findings join the report (merged
// with a finding of the same id), and a failing diagnosis is an error entry.
#include <gtest/gtest.h>

#include <cstdlib>

#include "accept.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

using nodeprobe::testing::TempDir;

class Hooks : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("NODEPROBE_NO_IMDS", "1", 1);
    ::setenv("NODEPROBE_PROBE_DIR", NODEPROBE_BIN_DIR, 1);
    opt.only = {"limits"};
    opt.common.quiet = true;
    opt.no_imds = true;
    opt.common.json_out = tmp.file("r.json");
    opt.expect = "p4d.24xlarge";  // this machine has no GPU: expect raises gpu.not_found
  }
  int run(const AcceptHooks& h) {
    char arg0[] = "nodeprobe", arg1[] = "accept";
    char* argv[] = {arg0, arg1, nullptr};
    return run_accept(opt, 2, argv, h);
  }
  const Finding* finding(const Report& r, const std::string& id) {
    for (const auto& f : r.findings)
      if (f.id == id) return &f;
    return nullptr;
  }
  TempDir tmp;
  AcceptOptions opt;
};

TEST_F(Hooks, DiagnosisFindingsJoinTheReportAndMergeWithTheSameId) {
  int calls = 0;
  AcceptHooks h;
  h.diagnose = [&](const Report& so_far, double) -> Diagnosis {
    ++calls;
    EXPECT_FALSE(so_far.probes.empty());  // it sees the probes' results
    Finding avc;
    avc.id = "selinux.avc";
    avc.severity = Severity::kError;
    avc.title = "SELinux denied an access (AVC)";
    avc.evidence = {{"/var/log/audit/audit.log", 3, "avc: denied { read }"}};
    avc.remedy = {"audit2allow -M local < /var/log/audit/audit.log", "semodule -i local.pp"};
    Finding nf;
    nf.id = "gpu.not_found";
    nf.severity = Severity::kError;
    nf.title = "No usable GPU";
    nf.evidence = {{"nvidia-smi", 1, "No devices were found"}};
    nf.remedy = {"lsmod | grep nvidia"};
    return std::vector<Finding>{avc, nf};
  };
  EXPECT_EQ(run(h), 1);
  EXPECT_EQ(calls, 1);
  const Report r = load_report(tmp.file("r.json"));
  const ProbeResult* d = nullptr;
  for (const auto& p : r.probes)
    if (p.name == "diag") d = &p;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->status, Status::kFail);
  ASSERT_TRUE(finding(r, "selinux.avc"));
  EXPECT_EQ(finding(r, "selinux.avc")->remedy.size(), 2u);
  int not_found = 0;
  for (const auto& f : r.findings) not_found += f.id == "gpu.not_found";
  EXPECT_EQ(not_found, 1);  // merged, not listed twice
  const Finding* g = finding(r, "gpu.not_found");
  EXPECT_EQ(g->evidence.size(), 2u);
  EXPECT_EQ(g->remedy.back(), "lsmod | grep nvidia");
}

TEST_F(Hooks, AFailingDiagnosisIsAnErrorEntry) {
  AcceptHooks h;
  h.diagnose = [](const Report&, double) -> Diagnosis { throw std::runtime_error("playbook missing"); };
  EXPECT_EQ(run(h), 2);
  const Report r = load_report(tmp.file("r.json"));
  bool found = false;
  for (const auto& p : r.probes)
    if (p.name == "diag") {
      found = true;
      EXPECT_EQ(p.status, Status::kError);
      EXPECT_EQ(p.reason, "diagnosis failed: playbook missing");
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace nodeprobe::diag
