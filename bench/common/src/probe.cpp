#include "nodeprobe/probe.h"

#include <limits>
#include <ostream>

#include "nodeprobe/stop.h"

namespace nodeprobe {

double ProbeContext::remaining_s() const {
  // A stop (signal or --timeout) reads as "no time left", so every probe that
  // keeps its deadline also winds down on Ctrl-C and keeps what it measured.
  if (stop_requested()) return 0;
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

Metric& add_metric(ProbeResult& r, std::string name, double value, std::string unit,
                   Better better, std::map<std::string, std::string> labels) {
  Metric m;
  m.name = std::move(name);
  m.value = value;
  m.unit = std::move(unit);
  m.better = better;
  m.labels = std::move(labels);
  r.metrics.push_back(std::move(m));
  return r.metrics.back();
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
