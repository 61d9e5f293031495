// Inputs that once crashed or hung a fuzz target (scripts/fuzz.sh keeps them
// here), plus hand-made hostile inputs: each must now run cleanly.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz_targets.h"

namespace nodeprobe::diag {
namespace {

std::vector<std::string> inputs(const std::string& target) {
  std::vector<std::string> out;
  const std::string dir = std::string(NODEPROBE_DIAG_REGRESSIONS) + "/" + target;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every input kept for `target` through its entry point.
void replay(const std::string& target, void (*entry)(const std::uint8_t*, std::size_t)) {
  const auto files = inputs(target);
  EXPECT_FALSE(files.empty());
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const std::string b = bytes(f);
    entry(reinterpret_cast<const std::uint8_t*>(b.data()), b.size());
  }
}

TEST(Regressions, AnalyzeTarget) { replay("analyze", fuzz_analyze); }
TEST(Regressions, BundleTarget) { replay("bundle", fuzz_bundle); }
TEST(Regressions, ReportTarget) { replay("report", fuzz_report); }
TEST(Regressions, BundleDirTarget) { replay("bundle_dir", fuzz_bundle_dir); }

}  // namespace
}  // namespace nodeprobe::diag
