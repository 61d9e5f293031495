#include "nodeprobe/probe.h"

#include <algorithm>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/stats.h"

namespace nodeprobe {

double ProbeContext::remaining_s() const {
  if (deadline_s <= 0) return std::numeric_limits<double>::max();
  return deadline_s - clock.now_s();
}

void ProbeContext::debug(const std::string& line) const {
  if (verbose) log << line << "\n";
}

Status status_from_checks(const ProbeResult& r) {
  if (r.checks.empty()) return Status::kPass;
  std::vector<Status> s;
  s.reserve(r.checks.size());
  for (const auto& c : r.checks) s.push_back(c.status);
  return aggregate(s);
}

void declare_metrics(ProbeResult& r, const std::vector<MetricDescriptor>& table) {
  for (const auto& d : table)
    if (!find_descriptor(r, d.name)) r.descriptors.push_back(d);
}

namespace {

Metric& add_declared(ProbeResult& r, const std::string& name, double value, std::optional<Stats> stats,
                     Labels axes) {
  const MetricDescriptor* d = find_descriptor(r, name);
  if (!d) throw std::logic_error("metric " + name + " of probe " + r.name + " was not declared");
  std::vector<std::string> keys;
  for (const auto& [k, v] : axes) keys.push_back(k);
  std::vector<std::string> want = d->axes;
  std::sort(want.begin(), want.end());
  if (keys != want)
    throw std::logic_error("metric " + name + " of probe " + r.name + ": labels are not its declared axes");
  if (d->kind == MetricKind::kMeasured && (!stats || stats->n == 0))
    throw std::logic_error("metric " + name + " of probe " + r.name + " is measured but has no samples");
  Metric m;
  m.name = name;
  m.value = value;
  m.unit = d->unit;
  m.better = d->better;
  m.labels = std::move(axes);
  m.stats = std::move(stats);
  r.metrics.push_back(std::move(m));
  return r.metrics.back();
}

}  // namespace

Metric& add_metric(ProbeResult& r, const std::string& name, double value, Labels axes) {
  return add_declared(r, name, value, std::nullopt, std::move(axes));
}

Metric& add_metric(ProbeResult& r, const std::string& name, double value, const Stats& stats, Labels axes) {
  return add_declared(r, name, value, stats, std::move(axes));
}

Metric& add_sampled_metric(ProbeResult& r, const std::string& name, std::vector<double> samples, Labels axes) {
  const Stats st = compute_stats(std::move(samples));
  return add_declared(r, name, st.median, st, std::move(axes));
}

Check& add_check(ProbeResult& r, std::string id, Status status, std::string observed,
                 std::string expected, std::string fix, std::string finding) {
  Check c;
  c.id = std::move(id);
  c.status = status;
  c.observed = std::move(observed);
  c.expected = std::move(expected);
  c.fix = std::move(fix);
  c.finding = std::move(finding);
  r.checks.push_back(std::move(c));
  return r.checks.back();
}

}  // namespace nodeprobe
