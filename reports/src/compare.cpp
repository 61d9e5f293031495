#include "nodeprobe/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <tuple>

#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe {
namespace {

using Key = std::tuple<std::string, std::string, std::string, int>;  // probe, name, axes, occurrence

constexpr std::size_t kPercentileSamples = 20;
// Two runs of an unchanged node whose samples are n and m independent draws
// of one distribution have all of one run's samples above all of the other's
// with probability 2 / C(n+m, n): 1 in 126 for 5 against 5. An A/A accept
// pair judges some 30 metrics, so min..max separation alone would call one of
// them worse in about one pair in ten on a perfectly quiet node. Separation
// counts only when chance explains it at most once in a thousand (7 samples a
// side and up).
constexpr double kChanceSeparation = 1e-3;

/// 2 / C(n+m, n): the chance that all of n samples lie on one side of all of
/// m samples drawn from the same distribution.
double chance_separation(std::size_t n, std::size_t m) {
  const std::size_t k = std::min(n, m);
  double c = 1;  // C(n+m, k), built up factor by factor
  for (std::size_t i = 1; i <= k; ++i) c = c * static_cast<double>(n + m - k + i) / static_cast<double>(i);
  return std::min(1.0, 2 / c);
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", v);
  return buf;
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

const ProbeResult* find_probe(const Report& r, const std::string& name) {
  for (const auto& p : r.probes)
    if (p.name == name) return &p;
  return nullptr;
}

struct Indexed {
  const Metric* metric;
  MetricDescriptor descriptor;
};

/// Keys every metric of `r` by (probe, name, axes, occurrence). The axes come
/// from the descriptor declared in `r`, else in `other` (a /1 report read
/// against a /2 one: its settings labels are then left out of the identity),
/// else every label is an axis.
std::map<Key, Indexed> index_metrics(const Report& r, const Report& other, std::vector<Key>* order) {
  std::map<Key, Indexed> out;
  std::map<std::tuple<std::string, std::string, std::string>, int> seen;
  for (const auto& p : r.probes) {
    const ProbeResult* op = find_probe(other, p.name);
    for (const auto& m : p.metrics) {
      MetricDescriptor d = descriptor_of(p, m);
      if (!find_descriptor(p, m.name) && op)
        if (const MetricDescriptor* od = find_descriptor(*op, m.name)) d = *od;
      const std::string ak = labels_key(axes_of(m, d));
      const int occ = seen[{p.name, m.name, ak}]++;
      Key k{p.name, m.name, ak, occ};
      out.emplace(k, Indexed{&m, std::move(d)});
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

std::string check_options(const CompareOptions& opt) {
  if (std::isnan(opt.threshold_pct)) return "--threshold must be a number, not NaN";
  if (!std::isfinite(opt.threshold_pct)) return "--threshold must be finite";
  if (opt.threshold_pct < 0) return "--threshold must be 0 or more (a percentage)";
  return {};
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
  auto usable = [](double lo, double hi) { return std::isfinite(lo) && std::isfinite(hi) && lo <= hi; };
  // With few samples p5 and p95 are interpolations between the two extreme
  // samples and understate the spread: below kPercentileSamples the interval
  // is min..max, every sample seen.
  if (st.n >= kPercentileSamples && usable(st.p5, st.p95) && st.p95 > st.p5) {
    s.lo = st.p5, s.hi = st.p95, s.spread = "p5..p95";
  } else if (usable(st.min, st.max)) {
    s.lo = st.min, s.hi = st.max, s.spread = st.max > st.min ? "min..max" : "none (identical samples)";
  } else {
    return s;
  }
  // The centre lies inside its own interval (a median outside p5..p95 means
  // inconsistent stats: widen rather than mis-judge).
  s.lo = std::min(s.lo, s.center);
  s.hi = std::max(s.hi, s.center);
  s.has_spread = true;
  return s;
}

Judgement judge(const Side& b, const Side& a, Better better, const MetricDescriptor& d, const CompareOptions& opt) {
  const MetricKind kind = d.kind;
  Judgement j;
  if (!std::isfinite(b.center) || !std::isfinite(a.center)) {
    j.verdict = Verdict::kInvalid;
    j.delta_pct = std::numeric_limits<double>::quiet_NaN();
    j.reason = "no finite value on both sides";
    return j;
  }
  if (b.center == 0) {
    j.delta_pct = a.center == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), a.center);
  } else {
    j.delta_pct = (a.center - b.center) / std::fabs(b.center) * 100;
  }
  const double t = opt.threshold_pct;
  if (std::fabs(j.delta_pct) <= t) {
    j.verdict = Verdict::kSame;
    j.reason = "change " + pct(j.delta_pct) + " is within the " + pct(t) + " threshold";
    return j;
  }
  if (kind == MetricKind::kModel) {
    j.verdict = Verdict::kInvalid;
    j.reason = "changed by " + pct(j.delta_pct) + "; a model's prediction, not a measurement: not judged";
    return j;
  }
  if (better == Better::kUnknown) {
    j.verdict = Verdict::kAmbiguous;
    j.reason = "changed by " + pct(j.delta_pct) + " but the metric has no direction";
    return j;
  }
  const bool improved = (better == Better::kHigher) == (j.delta_pct > 0);
  if (kind == MetricKind::kCount) {
    j.verdict = improved ? Verdict::kBetter : Verdict::kWorse;
    j.reason = "changed by " + pct(j.delta_pct) + " (an exact count or reading: no noise to allow for)";
    return j;
  }
  if (!a.has_spread || !b.has_spread) {
    j.verdict = Verdict::kAmbiguous;
    j.reason = "changed by " + pct(j.delta_pct) + " but " +
               (!a.has_spread && !b.has_spread ? std::string("neither side has") : "one side has no") +
               " spread (fewer than 2 samples): the change cannot be told from noise";
    return j;
  }
  if (a.lo <= b.hi && b.lo <= a.hi) {
    j.verdict = Verdict::kAmbiguous;
    j.reason = "changed by " + pct(j.delta_pct) + " but the intervals overlap (before " + b.spread + " n=" +
               std::to_string(b.n) + ", after " + a.spread + " n=" + std::to_string(a.n) + ")";
    return j;
  }
  // p5..p95 intervals of 20+ samples a side separate by chance far less
  // often than the full ranges of a few samples: the few-sample case is the
  // one to guard.
  if (b.n < kPercentileSamples || a.n < kPercentileSamples) {
    if (const double p = chance_separation(b.n, a.n); p > kChanceSeparation) {
      j.verdict = Verdict::kAmbiguous;
      j.reason = "changed by " + pct(j.delta_pct) + " and the intervals separate, but with " + std::to_string(b.n) +
                 " and " + std::to_string(a.n) + " samples two runs of an unchanged node separate by chance 1 in " +
                 std::to_string(std::llround(1 / p)) + ": run both with 7 or more samples to judge";
      return j;
    }
  }
  // Samples that repeat within one run share its state (free memory, page
  // backing): their intervals separate between two runs of an unchanged
  // node. Within the measured run-to-run factor, that is not a change.
  if (d.run_to_run > 1 && b.center > 0 && a.center > 0 &&
      std::max(a.center, b.center) / std::min(a.center, b.center) <= d.run_to_run) {
    char f[32];
    std::snprintf(f, sizeof f, "%.1fx", d.run_to_run);
    j.verdict = Verdict::kAmbiguous;
    j.reason = "changed by " + pct(j.delta_pct) + " and the intervals separate, but two runs of an unchanged node " +
               "differ by up to " + f + " for this metric (measured: one run's samples do not see all of that " +
               "variation): run each side several times to judge";
    return j;
  }
  j.verdict = improved ? Verdict::kBetter : Verdict::kWorse;
  j.reason = "changed by " + pct(j.delta_pct) + " and the intervals separate (before " + b.spread + " n=" +
             std::to_string(b.n) + ", after " + a.spread + " n=" + std::to_string(a.n) + ")";
  return j;
}

std::string activity_text(const std::optional<HostActivity>& before, const std::optional<HostActivity>& after) {
  if (!before && !after) return {};
  const HostActivity& any = after ? *after : *before;
  const double cpus = any.cpus > 0 ? any.cpus : 1;
  const double ob = before ? before->other_cpus : 0, oa = after ? after->other_cpus : 0;
  const double sb = before ? before->steal_cpus : 0, sa = after ? after->steal_cpus : 0;
  const double busy = 0.25 * cpus, stolen = 0.1 * cpus;
  const bool other = ob >= busy || oa >= busy || std::fabs(oa - ob) >= busy;
  const bool steal = sb >= stolen || sa >= stolen;
  if (!other && !steal) return {};
  char buf[200];
  auto side = [](const std::optional<HostActivity>& a, double v) {
    char s[32];
    if (!a) return std::string("not measured");
    std::snprintf(s, sizeof s, "%.1f", v);
    return std::string(s);
  };
  std::string t;
  if (other) {
    const bool after_busier = oa >= ob;
    std::snprintf(buf, sizeof buf, "other processes used %s of %.0f CPUs during the %s run (%s %s)",
                  side(after_busier ? after : before, after_busier ? oa : ob).c_str(), cpus,
                  after_busier ? "after" : "before", side(after_busier ? before : after, after_busier ? ob : oa).c_str(),
                  after_busier ? "before" : "after");
    t = buf;
  }
  if (steal) {
    std::snprintf(buf, sizeof buf, "the hypervisor took %s (before) and %s (after) of %.0f CPUs",
                  side(before, sb).c_str(), side(after, sa).c_str(), cpus);
    t += (t.empty() ? "" : "; ") + std::string(buf);
  }
  return t + ": a busy host slows what it measures";
}

std::size_t Comparison::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(
      metrics.begin(), metrics.end(), [&](const MetricDiff& d) { return d.judgement.verdict == v; }));
}

std::vector<Cause> Comparison::causes() const {
  std::vector<Cause> out;
  std::vector<const FieldDiff*> global;
  for (const auto& f : environment)
    if (f.probe.empty()) global.push_back(&f);
  auto cause_of = [&](const std::string& probe) -> Cause& {
    for (auto& c : out)
      if (c.probe == probe) return c;
    Cause c{probe, global, {}, std::nullopt, std::nullopt};
    if (auto it = activity.find(probe); it != activity.end()) {
      c.before_activity = it->second.first;
      c.after_activity = it->second.second;
    }
    out.push_back(std::move(c));
    return out.back();
  };
  for (const auto& d : metrics)
    if (d.judgement.verdict == Verdict::kWorse || d.judgement.verdict == Verdict::kBetter)
      cause_of(d.probe).moved.push_back(&d);
  for (const auto& f : environment)
    if (!f.probe.empty()) cause_of(f.probe).changes.push_back(&f);
  // Probe changes first, then the host-wide ones that apply to every probe.
  for (auto& c : out)
    std::stable_partition(c.changes.begin(), c.changes.end(), [](const FieldDiff* f) { return !f->probe.empty(); });
  return out;
}

Comparison compare_reports(const Report& before, const Report& after, const CompareOptions& opt,
                           const std::string& origin_before, const std::string& origin_after) {
  Comparison c;
  c.options = opt;
  c.before = summary_of(before, origin_before);
  c.after = summary_of(after, origin_after);

  std::vector<Key> order_b, order_a;
  const auto mb = index_metrics(before, after, &order_b);
  const auto ma = index_metrics(after, before, &order_a);
  for (const Key& k : order_a) {
    const Indexed& ia = ma.at(k);
    const Metric& m = *ia.metric;
    const Labels axes = axes_of(m, ia.descriptor);
    auto it = mb.find(k);
    if (it == mb.end()) {
      c.only_after.push_back({std::get<0>(k), m.name, m.unit, axes, m.value, ia.descriptor});
      continue;
    }
    const Metric& old = *it->second.metric;
    MetricDiff d;
    d.probe = std::get<0>(k);
    d.name = m.name;
    d.unit = m.unit;
    d.labels = axes;
    d.occurrence = std::get<3>(k);
    d.descriptor = ia.descriptor;
    // The newer report's direction wins; an unknown one falls back to the other side's.
    d.better = ia.descriptor.better != Better::kUnknown ? ia.descriptor.better : it->second.descriptor.better;
    d.before = side_of(old);
    d.after = side_of(m);
    // The larger run-to-run factor of the two sides (an older report may not declare it).
    MetricDescriptor judged = ia.descriptor;
    judged.run_to_run = std::max(run_to_run_for(ia.descriptor, m.labels), run_to_run_for(it->second.descriptor, old.labels));
    d.judgement = judge(d.before, d.after, d.better, judged, opt);
    if (!old.unit.empty() && !m.unit.empty() && old.unit != m.unit) {
      d.judgement.verdict = Verdict::kInvalid;
      d.judgement.reason = "unit changed from " + old.unit + " to " + m.unit;
    }
    c.metrics.push_back(std::move(d));
  }
  for (const Key& k : order_b) {
    if (ma.count(k)) continue;
    const Indexed& ib = mb.at(k);
    c.only_before.push_back(
        {std::get<0>(k), ib.metric->name, ib.metric->unit, axes_of(*ib.metric, ib.descriptor), ib.metric->value,
         ib.descriptor});
  }

  c.environment = environment_diff(before, after);
  for (const auto& p : after.probes)
    if (const ProbeResult* old = find_probe(before, p.name)) c.activity[p.name] = {old->host_activity, p.host_activity};

  // Status changes: probes, then their checks, in the newer report's order.
  for (const auto& p : after.probes) {
    const ProbeResult* old = find_probe(before, p.name);
    if (!old) continue;
    if (old->status != p.status)
      c.statuses.push_back({p.name, "", old->status, p.status, status_rank(p.status) > status_rank(old->status)});
    std::map<std::string, Status> checks;
    for (const auto& ch : old->checks) checks.emplace(ch.id, ch.status);
    for (const auto& ch : p.checks) {
      auto ci = checks.find(ch.id);
      if (ci != checks.end() && ci->second != ch.status)
        c.statuses.push_back({p.name, ch.id, ci->second, ch.status, status_rank(ch.status) > status_rank(ci->second)});
    }
  }
  return c;
}

}  // namespace nodeprobe
