#include "nodeprobe/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

namespace nodeprobe {
namespace {

using Key = std::tuple<std::string, std::string, std::string, int>;  // probe, name, labels, occurrence

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", v);
  return buf;
}

/// Relative half-width of a side's interval around its centre.
double rel_half_spread(const Side& s) {
  if (!s.has_spread || s.center == 0) return 0;
  return (s.hi - s.lo) / 2 / std::fabs(s.center) * 100;
}

int status_rank(Status s) {
  switch (s) {
    case Status::kPass:
    case Status::kSkip: return 0;
    case Status::kWarn: return 1;
    case Status::kFail: return 2;
    case Status::kError:
    case Status::kTimeout:
    case Status::kUnknown: break;
  }
  return 3;
}

RunSummary summary_of(const Report& r, const std::string& origin) {
  return {origin, r.run.label, r.run.id, r.run.started, r.host.hostname, r.host.instance_type,
          r.verdict};
}

/// Keys every metric of a report by (probe, name, labels, occurrence).
std::map<Key, const Metric*> index_metrics(const Report& r, std::vector<Key>* order) {
  std::map<Key, const Metric*> out;
  std::map<std::tuple<std::string, std::string, std::string>, int> seen;
  for (const auto& p : r.probes) {
    for (const auto& m : p.metrics) {
      const std::string lk = labels_key(m.labels);
      const int occ = seen[{p.name, m.name, lk}]++;
      Key k{p.name, m.name, lk, occ};
      out.emplace(k, &m);
      if (order) order->push_back(k);
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kBetter: return "better";
    case Verdict::kWorse: return "worse";
    case Verdict::kSame: return "same";
    case Verdict::kAmbiguous: return "ambiguous";
    case Verdict::kInvalid: break;
  }
  return "n/a";
}

Side side_of(const Metric& m) {
  Side s;
  s.center = m.value;
  s.lo = s.hi = m.value;
  s.spread = "none";
  if (!m.stats || m.stats->n < 2) return s;
  const Stats& st = *m.stats;
  s.n = st.n;
  if (std::isfinite(st.median)) s.center = st.median;
  auto usable = [&](double lo, double hi) {
    return std::isfinite(lo) && std::isfinite(hi) && lo <= hi && (hi > lo);
  };
  if (usable(st.p5, st.p95)) {
    s.lo = st.p5, s.hi = st.p95, s.spread = "p5..p95";
  } else if (usable(st.min, st.max)) {
    s.lo = st.min, s.hi = st.max, s.spread = "min..max";
  } else if (std::isfinite(st.stddev) && st.stddev > 0) {
    s.lo = s.center - st.stddev, s.hi = s.center + st.stddev, s.spread = "+-stddev";
  } else {
    s.lo = s.hi = s.center;
    s.spread = "none (identical samples)";
    s.has_spread = true;  // n >= 2 identical samples: the spread is known to be zero
    return s;
  }
  // The centre must lie inside its own interval (a median outside p5..p95
  // means inconsistent stats; widen rather than mis-judge).
  s.lo = std::min(s.lo, s.center);
  s.hi = std::max(s.hi, s.center);
  s.has_spread = true;
  return s;
}

Judgement judge(const Side& b, const Side& a, Better better, const CompareOptions& opt) {
  Judgement j;
  if (!std::isfinite(b.center) || !std::isfinite(a.center)) {
    j.verdict = Verdict::kInvalid;
    j.delta_pct = std::numeric_limits<double>::quiet_NaN();
    j.reason = "no finite value on both sides";
    return j;
  }
  if (b.center == 0) {
    j.delta_pct = a.center == 0 ? 0
                                : std::copysign(std::numeric_limits<double>::infinity(), a.center);
  } else {
    j.delta_pct = (a.center - b.center) / std::fabs(b.center) * 100;
  }
  const double t = opt.threshold_pct;
  const bool overlap = a.lo <= b.hi && b.lo <= a.hi;

  if (std::fabs(j.delta_pct) < t) {
    const double noise = std::max(rel_half_spread(a), rel_half_spread(b));
    if (noise > opt.noise_factor * t) {
      j.verdict = Verdict::kAmbiguous;
      j.reason = "change " + pct(j.delta_pct) + " is under the threshold but the spread (+-" +
                 pct(noise) + ") is too wide to call it the same";
    } else {
      j.verdict = Verdict::kSame;
      j.reason = "change " + pct(j.delta_pct) + " is under the " + pct(t) + " threshold";
    }
    return j;
  }
  if (better == Better::kUnknown) {
    j.verdict = Verdict::kAmbiguous;
    j.reason = "changed by " + pct(j.delta_pct) + " but the metric has no direction";
    return j;
  }
  const bool improved = (better == Better::kHigher) == (j.delta_pct > 0);
  if (a.has_spread || b.has_spread) {
    if (overlap) {
      j.verdict = Verdict::kAmbiguous;
      j.reason = "changed by " + pct(j.delta_pct) + " but the spreads overlap (before " + b.spread +
                 ", after " + a.spread + ")";
      return j;
    }
    j.reason = "changed by " + pct(j.delta_pct) + "; the spreads do not overlap";
  } else {
    j.reason = "changed by " + pct(j.delta_pct) + " (single values: the threshold alone decides)";
  }
  j.verdict = improved ? Verdict::kBetter : Verdict::kWorse;
  return j;
}

std::size_t Comparison::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(
      metrics.begin(), metrics.end(), [&](const MetricDiff& d) { return d.judgement.verdict == v; }));
}

Comparison compare_reports(const Report& before, const Report& after, const CompareOptions& opt,
                           const std::string& origin_before, const std::string& origin_after) {
  Comparison c;
  c.options = opt;
  c.before = summary_of(before, origin_before);
  c.after = summary_of(after, origin_after);

  std::vector<Key> order_b, order_a;
  const auto mb = index_metrics(before, &order_b);
  const auto ma = index_metrics(after, &order_a);
  for (const Key& k : order_a) {
    const Metric& m = *ma.at(k);
    auto it = mb.find(k);
    if (it == mb.end()) {
      c.only_after.push_back({std::get<0>(k), m.name, m.unit, m.labels, m.value});
      continue;
    }
    MetricDiff d;
    d.probe = std::get<0>(k);
    d.name = m.name;
    d.unit = m.unit;
    d.labels = m.labels;
    d.occurrence = std::get<3>(k);
    // The newer report's direction wins; an unknown one falls back to the other side's.
    d.better = m.better != Better::kUnknown ? m.better : it->second->better;
    d.before = side_of(*it->second);
    d.after = side_of(m);
    d.judgement = judge(d.before, d.after, d.better, opt);
    if (!it->second->unit.empty() && !m.unit.empty() && it->second->unit != m.unit) {
      d.judgement.verdict = Verdict::kInvalid;
      d.judgement.reason = "unit changed from " + it->second->unit + " to " + m.unit;
    }
    c.metrics.push_back(std::move(d));
  }
  for (const Key& k : order_b) {
    if (ma.count(k)) continue;
    const Metric& m = *mb.at(k);
    c.only_before.push_back({std::get<0>(k), m.name, m.unit, m.labels, m.value});
  }

  c.environment = environment_diff(before, after);

  // Status changes: probes, then their checks, in the newer report's order.
  std::map<std::string, const ProbeResult*> pb;
  for (const auto& p : before.probes) pb.emplace(p.name, &p);
  for (const auto& p : after.probes) {
    auto it = pb.find(p.name);
    if (it == pb.end()) continue;
    const ProbeResult& old = *it->second;
    if (old.status != p.status)
      c.statuses.push_back({p.name, "", old.status, p.status,
                            status_rank(p.status) > status_rank(old.status)});
    std::map<std::string, Status> checks;
    for (const auto& ch : old.checks) checks.emplace(ch.id, ch.status);
    for (const auto& ch : p.checks) {
      auto ci = checks.find(ch.id);
      if (ci != checks.end() && ci->second != ch.status)
        c.statuses.push_back({p.name, ch.id, ci->second, ch.status,
                              status_rank(ch.status) > status_rank(ci->second)});
    }
  }
  return c;
}

}  // namespace nodeprobe
