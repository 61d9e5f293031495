#pragma once
// Hand-made fleets for the judgement, JSON and rendering tests.

#include "nodeprobe/metric_descriptor.h"
#include <map>
#include <string>
#include <vector>

#include "nodeprobe/fleet.h"

namespace nodeprobe::fleet_testing {

/// n nodes h1..hn, ranks 0..n-1, verdict pass, no pairs.
inline FleetReport make_fleet(int n) {
  FleetReport r;
  r.tool = {"nodeprobe fleet", "0.1.0", "test"};
  r.run.id = "test-run";
  r.run.started = "2025-01-01T00:00:00Z";
  for (int i = 0; i < n; ++i) {
    FleetNode node;
    node.host = "h" + std::to_string(i + 1);
    node.rank = i;
    node.verdict = Status::kPass;
    r.nodes.push_back(node);
  }
  return r;
}

/// A measured pair of nodes a and b (indices) at `busbw` GB/s.
inline void set_pair(FleetReport& r, int a, int b, double busbw) {
  FleetPair p;
  p.a = r.nodes[static_cast<std::size_t>(a)].host;
  p.b = r.nodes[static_cast<std::size_t>(b)].host;
  p.rank_a = a;
  p.rank_b = b;
  p.status = Status::kPass;
  p.busbw = busbw;
  p.stats.n = 8;  // compare needs 7+ a side to call a change (reports/src/compare.cpp)
  p.stats.median = p.stats.mean = p.stats.min = p.stats.max = p.stats.p5 = p.stats.p95 = busbw;
  r.pairs.push_back(p);
}

/// Adds a metric to probe `probe` of `rep` (creating the probe).
inline void add_metric(Report& rep, const std::string& probe, const std::string& name, double v,
                       std::map<std::string, std::string> labels) {
  ProbeResult* p = nullptr;
  for (auto& x : rep.probes)
    if (x.name == probe) p = &x;
  if (!p) {
    rep.probes.push_back({});
    p = &rep.probes.back();
    p->name = probe;
    p->status = Status::kPass;
  }
  // Declared as gemm declares its throughput: a key number per precision.
  if (!find_descriptor(*p, name))
    p->descriptors.push_back(measured(name, "TFLOP/s", Better::kHigher, "test metric")
                                 .axes({"gpu", "precision", "size"})
                                 .key(1, "", "precision"));
  Metric m;
  m.name = name;
  m.value = v;
  m.unit = "TFLOP/s";
  m.better = Better::kHigher;
  m.labels = std::move(labels);
  p->metrics.push_back(m);
}

inline std::vector<const Report*> pointers(const std::vector<Report>& v) {
  std::vector<const Report*> out;
  for (const auto& r : v) out.push_back(&r);
  return out;
}

}  // namespace nodeprobe::fleet_testing
