#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "text_util.h"

namespace nodeprobe::diag {
namespace {

const TimeContext kCtx{1764432000.0 /* 2025-11-29T16:00:00Z */, 0};

double t(const char* line) {
  auto v = parse_line_time(line, kCtx);
  return v ? *v : -1;
}

TEST(TextUtil, CountNewlinesMatchesANaiveCount) {
  std::string s;
  for (int i = 0; i < 300; ++i) {
    s.push_back(static_cast<char>((i * 37) % 256));  // every byte value, '\n' and 0x8a among them
    if (i % 7 == 0) s.push_back('\n');
    for (std::size_t off = 0; off < 9 && off <= s.size(); ++off) {
      const std::string_view v = std::string_view(s).substr(off);
      ASSERT_EQ(count_newlines(v), static_cast<std::size_t>(std::count(v.begin(), v.end(), '\n'))) << i << " " << off;
    }
  }
  EXPECT_EQ(count_newlines(""), 0u);
  EXPECT_EQ(count_newlines("\n\n\n\n\n\n\n\n\n"), 9u);
}

TEST(Timestamps, IsoVariants) {
  EXPECT_DOUBLE_EQ(t("2025-11-24T03:20:21Z NCCL"), 1763954421.0);
  EXPECT_NEAR(t("2025-11-24T03:20:21.001125857Z [2025-11-24 11:20:21] gpu"), 1763954421.001, 1e-3);
  EXPECT_DOUBLE_EQ(t("2025-05-16T16:39:51-07:00 x"), 1747438791.0);
  EXPECT_DOUBLE_EQ(t("[2026-04-22 21:34:20] host"), 1776893660.0);
  EXPECT_NEAR(t("2024-05-01 12:00:01,123 - INFO"), 1714564801.123, 1e-6);
}

TEST(Timestamps, SyslogAndCtime) {
  EXPECT_DOUBLE_EQ(t("Nov 22 18:29:55 hostname kernel: NVRM"), 1763836195.0);
  EXPECT_DOUBLE_EQ(t("Dec  1 10:00:00 host kernel: x"), 1733047200.0);  // in the future this year: last year
  EXPECT_DOUBLE_EQ(t("[Fri Aug 30 11:11:22 2024] NVRM: Xid"), 1725016282.0);
  EXPECT_DOUBLE_EQ(t("Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401"), 1691757105.0);
  TimeContext east{kCtx.now, 3600};
  EXPECT_DOUBLE_EQ(*parse_line_time("Nov 22 18:29:55 host x", east), 1763836195.0 - 3600);
}

TEST(Timestamps, AuditAndGlog) {
  EXPECT_NEAR(t("type=AVC msg=audit(1730072197.188:289): avc:  denied"), 1730072197.188, 1e-6);
  EXPECT_NEAR(t("type=AVC msg=audit(07/14/2025 06:17:13.290:402) : avc:  denied"), 1752473833.29, 1e-6);
  EXPECT_NEAR(t("type=AVC msg=audit(22.08.2022 11:35:41.535:261) : avc"), 1661168141.535, 1e-6);
  EXPECT_NEAR(t("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0]"), 1742522828.408, 1e-3);
  EXPECT_NEAR(t("[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607]"), 1742522828.408, 1e-3);
  EXPECT_NEAR(t("[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607]"), 1733510652.715, 1e-3);
}

TEST(Timestamps, NoTime) {
  EXPECT_EQ(t("[ 1843.308145] NVRM: The NVIDIA GPU"), -1);  // seconds since boot
  EXPECT_EQ(t("OSError: [Errno 24] Too many open files"), -1);
  EXPECT_EQ(t("audit(99999999999999999999999999999.1:2)"), -1);
  EXPECT_EQ(t(""), -1);
}

TEST(Durations, Parse) {
  EXPECT_EQ(*parse_duration("90"), 90);
  EXPECT_EQ(*parse_duration("30m"), 1800);
  EXPECT_EQ(*parse_duration("2h"), 7200);
  EXPECT_EQ(*parse_duration("1d12h"), 129600);
  EXPECT_FALSE(parse_duration("3x"));
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("1h30"));
  EXPECT_FALSE(parse_duration("-5m"));
}

TEST(CleanText, RepairsUtf8AndCuts) {
  EXPECT_EQ(clean_text("ok \xE2\x9C\x93 fine"), "ok \xE2\x9C\x93 fine");
  EXPECT_EQ(clean_text("bad \xC3\x28 x"), "bad \xEF\xBF\xBD( x");
  EXPECT_EQ(clean_text("a\x01" "b\tc\r"), "a b\tc");
  EXPECT_EQ(clean_text(std::string(1000, 'z'), 10), std::string(10, 'z') + "...");
  EXPECT_EQ(clean_text("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(Redact, SecretsNeverSurvive) {
  EXPECT_EQ(redact_secrets("aws_secret_access_key=abcd1234XYZ rest"), "aws_secret_access_key=<redacted> rest");
  EXPECT_EQ(redact_secrets("export HF_TOKEN: hf_abcdef"), "export HF_TOKEN: <redacted>");
  EXPECT_EQ(redact_secrets("key AKIAIOSFODNN7EXAMPLE used"), "key <redacted> used");
  EXPECT_EQ(redact_secrets("{\"password\": \"hunter2\"}"), "{\"password\": \"<redacted>\"}");
  EXPECT_EQ(redact_secrets("-----BEGIN RSA PRIVATE KEY-----"), "<redacted: private key material>");
  EXPECT_EQ(redact_secrets("tokens/s=125000 loss=1.9"), "tokens/s=125000 loss=1.9");
  EXPECT_EQ(redact_secrets("NVRM: Xid (PCI:0000:3b:00): 79"), "NVRM: Xid (PCI:0000:3b:00): 79");
}

}  // namespace
}  // namespace nodeprobe::diag
