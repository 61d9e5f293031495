#include <gtest/gtest.h>

#include <sstream>

#include "table.h"

namespace nodeprobe::allreduce {
namespace {

SizeRow row(std::size_t bytes, double time_us, double algbw, double busbw, long wrong) {
  SizeRow r;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.oop.measured = true;
  r.oop.time_us = time_us;
  r.oop.algbw = algbw;
  r.oop.busbw = busbw;
  r.oop.wrong = wrong;
  r.oop.time_p50_us = time_us * 0.9;
  r.oop.time_p99_us = time_us * 1.5;
  r.ip = r.oop;
  return r;
}

std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> v;
  for (std::string w; in >> w;) v.push_back(w);
  return v;
}

TEST(Table, HeaderHasNcclTestsColumns) {
  const std::string h = table_header();
  for (const char* col : {"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "(GB/s)",
                          "out-of-place", "in-place"})
    EXPECT_NE(h.find(col), std::string::npos) << col;
}

TEST(Table, RowParsesLikeAllReducePerfOutput) {
  // The line from nccl-tests' docs: 1 GiB float sum, 4511.2 us, 238.02 / 446.28 GB/s.
  const auto f = fields(table_row(row(1073741824, 4511.2, 238.02, 446.28, 0), Plan{}));
  // nccl-tests' 13 columns in place, then p50 and p99 per placement.
  ASSERT_EQ(f.size(), 17u);
  EXPECT_EQ(f[0], "1073741824");
  EXPECT_EQ(f[1], "268435456");
  EXPECT_EQ(f[2], "float");
  EXPECT_EQ(f[3], "sum");
  EXPECT_EQ(f[4], "-1");
  EXPECT_EQ(f[5], "4511.2");
  EXPECT_EQ(f[6], "238.02");
  EXPECT_EQ(f[7], "446.28");
  EXPECT_EQ(f[8], "0");
  EXPECT_EQ(f[13], "4060.1");
  EXPECT_EQ(f[14], "6766.8");
}

TEST(Table, TrailerNamesTheAlgorithmBySize) {
  std::vector<SizeRow> rows = {row(8, 1, 1, 1, 0), row(16, 1, 1, 1, 0), row(32, 1, 1, 1, 0), row(1024, 1, 1, 1, 0)};
  rows[0].algo = rows[1].algo = "rd";
  rows[2].algo = "rabenseifner";
  rows[3].algo = "ring";
  EXPECT_NE(table_footer(rows).find("# Algorithm by size    : 8 B-16 B rd, 32 B rabenseifner, 1 KiB ring\n"),
            std::string::npos)
      << table_footer(rows);
  EXPECT_EQ(table_footer({row(8, 1, 1, 1, 0)}).find("Algorithm"), std::string::npos);  // mpi, nccl: their library's
  EXPECT_NE(table_header().find("p99"), std::string::npos);
}

TEST(Table, TimeFormatsFollowNcclTests) {
  EXPECT_EQ(format_time_us(18.321), "  18.32");
  EXPECT_EQ(format_time_us(4511.23), " 4511.2");
  EXPECT_EQ(format_time_us(16195.4), "  16195");
}

TEST(Table, FooterAveragesBusbwAndCountsWrong) {
  const std::string ok = table_footer({row(8, 1, 1, 2, 0), row(16, 1, 1, 4, 0)});
  EXPECT_NE(ok.find("# Out of bounds values : 0 OK"), std::string::npos);
  EXPECT_NE(ok.find("# Avg bus bandwidth    : 3"), std::string::npos);
  const std::string bad = table_footer({row(8, 1, 1, 2, 5)});
  EXPECT_NE(bad.find(": 10 FAILED"), std::string::npos);  // out-of-place and in-place
}

TEST(Table, NotMeasuredInPlaceIsNA) {
  SizeRow r = row(64, 10, 1, 1, 0);
  r.ip = Placement{};
  Plan p;
  p.dtype = DType::kInt32;
  p.op = RedOp::kMax;
  const auto f = fields(table_row(r, p));
  EXPECT_EQ(f[2], "int32");
  EXPECT_EQ(f[3], "max");
  EXPECT_EQ(f[9], "N/A");
}

// nccl-tests' columns per collective: all_gather_perf prints redop "none"
// and root -1; broadcast_perf and reduce_perf print the root.
TEST(Table, RedopAndRootFollowTheCollective) {
  Plan p;
  p.coll = Coll::kAllGather;
  p.op = RedOp::kMax;
  auto f = fields(table_row(row(64, 10, 1, 1, 0), p));
  EXPECT_EQ(f[3], "none");
  EXPECT_EQ(f[4], "-1");
  p.coll = Coll::kReduce;
  p.root = 2;
  f = fields(table_row(row(64, 10, 1, 1, 0), p));
  EXPECT_EQ(f[3], "max");
  EXPECT_EQ(f[4], "2");
  p.coll = Coll::kBroadcast;
  f = fields(table_row(row(64, 10, 1, 1, 0), p));
  EXPECT_EQ(f[3], "none");
  EXPECT_EQ(f[4], "2");
}

TEST(Table, RatioOfSharedSizes) {
  TargetResult a, b;
  a.target = {"fabric", "tcp"};
  b.target = {"mpi", ""};
  a.rows = {row(1024, 1, 1, 2.0, 0), row(2048, 1, 1, 3.0, 0)};
  b.rows = {row(1024, 1, 1, 1.0, 0)};
  const std::string t = ratio_table(a, b);
  EXPECT_NE(t.find("fabric:tcp / mpi"), std::string::npos);
  EXPECT_NE(t.find("2.000"), std::string::npos);
  EXPECT_EQ(t.find("2048"), std::string::npos);
}

}  // namespace
}  // namespace nodeprobe::allreduce
