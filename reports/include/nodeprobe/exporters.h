#pragma once
/// Report exporters for the monitoring and CI systems users already run:
/// Prometheus node_exporter textfile, CloudWatch Embedded Metric Format (JSON
/// lines) and JUnit XML. Each returns the whole document; callers write it
/// atomically (write_file_atomic) so a scraper never reads half a file.

#include <string>
#include <utility>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// Where each export goes ("" = not requested).
struct ExportPaths {
  std::string prometheus;  ///< node_exporter textfile (name it *.prom)
  std::string emf;         ///< CloudWatch EMF, one JSON object per line
  std::string junit;       ///< JUnit XML
  bool any() const { return !prometheus.empty() || !emf.empty() || !junit.empty(); }
};

/// Prometheus text exposition format 0.0.4: families nodeprobe_* with HELP and
/// TYPE lines, metric labels as labels, values in base units (seconds, bytes,
/// bytes_per_second, ratio ...), no sample timestamps (the textfile collector
/// rejects them); run/verdict/probe/check statuses as state sets.
std::string to_prometheus(const Report& r);

struct EmfOptions {
  std::string name_space = "nodeprobe";
  long long timestamp_ms = 0;  ///< 0: the report's finish (else start) time
};

/// CloudWatch EMF: one record per (probe, label set), dimensions Probe,
/// InstanceType and the metric's labels (<= 30), <= 100 metrics per
/// directive, CloudWatch standard units; plus a record per probe (status,
/// duration) and one for the run (verdict, findings).
std::string to_cloudwatch_emf(const Report& r, const EmfOptions& opt = {});

/// JUnit XML: a <testsuite> per probe with a <testcase> for the probe and one
/// per check; fail -> <failure>, error/timeout -> <error>, skip -> <skipped>,
/// warn -> passing with the warning in <system-out>. Failure text carries the
/// finding's title and remedy steps. Findings raised outside probes get a
/// "findings" suite.
std::string to_junit(const Report& r, const std::string& suite_name = "nodeprobe");

/// The documents requested by `paths`, as (path, content) pairs.
std::vector<std::pair<std::string, std::string>> export_documents(const Report& r,
                                                                 const ExportPaths& paths);

/// Replaces invalid UTF-8 sequences with U+FFFD.
std::string sanitize_utf8(const std::string& s);

/// Seconds since the epoch of an ISO 8601 UTC time ("2026-11-29T16:39:36.123Z"), or NaN.
double iso8601_to_epoch(const std::string& t);

}  // namespace nodeprobe
