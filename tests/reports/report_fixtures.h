#pragma once
// Crafted reports for compare, renderer and exporter tests.

#include <string>

#include "nodeprobe/report.h"

namespace nodeprobe::testing {

/// A minimal valid report (host, run, tool filled; no probes).
Report base_report(const std::string& label = "fixture");

/// Adds a probe with a status and reason; returns its index.
std::size_t add_probe(Report& r, const std::string& name, Status s, const std::string& reason = "");

/// A metric with stats built from (median, p5, p95, n).
Metric metric(const std::string& name, double value, const std::string& unit, Better better,
              std::map<std::string, std::string> labels = {}, double p5 = 0, double p95 = 0,
              std::size_t n = 0);

/// A report with allreduce busbw sweeps (two transports), GEMM per precision
/// with peaks, IO throughput/AU vs workers, limits checks and a finding.
/// `scale` multiplies the measured values (to craft before/after pairs).
/// Synthetic numbers: for rendering and format tests only.
Report chart_report(double scale = 1.0, const std::string& label = "fixture");

}  // namespace nodeprobe::testing
