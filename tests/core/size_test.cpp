// The one size convention (nodeprobe/size.h, DESIGN.md): every suffix, case,
// fractions, bad input, overflow; and the CLI validator every size flag uses.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "nodeprobe/cli_checks.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/size.h"

namespace nodeprobe {
namespace {

constexpr std::uint64_t kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024;

TEST(Size, BareNumbersAndBytes) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("12B"), 12u);
  EXPECT_EQ(parse_size("12b"), 12u);
}

TEST(Size, BinarySuffixesArePowersOf1024InEveryCase) {
  struct Row { const char* text; std::uint64_t bytes; };
  const Row rows[] = {
      {"1K", kKi},    {"1k", kKi},    {"1Ki", kKi},   {"1KiB", kKi},  {"1kib", kKi},  {"1KIB", kKi},
      {"1M", kMi},    {"1m", kMi},    {"1Mi", kMi},   {"1MiB", kMi},  {"1mib", kMi},
      {"1G", kGi},    {"1g", kGi},    {"1Gi", kGi},   {"1GiB", kGi},  {"1gIb", kGi},
      {"1T", kTi},    {"1t", kTi},    {"1Ti", kTi},   {"1TiB", kTi},  {"1tib", kTi},
      {"16M", 16 * kMi}, {"16 MiB", 16 * kMi}, {"64K", 64 * kKi}, {"1.5G", 3 * kGi / 2},
      {"0.5K", 512},
  };
  for (const Row& r : rows) EXPECT_EQ(parse_size(r.text), r.bytes) << r.text;
}

TEST(Size, DecimalSuffixesArePowersOf1000InEveryCase) {
  struct Row { const char* text; std::uint64_t bytes; };
  const Row rows[] = {
      {"1kB", 1000},       {"1KB", 1000},       {"1kb", 1000},        {"110kB", 110000},
      {"1MB", 1000000},    {"1mb", 1000000},    {"1Mb", 1000000},
      {"1GB", 1000000000}, {"1gb", 1000000000}, {"1.5GB", 1500000000},
      {"1TB", 1000000000000ULL}, {"1tb", 1000000000000ULL},
  };
  for (const Row& r : rows) EXPECT_EQ(parse_size(r.text), r.bytes) << r.text;
}

TEST(Size, BadInputHasAOneLineReason) {
  for (const char* bad : {"", "M", "MiB", "-1", "+1", "1e6", "0x10", "nan", "NaN", "inf", "12X", "1KiBB",
                          "1 2", "1  M", " 1M", "1M ", "1.2.3", "1Kb/s", "1PB", "1P"}) {
    std::string why;
    EXPECT_FALSE(parse_size(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
  std::string why;
  EXPECT_FALSE(parse_size("12X", &why));
  EXPECT_NE(why.find("unknown unit 'X'"), std::string::npos) << why;
}

TEST(Size, OverflowIsRefused) {
  EXPECT_EQ(parse_size("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(parse_size("18446744073709551616"));
  EXPECT_FALSE(parse_size("99999999999999999999999"));
  EXPECT_EQ(parse_size("16777215T"), 16777215 * kTi);
  EXPECT_FALSE(parse_size("16777216T"));  // 2^64
  EXPECT_FALSE(parse_size("16777216.5T"));
  EXPECT_FALSE(parse_size("20000000TB"));
}

TEST(Size, PrintedSizesNameTheirUnit) {
  EXPECT_EQ(format_size(std::uint64_t{12}), "12 B");
  EXPECT_EQ(format_size(std::uint64_t{1000}), "1000 B");
  EXPECT_EQ(format_size(16 * kMi), "16 MiB");  // --grad-bytes 16M
  EXPECT_EQ(format_size(64 * kKi), "64 KiB");
  EXPECT_EQ(format_size(3 * kGi / 2), "1.5 GiB");
  EXPECT_EQ(format_size(std::uint64_t{110000}), "110 kB");
  EXPECT_EQ(format_size(std::uint64_t{1000000}), "1 MB");
  EXPECT_EQ(format_size(std::uint64_t{17000000}), "17 MB");
  EXPECT_EQ(format_size(std::uint64_t{123456789}), "117.7 MiB");
  EXPECT_EQ(format_size(8 * kTi), "8 TiB");
  EXPECT_EQ(format_size(2.5e9), "2.328 GiB");
  // What format_size prints parses back to the same bytes when exact.
  for (std::uint64_t b : {std::uint64_t{12}, 16 * kMi, std::uint64_t{110000}, 8 * kTi})
    EXPECT_EQ(parse_size(format_size(b)), b) << format_size(b);
}

// The validator every size flag carries: usage error (exit 64), one line
// naming the flag.
int parse_args(std::initializer_list<const char*> args, std::string* err) {
  CLI::App app{"t", "t"};
  std::string size = "1M";
  app.add_option("--size", size)->check(size_range(1, 1ULL << 40));
  std::vector<const char*> argv{"t"};
  argv.insert(argv.end(), args.begin(), args.end());
  testing::internal::CaptureStderr();
  const auto rc = parse_command_line(app, static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  *err = testing::internal::GetCapturedStderr();
  return rc.value_or(-1);
}

TEST(Size, FlagValidatorGivesUsageErrors) {
  std::string err;
  EXPECT_EQ(parse_args({"--size", "64MiB"}, &err), -1) << err;
  for (const char* bad : {"nan", "1Q", "-4", "0", "2T", "99999999999999999999999"}) {
    EXPECT_EQ(parse_args({"--size", bad}, &err), 64) << bad;
    EXPECT_NE(err.find("--size"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

}  // namespace
}  // namespace nodeprobe
