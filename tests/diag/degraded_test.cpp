// Built only without RE2 or zlib: diag still loads its playbook and parses
// structured outputs, and says plainly that it did not scan log lines.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "diagnose.h"
#include "scanner.h"

namespace nodeprobe::diag {
namespace {

std::string write_tmp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Degraded, NoScannerIsSaidAndStructuredOutputsStillCount) {
#if !NODEPROBE_HAVE_RE2
  EXPECT_FALSE(MultiPatternScanner::available());
  EXPECT_NE(MultiPatternScanner::engine().find("without RE2"), std::string::npos);
#endif
  DiagInputs in;
  in.logs = {write_tmp("kern.log", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"),
             write_tmp("sysctl.txt", "vm.max_map_count = 65530\n")};
  in.now = 1764432000;
  Report rep;
  const DiagOutcome out = diagnose(rep, in);
  bool map_count = false;
  for (const auto& f : rep.findings) {
    map_count |= f.id == "limits.max_map_count";
#if !NODEPROBE_HAVE_RE2
    EXPECT_NE(f.id, "gpu.xid") << "log lines are not scanned without RE2";
#endif
  }
  EXPECT_TRUE(map_count) << "structured parsers work without RE2";
#if !NODEPROBE_HAVE_RE2
  EXPECT_FALSE(out.scanner_available);
  ASSERT_FALSE(rep.probes.empty());
  EXPECT_NE(rep.probes.back().data.dump().find("without RE2"), std::string::npos);
  EXPECT_EQ(rep.probes.back().status, Status::kWarn) << "an incomplete diagnosis must not read as clean";
#else
  (void)out;
#endif
}

}  // namespace
}  // namespace nodeprobe::diag
