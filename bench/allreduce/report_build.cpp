#include "report_build.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "ar_math.h"
#include "ar_metrics.h"
#include "nodeprobe/stats.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/probe.h"
#include "pt2pt.h"

namespace nodeprobe::allreduce {
namespace {

// Check ids allow [a-z0-9_.-]: "fabric:tcp" becomes "fabric.tcp".
std::string id_part(const std::string& label) {
  std::string s = label;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) c = '.';
  return s;
}

Labels target_axes(const TargetResult& t) {
  return {{"backend", t.target.backend}, {"provider", provider_label(t)}};
}

// time, algbw and busbw of one placement from the same samples: the bandwidth
// spreads are the time spread mapped through bytes / t, so all three agree.
void add_placement_metrics(ProbeResult& r, const RunData& d, const SizeRow& row, const Placement& p,
                           const Labels& axes) {
  const Stats t = p.time_stats.n > 0 ? p.time_stats : compute_stats({p.time_us});
  const Stats alg = map_stats(t, [&](double us) { return algbw_gbps(row.bytes, us / 1e6); });
  const Stats bus = map_stats(alg, [&](double a) { return a * coll_bus_factor(d.coll, d.nranks); });
  // One rank moves nothing over any link: its bandwidths would be a local copy,
  // or nothing at all in place (see the ranks.single check); only time is kept.
  if (d.nranks > 1) {
    add_metric(r, "busbw", p.busbw, bus, axes);
    add_metric(r, "algbw", p.algbw, alg, axes);
  }
  add_metric(r, "time", p.time_us, t, axes);
  if (p.time_stats.n > 0) add_metric(r, "time_p99", p.time_p99_us, axes);
}

void add_size_metrics(ProbeResult& r, const RunData& d, const TargetResult& t) {
  for (const auto& row : t.rows) {
    for (const bool ip : {false, true}) {
      const Placement& p = ip ? row.ip : row.oop;
      if (!p.measured) continue;
      Labels axes = target_axes(t);
      axes["size"] = std::to_string(row.bytes);
      axes["placement"] = ip ? "in-place" : "out-of-place";
      add_placement_metrics(r, d, row, p, axes);
    }
  }
  if (!t.rows.empty() && d.nranks > 1) add_metric(r, "avg_busbw", average_busbw(t.rows), target_axes(t));
  for (const auto& p : t.pt2pt) {
    Labels axes = target_axes(t);
    axes["a"] = std::to_string(p.a);
    axes["b"] = std::to_string(p.b);
    axes["size"] = std::to_string(p.bytes);
    add_metric(r, "pt2pt_latency", p.latency_us.median, p.latency_us, axes);
    add_metric(r, "pt2pt_latency_p99", p.latency_p99_us, axes);
    add_metric(r, "pt2pt_bw", p.bw_total_GBps, p.bw_GBps, axes);
  }
}

void add_scaling_metrics(ProbeResult& r, const ScalingResult& s) {
  if (s.points.empty()) return;
  const double step1 = s.points.front().step_s;
  for (const auto& p : s.points) {
    const Labels axes{{"nodes", std::to_string(p.nodes)}};
    if (p.predicted) {
      add_metric(r, "predicted_step_time", p.step_s, axes);
      add_metric(r, "predicted_efficiency", p.efficiency, axes);
      add_metric(r, "predicted_busbw", p.busbw_gbps, axes);
      continue;
    }
    // Throughput and efficiency are functions of the step time: their spread is its spread.
    const Stats st = p.step_stats.n > 0 ? p.step_stats : compute_stats({p.step_s});
    const double ranks = p.ranks;
    add_metric(r, "step_time", p.step_s, st, axes);
    add_metric(r, "throughput", p.throughput, map_stats(st, [&](double x) { return x > 0 ? ranks / x : 0; }), axes);
    add_metric(r, "scaling_efficiency", p.efficiency,
               map_stats(st, [&](double x) { return x > 0 ? step1 / x : 0; }), axes);
  }
}

Json placement_json(const Placement& p) {
  if (!p.measured) return nullptr;
  Json j = {{"time_us", p.time_us}, {"algbw_GBps", p.algbw}, {"busbw_GBps", p.busbw}};
  if (p.time_stats.n > 0) {
    j["time_p50_us"] = p.time_p50_us;
    j["time_p99_us"] = p.time_p99_us;
  }
  j["wrong"] = p.wrong < 0 ? Json(nullptr) : Json(p.wrong);
  return j;
}

Json target_json(const RunData& d, const TargetResult& t) {
  Json j;
  j["target"] = t.target.label();
  j["backend"] = t.target.backend;
  j["provider"] = provider_label(t);
  j["status"] = std::string(to_string(t.status));
  j["reason"] = t.reason;
  j["transport"] = t.transport;
  j["details"] = t.details;
  Json rows = Json::array();
  for (const auto& row : t.rows) {
    rows.push_back({{"size", row.bytes}, {"count", row.count}, {"type", std::string(to_string(d.dtype))},
                    {"redop", coll_reduces(d.coll) ? std::string(to_string(d.op)) : "none"},
                    {"out_of_place", placement_json(row.oop)},
                    {"in_place", placement_json(row.ip)}});
    if (!row.algo.empty()) rows.back()["algorithm"] = row.algo;
  }
  j["table"] = rows;
  j["avg_busbw_GBps"] = average_busbw(t.rows);
  if (!t.pt2pt.empty()) {
    Json p = Json::array();
    for (const auto& row : t.pt2pt) p.push_back(pt2pt_json(row));
    j["pt2pt"] = p;
  }
  return j;
}

Check data_check(const RunData& d, const TargetResult& t) {
  Check c;
  c.id = "data." + id_part(t.target.label());
  c.expected = d.dtype == DType::kInt32 ? "0 wrong elements (exact)" : "0 wrong elements (type tolerance)";
  long wrong = 0;
  std::string where;
  int checked = 0;
  for (const auto& row : t.rows)
    for (const bool ip : {false, true}) {
      const Placement& p = ip ? row.ip : row.oop;
      if (p.wrong < 0) continue;
      ++checked;
      if (p.wrong > 0) {
        wrong += p.wrong;
        if (where.size() < 200) where += (where.empty() ? "" : ", ") + format_size(row.bytes) + (ip ? " in-place" : "");
      }
    }
  if (checked == 0) {
    c.status = Status::kSkip;
    c.observed = "not checked (-c 0)";
    return c;
  }
  c.status = wrong ? Status::kFail : Status::kPass;
  c.observed = wrong ? std::to_string(wrong) + " wrong element(s) at " + where
                     : "0 wrong elements in " + std::to_string(checked) + " checked allreduce(s)";
  if (wrong)
    c.fix = "Wrong data is a correctness failure whatever the speed: rerun with -c 5 to see if it "
            "repeats, then test the transport alone (fi_rdm_tagged_bw -v, osu_allreduce -c) and the "
            "host's memory";
  return c;
}

}  // namespace

std::string provider_label(const TargetResult& t) {
  // The requested one: what really carried the data (MPI's ob1:vader, NCCL's
  // network) is an observation, in environment, so a pair still matches when it changes.
  return t.target.provider.empty() ? "auto" : t.target.provider;
}

std::vector<std::string> straggler_names(const RunData& d, std::vector<int>* ranks) {
  std::vector<std::string> out;
  for (const auto& t : d.targets) {
    if (t.rows.empty() || t.rows.back().oop.rank_time_us.size() < 2) continue;
    const auto& times = t.rows.back().oop.rank_time_us;
    const double med = median_of(times);
    for (int r : stragglers(times, 1.5)) {
      char buf[160];
      const std::string host = static_cast<std::size_t>(r) < d.hosts.rank_host.size()
                                   ? d.hosts.rank_host[static_cast<std::size_t>(r)]
                                   : "?";
      std::snprintf(buf, sizeof buf, "rank %d (host %s): %.2fx the median time in %s", r, host.c_str(),
                    times[static_cast<std::size_t>(r)] / med, t.target.label().c_str());
      out.push_back(buf);
      if (ranks) ranks->push_back(r);
    }
    break;
  }
  return out;
}

ProbeResult build_probe(const RunData& d, std::optional<Status> forced, const std::string& reason) {
  ProbeResult r;
  r.name = "allreduce";
  r.config = d.config;
  r.environment = d.environment;
  declare_metrics(r, allreduce_metrics());
  if (!d.limits.empty()) r.data["limits"] = d.limits;
  if (d.started_s > 0) r.duration_s = std::max(0.0, steady_clock().now_s() - d.started_s);
  std::vector<Status> statuses;
  std::string first_reason;
  Json targets = Json::array();
  for (const auto& t : d.targets) {
    if (!t.transport.empty()) r.environment["transport." + t.target.label()] = t.transport;
    add_size_metrics(r, d, t);
    targets.push_back(target_json(d, t));
    if (t.status == Status::kSkip || t.status == Status::kError) {
      add_check(r, "target." + id_part(t.target.label()), t.status, t.reason, "the target runs here");
      if (first_reason.empty()) first_reason = t.target.label() + ": " + t.reason;
    }
    for (const auto& c : t.checks) r.checks.push_back(c);
    if (!t.rows.empty()) r.checks.push_back(data_check(d, t));
    statuses.push_back(t.status);
  }
  r.data["targets"] = targets;
  const bool any_rows =
      std::any_of(d.targets.begin(), d.targets.end(), [](const TargetResult& t) { return !t.rows.empty(); });
  if (d.nranks == 1 && any_rows)
    add_check(r, "ranks.single", Status::kSkip,
              "one rank: nothing crosses a link, so no bandwidth is reported (busbw is 0 by definition, and in "
              "place the collective has nothing to do); the data checks and the time per call are",
              "2 or more ranks (GPUs or hosts) to measure bandwidth");

  if (d.compare && d.targets.size() == 2) {
    Json cmp = Json::array();
    const auto& a = d.targets[0];
    const auto& b = d.targets[1];
    for (const auto& ra : a.rows)
      for (const auto& rb : b.rows) {
        if (ra.bytes != rb.bytes || !ra.oop.measured || !rb.oop.measured || !(rb.oop.busbw > 0)) continue;
        const double ratio = ra.oop.busbw / rb.oop.busbw;
        add_metric(r, "busbw_ratio", ratio,
                   {{"a", a.target.label()}, {"b", b.target.label()}, {"size", std::to_string(ra.bytes)}});
        cmp.push_back({{"size", ra.bytes}, {"a_busbw_GBps", ra.oop.busbw}, {"b_busbw_GBps", rb.oop.busbw}, {"ratio", ratio}});
      }
    r.data["compare"] = {{"a", a.target.label()}, {"b", b.target.label()}, {"sizes", cmp}};
  }

  // Per-rank rows: the largest size of every target.
  Json ranks = Json::array();
  for (int rk = 0; rk < d.nranks; ++rk) {
    const auto urk = static_cast<std::size_t>(rk);
    Json row = {{"rank", rk}, {"host", urk < d.hosts.rank_host.size() ? d.hosts.rank_host[urk] : ""}};
    if (urk < d.pids.size()) row["pid"] = d.pids[urk];
    Json per = Json::object();
    for (const auto& t : d.targets) {
      if (t.rows.empty()) continue;
      const auto& last = t.rows.back();
      if (urk < t.rank_devices.size()) row["device"] = t.rank_devices[urk];
      if (urk >= last.oop.rank_time_us.size()) continue;
      const double us = last.oop.rank_time_us[urk];
      const double alg = algbw_gbps(last.bytes, us / 1e6);
      per[t.target.label()] = {{"size", last.bytes}, {"time_us", us}, {"algbw_GBps", alg},
                               {"busbw_GBps", alg * coll_bus_factor(d.coll, d.nranks)}};
    }
    row["targets"] = per;
    ranks.push_back(row);
  }
  r.data["ranks"] = ranks;
  const auto slow = straggler_names(d);
  const std::string& crowded = d.hosts.oversubscribed;
  if (!crowded.empty()) r.environment["oversubscribed"] = crowded;
  if (!slow.empty() || any_rows) {
    if (!crowded.empty()) {
      // Ranks that take turns on a CPU are slow by the scheduler's turn, not
      // by their host: the comparison is not made, and says why.
      add_check(r, "ranks.stragglers", Status::kSkip,
                "not judged: " + crowded + (slow.empty() ? "" : " (slowest: " + slow.front() + ")"),
                "at most one rank per CPU, so every rank within 1.5x the median time means something");
    } else {
      std::string obs;
      for (const auto& s : slow) obs += (obs.empty() ? "" : "; ") + s;
      add_check(r, "ranks.stragglers", slow.empty() ? Status::kPass : Status::kWarn,
                slow.empty() ? "no rank above 1.5x the median time" : obs, "every rank within 1.5x the median time",
                slow.empty() ? "" : "Compare the named hosts with the others: CPU frequency governor, noisy "
                                    "neighbours, NIC errors (ethtool -S), PCIe link (nvidia-smi -q)");
    }
    r.data["stragglers"] = slow;
  }

  if (d.mesh) {
    r.checks.push_back(mesh_check(*d.mesh, d.hosts));
    r.data["mesh"] = mesh_json(*d.mesh, d.hosts);
    std::vector<double> rtts;
    for (const auto& l : d.mesh->links)
      if (l.ok) rtts.push_back(l.rtt_us);
    if (!rtts.empty()) add_sampled_metric(r, "mesh_rtt", rtts);
    add_metric(r, "mesh_unreachable", d.mesh->unreachable());
  }
  if (d.scaling) {
    r.data["scaling"] = scaling_json(*d.scaling);
    r.data["scaling"]["target"] = d.scaling_target;
    const ScalingPoint* last = nullptr;
    for (const auto& p : d.scaling->points)
      if (!p.predicted) last = &p;
    if (last) {
      char obs[256];
      std::snprintf(obs, sizeof obs, "efficiency %.3f on %d node(s) (%d ranks); limited by %s", last->efficiency,
                    last->nodes, last->ranks, last->limit.c_str());
      add_check(r, "scaling", Status::kPass, obs, "measured on 1, 2, 4 ... nodes; larger counts predicted");
    }
    add_scaling_metrics(r, *d.scaling);
  }
  if (!d.scaling_error.empty()) {
    add_check(r, "scaling", Status::kError, d.scaling_error, "the scaling emulation runs");
    statuses.push_back(Status::kError);
    if (first_reason.empty()) first_reason = "scaling: " + d.scaling_error;
  }
  if (!d.unmonitored.empty()) {
    std::string list;
    for (int u : d.unmonitored) list += (list.empty() ? "" : ", ") + std::to_string(u);
    add_check(r, "control.reachability", Status::kWarn, "rank(s) " + list + " could not open TCP to rank 0",
              "every rank reaches rank 0 over TCP (control channel)",
              "Allow TCP between the members (security group, host firewall)", "net.unreachable");
  }

  for (const auto& c : r.checks) statuses.push_back(c.status);
  if (forced) {
    r.status = *forced;
    r.reason = reason;
    return r;
  }
  r.status = statuses.empty() ? Status::kSkip : aggregate(statuses);
  if (r.status == Status::kSkip || r.status == Status::kError)
    r.reason = first_reason.empty() ? "nothing was measured" : first_reason;
  return r;
}

}  // namespace nodeprobe::allreduce
