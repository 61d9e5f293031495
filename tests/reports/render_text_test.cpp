#include "nodeprobe/render_text.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sample_report.h"

namespace nodeprobe {
namespace {

TEST(RenderText, ShowsProbesChecksFindingsVerdict) {
  std::ostringstream out;
  render_text(testing::full_sample_report(), out);
  const std::string s = out.str();
  EXPECT_NE(s.find("p4d.24xlarge"), std::string::npos);
  EXPECT_NE(s.find("warn    allreduce"), std::string::npos);
  EXPECT_NE(s.find("skip    gemm (0.00 s): no GPU: cudaErrorNoDevice"), std::string::npos);
  EXPECT_NE(s.find("fix: export FI_PROVIDER=efa"), std::string::npos);
  EXPECT_NE(s.find("busbw{provider=efa,size=67108864} = 41.5 GB/s"), std::string::npos);
  EXPECT_NE(s.find("[warn] efa.fallback_tcp"), std::string::npos);
  EXPECT_NE(s.find("(x3)"), std::string::npos);
  EXPECT_NE(s.find("verdict: warn"), std::string::npos);
  EXPECT_EQ(s.find("\033["), std::string::npos);  // no colour unless asked
}

TEST(RenderText, NumberFormatting) {
  EXPECT_EQ(format_number(41.5), "41.5");
  EXPECT_EQ(format_number(1234.5), "1234");
  EXPECT_EQ(format_number(3), "3");
  EXPECT_EQ(format_number(0.000012), "1.2e-05");
}

}  // namespace
}  // namespace nodeprobe
