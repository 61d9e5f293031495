#include "nodeprobe/key_numbers.h"

#include <cmath>

#include "nodeprobe/render_text.h"

namespace nodeprobe {

const std::vector<KeyMetric>& key_metric_table() {
  // Metric names as the probes define them (docs/accept.md lists them).
  static const std::vector<KeyMetric> t = {
      {"gemm", "gemm.tflops", {{"precision", "bf16"}}, "bf16", false},
      {"gemm", "gemm.tflops", {{"precision", "fp16"}}, "fp16", false},
      {"gemm", "gemm.tflops", {{"precision", "fp32"}}, "fp32", false},
      {"allreduce", "busbw", {}, "busbw max", false},
      {"allreduce", "algbw", {}, "algbw max", false},
      {"io", "au", {}, "AU best", false},
      {"io", "samples_per_s", {}, "best", false},
      {"io", "throughput", {}, "best", false},
      {"diag", "logs_scanned", {}, "logs scanned", false},
  };
  return t;
}

std::string key_numbers(const ProbeResult& p, std::size_t max_items) {
  std::string out;
  std::size_t items = 0;
  auto append = [&](const std::string& s) {
    out += (out.empty() ? "" : ", ") + s;
    ++items;
  };
  for (const KeyMetric& k : key_metric_table()) {
    if (items >= max_items) break;
    if (!probe_matches(p.name, k.probe)) continue;
    const Metric* best = nullptr;
    for (const auto& m : p.metrics) {
      if (m.name != k.metric || !labels_match(m.labels, k.labels) || !std::isfinite(m.value)) continue;
      if (!best || (k.lowest ? m.value < best->value : m.value > best->value)) best = &m;
    }
    if (!best) continue;
    if (best->unit == "fraction")  // AU, data-wait: people read them as percentages
      append(k.caption + " " + format_number(100 * best->value) + " %");
    else
      append(k.caption + " " + format_number(best->value) + " " + best->unit);
  }
  if (!p.checks.empty()) {
    std::size_t pass = 0, warn = 0, fail = 0, skip = 0, other = 0;
    for (const auto& c : p.checks) {
      switch (c.status) {
        case Status::kPass: ++pass; break;
        case Status::kWarn: ++warn; break;
        case Status::kFail: ++fail; break;
        case Status::kSkip: ++skip; break;
        default: ++other;
      }
    }
    std::string s = std::to_string(p.checks.size()) + " checks: " + std::to_string(pass) + " pass";
    if (warn) s += ", " + std::to_string(warn) + " warn";
    if (fail) s += ", " + std::to_string(fail) + " fail";
    if (skip) s += ", " + std::to_string(skip) + " skip";
    if (other) s += ", " + std::to_string(other) + " error";
    append(s);
  }
  if (out.empty()) {
    for (const auto& m : p.metrics) {
      if (items >= std::min<std::size_t>(max_items, 2)) break;
      append(m.name + labels_text(m.labels) + " " + format_number(m.value) + " " + m.unit);
    }
  }
  return out;
}

}  // namespace nodeprobe
