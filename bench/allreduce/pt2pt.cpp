#include "pt2pt.h"

#include <algorithm>
#include <cstdio>

#include "ar_math.h"
#include "mpi_util.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/stats.h"

namespace nodeprobe::allreduce {
namespace {

Json stats_json(const Stats& s) {
  return {{"n", s.n}, {"median", s.median}, {"mean", s.mean}, {"min", s.min}, {"max", s.max}, {"p5", s.p5},
          {"p95", s.p95}, {"stddev", s.stddev}};
}

Stats stats_from(const Json& j) {
  Stats s;
  s.n = j.value("n", 0u);
  s.median = j.value("median", 0.0);
  s.mean = j.value("mean", 0.0);
  s.min = j.value("min", 0.0);
  s.max = j.value("max", 0.0);
  s.p5 = j.value("p5", 0.0);
  s.p95 = j.value("p95", 0.0);
  s.stddev = j.value("stddev", 0.0);
  return s;
}

// Rank a's side of one pair at one size.
Pt2ptRow measure(Backend& b, int a, int peer, std::size_t bytes, int warmup, int iters) {
  Clock& clock = steady_clock();
  Pt2ptRow row;
  row.a = a;
  row.b = peer;
  row.bytes = bytes;
  std::vector<double> lat;
  for (int i = -warmup; i < iters; ++i) {
    const double t0 = clock.now_s();
    b.send_to(peer, bytes, 1);
    b.recv_from(peer, bytes, 1);
    if (i >= 0) lat.push_back((clock.now_s() - t0) / 2 * 1e6);
  }
  std::vector<double> bw;
  double total_s = 0;
  for (int i = -std::min(warmup, 1); i < iters; ++i) {
    const double t0 = clock.now_s();
    b.send_to(peer, bytes, kPt2ptWindow);
    b.recv_from(peer, 4, 1);  // the window arrived
    const double dt = clock.now_s() - t0;
    if (i < 0) continue;
    bw.push_back(algbw_gbps(bytes * kPt2ptWindow, dt));
    total_s += dt;
  }
  row.bw_total_GBps = algbw_gbps(bytes * kPt2ptWindow * static_cast<std::size_t>(std::max(iters, 0)), total_s);
  row.latency_us = compute_stats(lat);
  std::sort(lat.begin(), lat.end());
  row.latency_p99_us = lat.empty() ? 0 : percentile_sorted(lat, 0.99);
  row.bw_GBps = compute_stats(bw);
  return row;
}

// Rank b's side: the mirror of measure().
void answer(Backend& b, int peer, std::size_t bytes, int warmup, int iters) {
  for (int i = -warmup; i < iters; ++i) {
    b.recv_from(peer, bytes, 1);
    b.send_to(peer, bytes, 1);
  }
  for (int i = -std::min(warmup, 1); i < iters; ++i) {
    b.recv_from(peer, bytes, kPt2ptWindow);
    b.send_to(peer, 4, 1);
  }
}

}  // namespace

std::vector<Pt2ptRow> run_pt2pt(Backend& b, MPI_Comm comm, const std::vector<std::size_t>& sizes, int warmup,
                                int iters, const std::function<void(const std::string&)>& phase) {
  int rank = 0, n = 1;
  NP_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  NP_CHECK_MPI(MPI_Comm_size(comm, &n));
  Json mine = Json::array();
  for (int a = 0; a < n; ++a)
    for (int c = a + 1; c < n; ++c)
      for (const std::size_t bytes : sizes) {
        if (phase) phase("pt2pt " + std::to_string(a) + "<->" + std::to_string(c) + " " + format_size(bytes));
        NP_CHECK_MPI(MPI_Barrier(comm));
        if (rank == a) mine.push_back(pt2pt_json(measure(b, a, c, bytes, warmup, iters)));
        else if (rank == c) answer(b, a, bytes, warmup, iters);
      }
  std::vector<Pt2ptRow> rows;
  const auto all = allgather_strings(comm, mine.dump());
  if (rank != 0) return rows;
  for (const auto& s : all)
    for (const auto& j : Json::parse(s)) rows.push_back(pt2pt_from_json(j));
  std::sort(rows.begin(), rows.end(), [](const Pt2ptRow& x, const Pt2ptRow& y) {
    return std::tie(x.a, x.b, x.bytes) < std::tie(y.a, y.b, y.bytes);
  });
  return rows;
}

Json pt2pt_json(const Pt2ptRow& r) {
  return {{"a", r.a}, {"b", r.b}, {"size", r.bytes}, {"latency_us", stats_json(r.latency_us)},
          {"latency_p99_us", r.latency_p99_us}, {"bw_GBps", stats_json(r.bw_GBps)},
          {"bw_total_GBps", r.bw_total_GBps}};
}

Pt2ptRow pt2pt_from_json(const Json& j) {
  Pt2ptRow r;
  r.a = j.value("a", 0);
  r.b = j.value("b", 0);
  r.bytes = j.value("size", std::size_t{0});
  r.latency_us = stats_from(j.at("latency_us"));
  r.latency_p99_us = j.value("latency_p99_us", 0.0);
  r.bw_GBps = stats_from(j.at("bw_GBps"));
  r.bw_total_GBps = j.value("bw_total_GBps", 0.0);
  return r;
}

std::string pt2pt_text(const std::vector<Pt2ptRow>& rows, const std::string& label) {
  std::string out = "# pt2pt " + label + ": latency = half a round trip (osu_latency), bandwidth = windows of " +
                    std::to_string(kPt2ptWindow) + " messages a -> b (osu_bw)\n";
  char line[200];
  std::snprintf(line, sizeof line, "#%5s %5s %12s  %9s %9s %9s  %10s\n", "a", "b", "size (B)", "lat p50", "lat p99",
                "lat mean", "bw (GB/s)");
  out += line;
  std::snprintf(line, sizeof line, "#%5s %5s %12s  %9s %9s %9s  %10s\n", "", "", "", "(us)", "(us)", "(us)", "");
  out += line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%6d %5d %12zu  %9.2f %9.2f %9.2f  %10.4f\n", r.a, r.b, r.bytes,
                  r.latency_us.median, r.latency_p99_us, r.latency_us.mean, r.bw_total_GBps);
    out += line;
  }
  return out;
}

}  // namespace nodeprobe::allreduce
