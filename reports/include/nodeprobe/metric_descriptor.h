#pragma once
/// Reading metric descriptors (report.h, MetricDescriptor): the one place that
/// says what a metric means. Text, compare, key numbers, charts, exporters and
/// expectations go through these functions instead of guessing from names.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe {

/// The declared descriptor of metric `name` in probe `p`, or nullptr.
const MetricDescriptor* find_descriptor(const ProbeResult& p, const std::string& name);

/// The descriptor of `m`: the declared one, or (reports of schema /1, foreign
/// files) one built from the metric alone: its unit and direction, kind
/// measured when it carries stats (else unknown), every label an axis, no
/// display scale and no chart.
MetricDescriptor descriptor_of(const ProbeResult& p, const Metric& m);

/// The labels of `m` that are axes of `d` (its identity within the probe).
Labels axes_of(const Metric& m, const MetricDescriptor& d);

/// The value as people see it (x display.scale).
double shown_value(const MetricDescriptor& d, double v);
/// The unit people see (display.unit, else the unit).
std::string shown_unit(const MetricDescriptor& d);
/// "94.0 %", "1520 MB/s", "n/a": value, display scale, decimals and unit.
std::string format_metric(const MetricDescriptor& d, double v);
/// The descriptor's title, else its name.
std::string metric_title(const MetricDescriptor& d);

/// What is wrong with a probe's metrics against its descriptors, one line
/// each: an undeclared metric, labels that are not exactly the axes, a
/// measured metric without stats, a unit or direction that disagrees.
std::vector<std::string> descriptor_problems(const ProbeResult& p);

}  // namespace nodeprobe

namespace nodeprobe {

/// Builds one row of a probe's descriptor table:
///   measured("au", "fraction", Better::kHigher, "accelerator utilisation")
///       .titled("AU").axes({"layout"}).percent(1).range(0, 100)
class DescriptorBuilder {
 public:
  DescriptorBuilder(MetricKind kind, std::string name, std::string unit, Better better, std::string description);
  DescriptorBuilder& titled(std::string title);
  DescriptorBuilder& axes(std::vector<std::string> axes);
  /// Shown as value x scale in `unit` with fixed decimals (-1: 3 significant digits).
  DescriptorBuilder& shown(double scale, std::string unit, int decimals = -1);
  /// A fraction shown as a percentage, axis 0..100 %.
  DescriptorBuilder& percent(int decimals = 1);
  DescriptorBuilder& range(double min, double max);
  DescriptorBuilder& line_chart(std::string id, std::string title, std::string x, std::string x_label,
                                bool bytes_log2 = false);
  DescriptorBuilder& bar_chart(std::string id, std::string title, std::string group, std::string reference = {});
  /// Charts show the best value over this axis (GEMM: over sizes).
  DescriptorBuilder& best_of(std::string axis);
  DescriptorBuilder& key(int rank, std::string caption, std::string per = {});
  /// Two runs of an unchanged node differ by up to `factor` (MetricDescriptor::run_to_run).
  DescriptorBuilder& run_to_run(double factor);
  /// Only for metrics whose label `axis` is `value` (MetricDescriptor::run_to_run_where).
  DescriptorBuilder& run_to_run_where(const std::string& axis, const std::string& value, double factor);
  operator MetricDescriptor() const { return d_; }  // NOLINT: tables read as lists of builders

 private:
  MetricDescriptor d_;
};

DescriptorBuilder measured(std::string name, std::string unit, Better better, std::string description);
DescriptorBuilder counted(std::string name, std::string unit, Better better, std::string description);
DescriptorBuilder derived(std::string name, std::string unit, Better better, std::string description);
DescriptorBuilder modelled(std::string name, std::string unit, Better better, std::string description);

}  // namespace nodeprobe
