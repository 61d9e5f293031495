#include "nodeprobe/metric_select.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace nodeprobe {

std::string labels_key(const Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

std::string labels_text(const Labels& labels) {
  return labels.empty() ? std::string() : "{" + labels_key(labels) + "}";
}

bool labels_match(const Labels& have, const Labels& want) {
  for (const auto& [k, v] : want) {
    auto it = have.find(k);
    if (it == have.end()) return false;
    if (v != "*" && it->second != v) return false;
  }
  return true;
}

bool probe_matches(const std::string& probe, const std::string& pattern) {
  if (pattern.empty() || probe == pattern) return true;
  return probe.size() > pattern.size() && probe.compare(0, pattern.size(), pattern) == 0 &&
         probe[pattern.size()] == '.';
}

std::vector<MetricRef> select_metrics(const Report& r, const std::string& probe_pattern,
                                      const std::vector<std::string>& names, const Labels& labels) {
  std::vector<MetricRef> out;
  for (const auto& p : r.probes) {
    if (!probe_matches(p.name, probe_pattern)) continue;
    for (const auto& m : p.metrics) {
      if (!names.empty() && std::find(names.begin(), names.end(), m.name) == names.end()) continue;
      if (!labels_match(m.labels, labels)) continue;
      out.push_back({&p, &m});
    }
  }
  return out;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  // strtod accepts hex and "inf"/"nan"; a label number is plain decimal.
  for (char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == 'e' || c == 'E'))
      return std::nullopt;
  return v;
}

}  // namespace nodeprobe
