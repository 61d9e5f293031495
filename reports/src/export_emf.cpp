// CloudWatch Embedded Metric Format: JSON objects, one per line, each with an
// _aws.CloudWatchMetrics directive naming its dimensions and metrics; the
// values live at the root. Limits honoured: <= 100 metrics per directive,
// <= 30 dimensions per set, string dimension values of 1..1024 characters,
// finite numeric values, CloudWatch standard units.
#include <chrono>
#include <cmath>
#include <set>
#include <sstream>

#include "export_util.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/exporters.h"
#include "nodeprobe/metric_select.h"

namespace nodeprobe {
namespace {

constexpr std::size_t kMaxMetrics = 100;
constexpr std::size_t kMaxDimensions = 30;
constexpr std::size_t kMaxDimValue = 1024;
constexpr std::size_t kMaxName = 255;

std::string dim_value(const std::string& v) {
  std::string s = sanitize_utf8(v.empty() ? "unknown" : v);
  if (s.size() > kMaxDimValue) s.resize(kMaxDimValue);
  return sanitize_utf8(s);  // a cut may split a character
}

std::string key_name(const std::string& k) {
  std::string s = sanitize_utf8(k.empty() ? "label" : k);
  if (s.size() > kMaxName) s.resize(kMaxName);
  return sanitize_utf8(s);
}

struct Record {
  Json root = Json::object();
  std::vector<std::string> dims;
  Json metrics = Json::array();
  std::set<std::string> names;
};

class Emitter {
 public:
  Emitter(const EmfOptions& opt, long long ts, const Report& r) : opt_(opt), ts_(ts), r_(r) {}

  /// Starts a record with dimensions (in order) and extra non-dimension properties.
  Record start(const std::vector<std::pair<std::string, std::string>>& dims, const Json& props) {
    Record rec;
    rec.root = props;
    rec.root["Host"] = sanitize_utf8(r_.host.hostname);
    rec.root["RunId"] = sanitize_utf8(r_.run.id);
    if (!r_.run.label.empty()) rec.root["Label"] = sanitize_utf8(r_.run.label);
    for (const auto& [k, v] : dims) {
      if (rec.dims.size() >= kMaxDimensions) {  // the rest stay searchable as properties
        rec.root[key_name(k)] = dim_value(v);
        continue;
      }
      rec.dims.push_back(key_name(k));
      rec.root[key_name(k)] = dim_value(v);
    }
    return rec;
  }

  /// Adds a metric; flushes first when the record is full or already has `name`.
  void add(Record& rec, const std::string& name, double value, const std::string& unit) {
    if (!std::isfinite(value)) return;  // EMF values must be numbers
    std::string n = key_name(name);
    if (rec.root.contains(n) && !rec.names.count(n)) n = "metric_" + n;  // clashes with a dimension
    if (rec.names.size() >= kMaxMetrics || rec.names.count(n)) {
      Record next = rec;
      next.metrics = Json::array();
      next.names.clear();
      for (const auto& old : rec.names) next.root.erase(old);
      flush(rec);
      rec = std::move(next);
    }
    rec.names.insert(n);
    rec.metrics.push_back(Json{{"Name", n}, {"Unit", unit}});
    rec.root[n] = value;
  }

  void flush(const Record& rec) {
    if (rec.names.empty()) return;
    Json out = rec.root;
    Json directive{{"Namespace", opt_.name_space}, {"Dimensions", Json::array({rec.dims})},
                   {"Metrics", rec.metrics}};
    out["_aws"] = Json{{"Timestamp", ts_}, {"CloudWatchMetrics", Json::array({directive})}};
    lines_ << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }

  std::string str() const { return lines_.str(); }

 private:
  const EmfOptions& opt_;
  long long ts_;
  const Report& r_;
  std::ostringstream lines_;
};

}  // namespace

std::string to_cloudwatch_emf(const Report& r, const EmfOptions& opt) {
  long long ts = opt.timestamp_ms;
  if (ts == 0) {
    const double t = iso8601_to_epoch(r.run.finished.empty() ? r.run.started : r.run.finished);
    ts = std::isfinite(t) ? static_cast<long long>(t * 1000)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  }
  Emitter e(opt, ts, r);
  const std::string itype = r.host.instance_type;

  // The run: verdict and findings.
  {
    Record rec = e.start({{"InstanceType", itype}},
                         Json{{"Verdict", std::string(to_string(r.verdict))}, {"Tool", r.tool.name}});
    e.add(rec, "RunPassed", r.verdict == Status::kPass || r.verdict == Status::kWarn ? 1 : 0, "Count");
    long errors = 0, warns = 0;
    for (const auto& f : r.findings) (f.severity == Severity::kError ? errors : warns) += 1;
    e.add(rec, "FindingsError", static_cast<double>(errors), "Count");
    e.add(rec, "FindingsWarn", static_cast<double>(warns), "Count");
    e.flush(rec);
  }
  for (const auto& p : r.probes) {
    Record rec = e.start({{"Probe", p.name}, {"InstanceType", itype}},
                         Json{{"Status", std::string(to_string(p.status))}, {"Reason", sanitize_utf8(p.reason)}});
    e.add(rec, "ProbePassed", p.status == Status::kPass || p.status == Status::kWarn ? 1 : 0, "Count");
    e.add(rec, "ProbeDuration", p.duration_s, "Seconds");
    e.flush(rec);
  }
  // Metrics grouped by (probe, labels): one directive per group.
  for (const auto& p : r.probes) {
    std::map<std::string, std::vector<const Metric*>> groups;
    std::vector<std::string> order;
    for (const auto& m : p.metrics) {
      const std::string k = labels_key(m.labels);
      if (!groups.count(k)) order.push_back(k);
      groups[k].push_back(&m);
    }
    for (const auto& k : order) {
      const auto& ms = groups[k];
      std::vector<std::pair<std::string, std::string>> dims = {{"Probe", p.name}, {"InstanceType", itype}};
      for (const auto& [lk, lv] : ms.front()->labels) {
        std::string name = lk;
        if (name == "Probe" || name == "InstanceType" || name == "Host" || name == "RunId" ||
            name == "Label" || name == "_aws")
          name = "label_" + name;
        dims.emplace_back(name, lv);
      }
      Record rec = e.start(dims, Json::object());
      for (const Metric* m : ms) {
        const detail::UnitMap u = detail::map_unit(descriptor_of(p, *m).unit);
        e.add(rec, m->name, m->value * u.cw_scale, u.cloudwatch);
      }
      e.flush(rec);
    }
  }
  return e.str();
}

}  // namespace nodeprobe
