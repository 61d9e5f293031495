#include "table.h"

#include <cstdio>

#include "ar_math.h"

namespace nodeprobe::allreduce {
namespace {

std::string placement_cols(const Placement& p) {
  char buf[96];
  if (!p.measured) {
    std::snprintf(buf, sizeof buf, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return buf;
  }
  const std::string wrong = p.wrong < 0 ? "N/A" : std::to_string(p.wrong);
  std::snprintf(buf, sizeof buf, "  %7s  %6.2f  %6.2f  %6s", format_time_us(p.time_us).c_str(), p.algbw,
                p.busbw, wrong.c_str());
  return buf;
}

// The per-iteration spread, appended after nccl-tests' columns (as its -I 1
// appends i_p99): parsers of all_reduce_perf output still find theirs in place.
std::string spread_cols(const Placement& p) {
  char buf[64];
  if (!p.measured) std::snprintf(buf, sizeof buf, "  %7s  %7s", "N/A", "N/A");
  else
    std::snprintf(buf, sizeof buf, "  %7s  %7s", format_time_us(p.time_p50_us).c_str(),
                  format_time_us(p.time_p99_us).c_str());
  return buf;
}

// "8-8K rd, 16K-256K rabenseifner, 512K-64M ring": consecutive sizes with one algorithm.
std::string algo_ranges(const std::vector<SizeRow>& rows) {
  std::string out;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1].algo == rows[i].algo) ++j;
    if (!rows[i].algo.empty()) {
      out += (out.empty() ? "" : ", ") + format_size(rows[i].bytes);
      if (j > i) out += "-" + format_size(rows[j].bytes);
      out += " " + rows[i].algo;
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string format_time_us(double us) {
  char buf[32];
  if (us >= 10000.0) std::snprintf(buf, sizeof buf, "%7.0f", us);
  else if (us >= 100.0) std::snprintf(buf, sizeof buf, "%7.1f", us);
  else std::snprintf(buf, sizeof buf, "%7.2f", us);
  return buf;
}

std::string table_header() {
  char l1[200], l2[200], l3[200];
  std::snprintf(l1, sizeof l1, "#%57s%-34s%-34s%s\n", "", "   out-of-place", "   in-place",
                "  out-of-place  in-place");
  std::snprintf(l2, sizeof l2,
                "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s\n", "size",
                "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong", "p50", "p99", "p50", "p99");
  std::snprintf(l3, sizeof l3,
                "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                "(us)", "(us)", "(us)");
  return std::string(l1) + l2 + l3;
}

std::string table_row(const SizeRow& row, const Plan& plan) {
  char head[96];
  const bool rooted = plan.coll == Coll::kBroadcast || plan.coll == Coll::kReduce;
  std::snprintf(head, sizeof head, "%12zu  %12zu  %8s  %6s  %6d", row.bytes, row.count,
                std::string(to_string(plan.dtype)).c_str(),
                coll_reduces(plan.coll) ? std::string(to_string(plan.op)).c_str() : "none", rooted ? plan.root : -1);
  return head + placement_cols(row.oop) + placement_cols(row.ip) + spread_cols(row.oop) + spread_cols(row.ip) + "\n";
}

std::string table_footer(const std::vector<SizeRow>& rows) {
  long wrong = 0;
  for (const auto& r : rows)
    for (const Placement* p : {&r.oop, &r.ip})
      if (p->wrong > 0) wrong += p->wrong;
  char buf[160];
  std::snprintf(buf, sizeof buf, "# Out of bounds values : %ld %s\n# Avg bus bandwidth    : %g \n", wrong,
                wrong ? "FAILED" : "OK", average_busbw(rows));
  std::string out = buf;
  const std::string algos = algo_ranges(rows);
  if (!algos.empty()) out += "# Algorithm by size    : " + algos + "\n";
  return out + "#\n";
}

std::string ratio_table(const TargetResult& a, const TargetResult& b) {
  std::string out = "# busbw ratio " + a.target.label() + " / " + b.target.label() + " (out-of-place)\n";
  char line[160];
  std::snprintf(line, sizeof line, "#%11s  %12s  %12s  %7s\n", "size (B)", "A (GB/s)", "B (GB/s)", "A/B");
  out += line;
  for (const auto& ra : a.rows) {
    for (const auto& rb : b.rows) {
      if (ra.bytes != rb.bytes || !ra.oop.measured || !rb.oop.measured) continue;
      const double ratio = rb.oop.busbw > 0 ? ra.oop.busbw / rb.oop.busbw : 0;
      std::snprintf(line, sizeof line, "%12zu  %12.3f  %12.3f  %7.3f\n", ra.bytes, ra.oop.busbw, rb.oop.busbw, ratio);
      out += line;
    }
  }
  return out;
}

}  // namespace nodeprobe::allreduce
