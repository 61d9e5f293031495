// The Slurm health mode's decision: which finding drains the node and the
// one line `scontrol update ... reason=` gets.
#include <gtest/gtest.h>

#include "health.h"

namespace nodeprobe::diag {
namespace {

Finding finding(const std::string& id, Severity s, const std::string& title) {
  Finding f;
  f.id = id;
  f.severity = s;
  f.title = title;
  return f;
}

TEST(DrainLine, OneLineOfAtMost100Characters) {
  EXPECT_EQ(drain_line("gpu.xid", "GPU Xid 79"), "nodeprobe: gpu.xid: GPU Xid 79");
  const std::string long_line = drain_line("gpu.xid", std::string(300, 'x') + "\nsecond line");
  EXPECT_EQ(long_line.size(), kDrainReasonMax);
  EXPECT_EQ(long_line.find('\n'), std::string::npos);
  EXPECT_EQ(long_line.substr(long_line.size() - 3), "...");
}

TEST(DrainReason, OnlyFindingsThatAskForADrainingActionDrain) {
  Report ok;
  ok.findings = {finding("limits.nofile", Severity::kWarn, "Open-files limit below recommendation"),
                 finding("selinux.avc", Severity::kInfo, "an old denial")};
  EXPECT_EQ(drain_reason(ok), "");  // tune is not a drain
  Report bad = ok;
  bad.findings.push_back(finding("gpu.not_found", Severity::kError, "No usable GPU"));
  EXPECT_EQ(drain_reason(bad), "nodeprobe: gpu.not_found: No usable GPU");
  EXPECT_EQ(drain_reason(Report{}), "");
}

}  // namespace
}  // namespace nodeprobe::diag
