#include "nodeprobe/fleet_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>

#include "nodeprobe/key_numbers.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/metric_select.h"
#include "nodeprobe/render_text.h"

namespace nodeprobe {
namespace {

// MAD x 1.4826 estimates the standard deviation of normally distributed data.
constexpr double kMadScale = 1.4826;
constexpr const char* kNodeActions[] = {"none", "tune", "restart-job", "reset-gpu", "reboot", "replace",
                                        "contact-support"};

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string fmt0(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string fmt1(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string pct(double share) { return fmt0(share * 100) + " %"; }

FleetNode* node_by_host(FleetReport& r, const std::string& host) {
  for (auto& n : r.nodes)
    if (n.host == host) return &n;
  return nullptr;
}

// A node lost during the run (stopped answering: timeout; or died: error).
bool alive(const FleetNode& n) { return n.timed_out_in.empty(); }

void add_node_finding(FleetNode& n, const std::string& title, const std::string& action) {
  FleetFinding f;
  f.id = "fleet.outlier";
  f.severity = Severity::kWarn;
  f.title = title;
  f.action = action;
  n.findings.push_back(std::move(f));
}

// The best a pair did: its fastest timed allreduce. A bad link is slow in
// every one; a pair whose median dipped (a busy moment, a TCP stall) but that
// reached its ends' speed once is noise, not a link to replace.
double pair_best(const FleetPair& p) { return p.stats.n > 0 ? std::max(p.stats.max, p.busbw) : p.busbw; }

// A pair is a link suspect when even its best is well below what both of its
// ends reach (the lower of the two nodes' scores): the link, not either node.
bool link_suspect(const FleetPair& p, double score_a, double score_b, const OutlierOptions& o) {
  const double expect = std::min(score_a, score_b);
  return expect > 0 && pair_best(p) < o.share * expect;
}

// Each node's median over its passing pairs, by `of` (typical speed or best);
// with `first` (scores of a first pass), the pairs that are link suspects
// against those scores are set aside.
std::map<std::string, double> node_scores(const FleetReport& r, const std::map<std::string, double>* first,
                                          double (*of)(const FleetPair&), const OutlierOptions& o) {
  std::map<std::string, std::vector<double>> per_node;
  for (const auto& p : r.pairs) {
    if (p.status != Status::kPass || p.busbw <= 0) continue;
    if (first && link_suspect(p, first->at(p.a), first->at(p.b), o)) continue;
    per_node[p.a].push_back(of(p));
    per_node[p.b].push_back(of(p));
  }
  std::map<std::string, double> score;
  for (const auto& [host, v] : per_node) score[host] = median_of(v);
  return score;
}

double pair_typical(const FleetPair& p) { return p.busbw; }

// Each node's score: the median of its pairs once the pairs that are link
// suspects against a first pass (every pair) are set aside. The first pass is
// kept: best-allreduce scores set the same pairs aside.
struct NodeScores {
  std::map<std::string, double> first;
  std::map<std::string, double> settled;
};

NodeScores settled_scores(const FleetReport& r, const OutlierOptions& o) {
  NodeScores s;
  s.first = node_scores(r, nullptr, pair_typical, o);
  s.settled = node_scores(r, &s.first, pair_typical, o);
  return s;
}

// The passing pairs below `o.share` of what both ends reach (indices into r.pairs).
std::vector<std::size_t> suspects_by(const FleetReport& r, const std::map<std::string, double>& score,
                                     const OutlierOptions& o) {
  auto of = [&](const std::string& host) {
    const auto it = score.find(host);
    return it == score.end() ? 0.0 : it->second;
  };
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const FleetPair& p = r.pairs[i];
    if (p.status == Status::kPass && p.busbw > 0 && link_suspect(p, of(p.a), of(p.b), o)) out.push_back(i);
  }
  return out;
}

// The nodes slow in their pairs: a node's score (the median of its pairs once
// its link suspects are set aside) is an outlier among the nodes' scores, and
// so is its score by best allreduce. A slow NIC or host caps every allreduce
// of its pairs; a node whose pairs each reached the fleet's speed at least
// once was slowed by moments (a busy CPU, a TCP stall), not by itself.
// Measured: on a loaded 2-core test machine one noisy pair (0.81 x) beside a
// shaped slow link once made an end a node outlier to reboot. Host -> why.
struct SlowNodes {
  NodeScores scores;
  RobustSpread spread;  // of the settled scores
  std::map<std::string, std::string> why;
};

SlowNodes slow_nodes_of(const FleetReport& r, const OutlierOptions& o) {
  SlowNodes out;
  out.scores = settled_scores(r, o);
  const std::map<std::string, double> best = node_scores(r, &out.scores.first, pair_best, o);
  std::vector<double> best_scores, scores;
  for (const auto& [host, v] : best) best_scores.push_back(v);
  for (const auto& [host, v] : out.scores.settled) scores.push_back(v);
  // With fewer than three nodes there is no majority to tell a node from its link.
  if (scores.size() < 3) return out;
  const RobustSpread best_spread = robust_spread(best_scores);
  out.spread = robust_spread(scores);
  for (const auto& [host, v] : out.scores.settled) {
    std::string why;
    if (!is_outlier(v, out.spread, Better::kHigher, o, &why)) continue;
    if (!is_outlier(best.at(host), best_spread, Better::kHigher, o)) continue;
    out.why[host] = why;
  }
  return out;
}

// Pairs: ratio to the median, each node's score, node outliers by score, and
// link outliers: a pair well below what both of its ends reach with everyone
// else. A node's score is the median of its pairs once its link suspects are
// set aside: a pair runs no faster than either end, so a slow node is slow in
// (most of) its pairs, while one slow link lowers one pair of each end and
// must not, with one noisy pair more, make either end look slow.
void judge_pairs(FleetReport& r, const OutlierOptions& o) {
  std::vector<double> all;
  for (const auto& p : r.pairs)
    if (p.status == Status::kPass && p.busbw > 0) all.push_back(p.busbw);
  const double med = median_of(all);
  for (auto& p : r.pairs) p.ratio_to_median = p.status == Status::kPass && med > 0 ? p.busbw / med : 0;
  if (all.empty()) return;

  // At least half of a node's pairs are at or above its first score, so none
  // loses every pair here.
  SlowNodes slow = slow_nodes_of(r, o);
  std::map<std::string, double>& score = slow.scores.settled;
  std::size_t scored = 0;
  for (auto& n : r.nodes) {
    auto it = score.find(n.host);
    if (it == score.end()) continue;
    ++scored;
    Metric m;
    m.name = "pair_busbw";
    m.value = it->second;
    m.unit = "GB/s";
    m.better = Better::kHigher;
    m.labels = {{"of", "median of its pairs"}};
    n.metrics.push_back(m);
  }
  if (scored < 3) return;
  const RobustSpread& s = slow.spread;
  for (const auto& [host, why] : slow.why) {
    const double v = score.at(host);
    FleetOutlier x;
    x.kind = "node";
    x.host = host;
    x.metric = "pair_busbw";
    x.value = v;
    x.fleet_median = s.median;
    x.ratio = s.median > 0 ? v / s.median : 0;
    x.reason = "slow in its pairs: median pair busbw " + format_number(v) + " GB/s, " + why +
               "; the node's NIC, driver or host, not one link";
    x.action = "reboot";
    if (FleetNode* n = node_by_host(r, host))
      add_node_finding(*n, "Pair bandwidth " + fmt(x.ratio) + " x the fleet median (node outlier)", x.action);
    r.outliers.push_back(std::move(x));
  }
  for (std::size_t i : suspects_by(r, score, o)) {
    const FleetPair& p = r.pairs[i];
    if (slow.why.count(p.a) || slow.why.count(p.b)) continue;
    const double expect = std::min(score[p.a], score[p.b]);
    FleetOutlier x;
    x.kind = "link";
    x.host = p.a;
    x.peer = p.b;
    x.metric = "pair_busbw";
    x.value = p.busbw;
    x.fleet_median = expect;
    x.ratio = p.busbw / expect;
    x.reason = "the link " + p.a + " <-> " + p.b + " carries " + fmt(x.ratio) + " x what both ends reach with " +
               "the other nodes (" + format_number(expect) + " GB/s), and its best allreduce " +
               fmt(pair_best(p) / expect) + " x (below " + pct(o.share) + "): cable, switch port or path, not either node";
    x.action = "contact-support";
    FleetFinding f;
    f.id = "fleet.outlier";
    f.severity = Severity::kWarn;
    f.title = "Slow link " + p.a + " <-> " + p.b + " (" + fmt(x.ratio) + " x)";
    f.action = x.action;
    r.findings.push_back(f);
    r.outliers.push_back(std::move(x));
  }
}

struct Entity {
  std::string host, gpu;
  double value = 0;
};

// Key metrics of the nodes' own reports (key_metric_table): per metric and
// label set across nodes, per GPU across every GPU of the fleet.
void judge_local_metrics(FleetReport& r, const std::vector<const Report*>& reports, const OutlierOptions& o) {
  std::map<std::string, std::vector<Entity>> groups;
  std::map<std::string, Better> direction;
  std::map<std::string, std::string> units;
  for (std::size_t i = 0; i < reports.size() && i < r.nodes.size(); ++i) {
    if (!reports[i] || !alive(r.nodes[i])) continue;
    for (const auto& p : reports[i]->probes) {
      if (probe_matches(p.name, "diag")) continue;  // how much log was read is no performance
      for (const auto& m : p.metrics) {
        if (!std::isfinite(m.value) || m.better == Better::kUnknown) continue;
        const MetricDescriptor* d = find_descriptor(p, m.name);
        if (!d || d->key.rank <= 0) continue;  // only the key numbers its probe declares
        Labels rest = m.labels;
        std::string gpu;
        if (auto it = rest.find("gpu"); it != rest.end()) {
          gpu = it->second;
          rest.erase(it);
        }
        const std::string id = p.name + "/" + m.name + labels_text(rest);
        groups[id].push_back({r.nodes[i].host, gpu, m.value});
        direction[id] = m.better;
        units[id] = m.unit;
      }
    }
  }
  for (auto& [id, entities] : groups) {
    if (entities.size() < 3) continue;
    std::vector<double> v;
    for (const auto& e : entities) v.push_back(e.value);
    const RobustSpread s = robust_spread(v);
    std::map<std::string, std::pair<int, int>> gpu_count;  // host -> (outliers, gpus)
    std::vector<FleetOutlier> found;
    for (const auto& e : entities) {
      if (!e.gpu.empty()) ++gpu_count[e.host].second;
      std::string why;
      if (!is_outlier(e.value, s, direction[id], o, &why)) continue;
      if (!e.gpu.empty()) ++gpu_count[e.host].first;
      FleetOutlier x;
      x.kind = e.gpu.empty() ? "node" : "gpu";
      x.host = e.host;
      x.gpu = e.gpu;
      x.metric = id;
      x.value = e.value;
      x.fleet_median = s.median;
      x.ratio = s.median != 0 ? e.value / s.median : 0;
      x.reason = id + " " + format_number(e.value) + " " + units[id] + ": " + why;
      // A GPU below its siblings: reset it (clocks, throttling); the rest is configuration until shown otherwise.
      const bool gpu_metric = !e.gpu.empty() || probe_matches(id.substr(0, id.find('/')), "gemm");
      x.action = !e.gpu.empty() ? "reset-gpu" : gpu_metric ? "reboot" : "tune";
      found.push_back(std::move(x));
    }
    // Every GPU of a host slow alike points at the host (power, cooling, clocks, PCIe).
    std::set<std::string> whole_host;
    for (const auto& [host, c] : gpu_count)
      if (c.second >= 2 && c.first == c.second) whole_host.insert(host);
    std::set<std::string> folded;
    for (auto& x : found) {
      if (x.kind == "gpu" && whole_host.count(x.host)) {
        if (folded.count(x.host)) continue;
        folded.insert(x.host);
        x.kind = "node";
        x.gpu.clear();
        x.reason = "all " + std::to_string(gpu_count[x.host].second) + " GPUs alike: " + x.reason +
                   " (power, cooling, clocks or PCIe of the host)";
        x.action = "reboot";
      }
      if (FleetNode* n = node_by_host(r, x.host))
        add_node_finding(*n,
                         x.metric + (x.gpu.empty() ? "" : " on GPU " + x.gpu) + " " + fmt(x.ratio) +
                             " x the fleet median (" + x.kind + " outlier)",
                         x.action);
      r.outliers.push_back(std::move(x));
    }
  }
}

// The first number in an observed text ("512", "65535 (soft)"), or nullopt.
std::optional<double> leading_number(const std::string& s) {
  const auto b = s.find_first_of("0123456789");
  if (b == std::string::npos) return std::nullopt;
  const auto e = s.find_first_not_of("0123456789.", b);
  return parse_number(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
}

// Limits every node should share: a node whose observed value differs from
// what most nodes have is named (the "one node whose limits differ").
void judge_limits_drift(FleetReport& r, const std::vector<const Report*>& reports) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> seen;  // check -> (host, observed)
  for (std::size_t i = 0; i < reports.size() && i < r.nodes.size(); ++i) {
    if (!reports[i] || !alive(r.nodes[i])) continue;
    for (const auto& p : reports[i]->probes) {
      if (!probe_matches(p.name, "limits")) continue;
      for (const auto& c : p.checks)
        if (c.status != Status::kSkip && !c.observed.empty()) seen[c.id].push_back({r.nodes[i].host, c.observed});
    }
  }
  for (const auto& [id, values] : seen) {
    if (values.size() < 3) continue;
    std::map<std::string, int> count;
    for (const auto& hv : values) ++count[hv.second];
    const auto common = std::max_element(count.begin(), count.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (count.size() < 2 || 2 * common->second <= static_cast<int>(values.size())) continue;
    for (const auto& [host, observed] : values) {
      if (observed == common->first) continue;
      FleetOutlier x;
      x.kind = "node";
      x.host = host;
      x.metric = "limits:" + id;
      const auto v = leading_number(observed), m = leading_number(common->first);
      x.value = v.value_or(0);
      x.fleet_median = m.value_or(0);
      x.ratio = v && m && *m != 0 ? *v / *m : 0;
      x.reason = id + " is " + observed + " where " + std::to_string(common->second) + " of " +
                 std::to_string(values.size()) + " nodes have " + common->first;
      x.action = "tune";
      if (FleetNode* n = node_by_host(r, host)) add_node_finding(*n, "Limits differ from the fleet: " + x.reason, x.action);
      r.outliers.push_back(std::move(x));
    }
  }
}

}  // namespace

RobustSpread robust_spread(std::vector<double> values) {
  RobustSpread s;
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  s.n = values.size();
  if (values.empty()) return s;
  s.median = median_of(values);
  std::vector<double> dev;
  for (double v : values) dev.push_back(std::fabs(v - s.median));
  s.mad = median_of(dev);
  return s;
}

bool is_outlier(double v, const RobustSpread& s, Better better, const OutlierOptions& o, std::string* why) {
  if (!std::isfinite(v) || s.n == 0 || better == Better::kUnknown || !(s.median > 0)) return false;
  const bool higher = better == Better::kHigher;
  const double bad = higher ? s.median - v : v - s.median;  // distance on the bad side
  if (bad <= 0) return false;
  const double ratio = v / s.median;
  if (higher ? ratio < o.share : ratio > 1 / o.share) {
    if (why)
      *why = fmt(ratio) + " x the fleet median " + format_number(s.median) + (higher ? " (below " : " (above ") +
             (higher ? pct(o.share) : fmt0(100 / o.share) + " %") + ")";
    return true;
  }
  const double sigma = kMadScale * s.mad;
  if (s.n >= o.mad_min_n && sigma > 0 && bad > o.mad_k * sigma && bad / s.median >= o.min_deviation) {
    if (why)
      *why = fmt1(bad / sigma) + " MADs " + (higher ? "below" : "above") + " the fleet median " +
             format_number(s.median) + " (" + fmt(ratio) + " x)";
    return true;
  }
  return false;
}

std::vector<std::vector<PairSlot>> pair_schedule(int n) {
  std::vector<std::vector<PairSlot>> rounds;
  if (n < 2) return rounds;
  // Circle method: node m-1 stays, the others rotate. With odd n a phantom
  // node n joins; whoever meets it sits the round out.
  const int m = n % 2 ? n + 1 : n;
  for (int r = 0; r < m - 1; ++r) {
    std::vector<PairSlot> round;
    auto add = [&](int a, int b) {
      if (a >= n || b >= n) return;  // the bye
      round.push_back({std::min(a, b), std::max(a, b)});
    };
    add(r, m - 1);
    for (int k = 1; k < m / 2; ++k) add((r + k) % (m - 1), (r - k + (m - 1)) % (m - 1));
    rounds.push_back(std::move(round));
  }
  return rounds;
}

int fleet_action_rank(const std::string& action) {
  for (int i = 0; i < static_cast<int>(std::size(kNodeActions)); ++i)
    if (action == kNodeActions[i]) return i;
  return -1;
}

std::string worse_action(const std::string& a, const std::string& b) {
  return fleet_action_rank(b) > fleet_action_rank(a) ? b : a;
}

bool action_drains(const std::string& action) { return fleet_action_rank(action) >= fleet_action_rank("reset-gpu"); }

std::string finding_action(const Finding& f) {
  // An informational finding (a look-alike, a past event, a check that does
  // not apply) never asks for anything, whatever its class would.
  if (f.severity == Severity::kInfo) return "none";
  // The diagnosis gives each finding its playbook action (a probe that ran
  // out of time on a busy node is restart-job, not reboot); the severity
  // stands in only for reports without one.
  if (fleet_action_rank(f.action) >= 0) return f.action;
  switch (f.severity) {
    case Severity::kError: return "reboot";
    case Severity::kWarn: return "tune";
    default: return "none";
  }
}

std::vector<std::string> node_suspects(const FleetReport& r, const OutlierOptions& o) {
  std::vector<std::string> out;
  for (const auto& [host, why] : slow_nodes_of(r, o).why) out.push_back(host);
  return out;
}

std::vector<std::size_t> link_suspects(const FleetReport& r, const OutlierOptions& o) {
  std::set<std::string> hosts;
  for (const auto& p : r.pairs)
    if (p.status == Status::kPass && p.busbw > 0) hosts.insert({p.a, p.b});
  if (hosts.size() < 3) return {};  // no majority to tell a node from its link
  return suspects_by(r, settled_scores(r, o).settled, o);
}

void judge_fleet(FleetReport& r, const std::vector<const Report*>& node_reports, const OutlierOptions& o) {
  r.outliers.clear();
  r.drain.clear();
  // The nodes' own findings first, then the fleet's judgement adds to them.
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    FleetNode& n = r.nodes[i];
    const Report* rep = i < node_reports.size() ? node_reports[i] : nullptr;
    if (!rep) continue;
    for (const auto& f : rep->findings)
      n.findings.push_back({f.id, f.severity, f.title, finding_action(f)});
    // Each probe's declared key numbers: the best value, per value of the key's `per` axis.
    for (const auto& p : rep->probes) {
      if (probe_matches(p.name, "diag")) continue;
      for (const auto& d : p.descriptors) {
        if (d.key.rank <= 0) continue;
        std::vector<std::string> order;
        std::map<std::string, const Metric*> best;
        for (const auto& m : p.metrics) {
          if (m.name != d.name || !std::isfinite(m.value)) continue;
          std::string group;
          if (!d.key.per.empty())
            if (auto it = m.labels.find(d.key.per); it != m.labels.end()) group = it->second;
          auto [it, fresh] = best.emplace(group, &m);
          if (fresh) order.push_back(group);
          else if (d.better == Better::kLower ? m.value < it->second->value : m.value > it->second->value)
            it->second = &m;
        }
        for (const auto& g : order) {
          Metric m = *best[g];
          m.labels["key"] = d.key.caption + (g.empty() ? "" : (d.key.caption.empty() ? "" : " ") + g);
          n.metrics.push_back(std::move(m));
        }
      }
    }
  }
  judge_pairs(r, o);
  judge_local_metrics(r, node_reports, o);
  judge_limits_drift(r, node_reports);

  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    FleetNode& n = r.nodes[i];
    if (!alive(n)) {
      n.action = "reboot";  // it stopped answering or died: hung or crashed host, kernel or driver
      r.drain.push_back({n.host, n.action, "lost during " + n.timed_out_in + ": " + n.reason});
      continue;
    }
    std::vector<Status> st = {n.verdict};
    std::string action = "none";
    for (const auto& f : n.findings) {
      if (f.severity == Severity::kInfo) continue;
      st.push_back(f.severity == Severity::kError ? Status::kFail : Status::kWarn);
      action = worse_action(action, f.action);
    }
    n.verdict = aggregate(st);
    n.action = action;
    // The first problem people read: the one behind the node's action, errors first.
    const FleetFinding* first = nullptr;
    for (const auto& f : n.findings) {
      if (f.severity == Severity::kInfo) continue;
      if (!first || fleet_action_rank(f.action) > fleet_action_rank(first->action) ||
          (f.action == first->action && f.severity == Severity::kError && first->severity != Severity::kError))
        first = &f;
    }
    if (n.reason.empty() && first) n.reason = first->id + ": " + first->title;
    if (action_drains(n.action)) {
      std::string why;
      for (const auto& f : n.findings)
        if (f.action == n.action) {
          why = f.id + ": " + f.title;
          break;
        }
      r.drain.push_back({n.host, n.action, why});
    }
  }

  std::vector<Status> st;
  for (const auto& n : r.nodes) {
    if (!alive(n) || action_drains(n.action)) st.push_back(Status::kFail);
    else if (n.verdict == Status::kError || n.verdict == Status::kFail) st.push_back(Status::kWarn);
    else st.push_back(n.verdict);
  }
  for (const auto& ph : r.phases)
    if (ph.status == Status::kError || ph.status == Status::kTimeout) st.push_back(Status::kWarn);
  if (!r.outliers.empty() || !r.findings.empty()) st.push_back(Status::kWarn);
  r.verdict = st.empty() ? Status::kError : aggregate(st);
}

Json fleet_time_model(const FleetTimings& t, const std::vector<int>& sizes) {
  auto rounds = [](int n) { return n < 2 ? 0 : (n % 2 ? n : n - 1); };
  auto ring_points = [&t](int n) {
    int k = 0;
    for (int m = t.ring_first; m < n; m *= 2) ++k;
    return n >= std::min(3, t.ring_first) ? k + 1 : 0;
  };
  auto batches = [](int n) { return n < 2 ? 0 : (n - 2) / 64 + 1; };
  const double round = median_of(t.round_s);
  const double point = median_of(t.ring_point_s);
  const double pairs_measured = std::accumulate(t.round_s.begin(), t.round_s.end(), 0.0);
  const double ring_measured = std::accumulate(t.ring_point_s.begin(), t.ring_point_s.end(), 0.0);
  Json m;
  m["measured"] = {{"nodes", t.nodes},
                   {"total_s", t.startup_s + t.local_s + t.mesh_s + pairs_measured + ring_measured},
                   {"startup_s", t.startup_s},
                   {"local_s", t.local_s},
                   {"mesh_s", t.mesh_s},
                   {"pairs_s", pairs_measured},
                   {"rounds", static_cast<int>(t.round_s.size())},
                   {"round_median_s", round},
                   {"ring_s", ring_measured},
                   {"ring_points", static_cast<int>(t.ring_point_s.size())}};
  m["assumptions"] =
      "startup and local as measured (every node at once); mesh x ceil((N-1)/64) batches of connects; "
      "pairs: rounds(N) = N-1 (even N) or N (odd N), each the median measured round, times the repeats; "
      "ring: one point per power of two up to N, each the median measured point";
  Json pred = Json::array();
  for (int n : sizes) {
    const double mesh = t.nodes >= 2 ? t.mesh_s * batches(n) / batches(t.nodes) : 0;
    const double pairs = rounds(n) * std::max(1, t.repeats) * round;
    const double ring = ring_points(n) * point;
    pred.push_back({{"nodes", n},
                    {"total_s", t.startup_s + t.local_s + mesh + pairs + ring},
                    {"local_s", t.local_s},
                    {"mesh_s", mesh},
                    {"rounds", rounds(n) * std::max(1, t.repeats)},
                    {"pairs_s", pairs},
                    {"ring_s", ring}});
  }
  m["predicted"] = pred;
  return m;
}

const FleetNode* find_fleet_node(const FleetReport& r, const std::string& host) {
  for (const auto& n : r.nodes)
    if (n.host == host) return &n;
  return nullptr;
}

}  // namespace nodeprobe
