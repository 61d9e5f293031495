#pragma once
/// Finding metrics by probe, name and labels (shared by compare, exporters and
/// accept's expectations), and reading axis values as numbers.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// Canonical text of a label set: "k1=v1,k2=v2" in key order ("" when empty).
std::string labels_key(const Labels& labels);

/// "{k1=v1,k2=v2}" for people; "" when empty.
std::string labels_text(const Labels& labels);

/// True when every pair of `want` is in `have`; a wanted value "*" only
/// requires the key to be present.
bool labels_match(const Labels& have, const Labels& want);

/// True when `probe` is `pattern` or starts with `pattern` + "." (so
/// "allreduce" matches "allreduce.fabric.tcp" but not "allreducex").
bool probe_matches(const std::string& probe, const std::string& pattern);

/// A metric together with the probe that reported it.
struct MetricRef {
  const ProbeResult* probe = nullptr;
  const Metric* metric = nullptr;
};

/// Every metric of `r` whose probe matches `probe_pattern` (empty: any), whose
/// name is one of `names` (empty: any) and whose labels match `labels`.
std::vector<MetricRef> select_metrics(const Report& r, const std::string& probe_pattern,
                                      const std::vector<std::string>& names,
                                      const Labels& labels = {});

/// Parses a plain number (integer or decimal, optional sign); nullopt otherwise.
std::optional<double> parse_number(const std::string& text);

}  // namespace nodeprobe
