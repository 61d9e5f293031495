#include "nodeprobe/report_json.h"

#include "nodeprobe/json_input.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

namespace nodeprobe {
namespace {

// Numbers may be null in foreign or hand-edited files (nlohmann writes NaN as
// null); read them as NaN rather than failing the whole report.
double num(const Json& j, const char* key, double dflt = 0) {
  auto it = j.find(key);
  if (it == j.end()) return dflt;
  if (it->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return it->get<double>();
}

std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  return it->get<std::string>();
}

template <typename T>
void opt_vec(const Json& j, const char* key, std::vector<T>& out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) out = it->get<std::vector<T>>();
}

Json object_or_empty(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Json::object();
  return *it;
}

std::map<std::string, std::string> str_map(const Json& j, const char* key) {
  std::map<std::string, std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  for (const auto& [k, v] : it->items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return out;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::string_view to_string(Better b) {
  switch (b) {
    case Better::kHigher: return "higher";
    case Better::kLower: return "lower";
    case Better::kUnknown: break;
  }
  return "unknown";
}
Better better_from_string(std::string_view s) {
  if (s == "higher") return Better::kHigher;
  if (s == "lower") return Better::kLower;
  return Better::kUnknown;
}
std::string_view to_string(MetricKind k) {
  switch (k) {
    case MetricKind::kMeasured: return "measured";
    case MetricKind::kCount: return "count";
    case MetricKind::kDerived: return "derived";
    case MetricKind::kModel: return "model";
    case MetricKind::kUnknown: break;
  }
  return "unknown";
}
MetricKind metric_kind_from_string(std::string_view s) {
  if (s == "measured") return MetricKind::kMeasured;
  if (s == "count") return MetricKind::kCount;
  if (s == "derived") return MetricKind::kDerived;
  if (s == "model") return MetricKind::kModel;
  return MetricKind::kUnknown;
}
std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarn: return "warn";
    case Severity::kError: return "error";
    case Severity::kUnknown: break;
  }
  return "unknown";
}
Severity severity_from_string(std::string_view s) {
  if (s == "info") return Severity::kInfo;
  if (s == "warn") return Severity::kWarn;
  if (s == "error") return Severity::kError;
  return Severity::kUnknown;
}

Status compute_verdict(const Report& r) {
  std::vector<Status> all;
  for (const auto& p : r.probes) all.push_back(p.status);
  for (const auto& f : r.findings) {
    if (f.severity == Severity::kError) all.push_back(Status::kFail);
    if (f.severity == Severity::kWarn) all.push_back(Status::kWarn);
  }
  return aggregate(all);
}

void to_json(Json& j, const Stats& v) {
  j = Json{{"n", v.n},       {"median", v.median}, {"mean", v.mean}, {"min", v.min},
           {"max", v.max},   {"p5", v.p5},         {"p95", v.p95},   {"stddev", v.stddev}};
}
void from_json(const Json& j, Stats& v) {
  v.n = j.at("n").get<std::size_t>();
  v.median = num(j, "median");
  v.mean = num(j, "mean", v.median);
  v.min = num(j, "min");
  v.max = num(j, "max");
  v.p5 = num(j, "p5", v.min);
  v.p95 = num(j, "p95", v.max);
  v.stddev = num(j, "stddev");
}

void to_json(Json& j, const Metric& v) {
  j = Json{{"name", v.name}, {"value", v.value}, {"unit", v.unit},
           {"better", to_string(v.better)}, {"labels", v.labels}};
  if (v.stats) j["stats"] = *v.stats;
}
void from_json(const Json& j, Metric& v) {
  v.name = j.at("name").get<std::string>();
  v.value = num(j, "value");
  v.unit = str(j, "unit");
  v.better = better_from_string(str(j, "better"));
  v.labels = str_map(j, "labels");
  if (auto it = j.find("stats"); it != j.end() && !it->is_null()) v.stats = it->get<Stats>();
}

void to_json(Json& j, const MetricDescriptor& v) {
  j = Json{{"name", v.name}, {"unit", v.unit}, {"better", to_string(v.better)},
           {"kind", to_string(v.kind)}, {"axes", v.axes}};
  if (!v.title.empty()) j["title"] = v.title;
  if (!v.description.empty()) j["description"] = v.description;
  const MetricDisplay& d = v.display;
  if (d.scale != 1 || !d.unit.empty() || d.decimals >= 0 || d.min || d.max) {
    Json dj = Json{{"scale", d.scale}};
    if (!d.unit.empty()) dj["unit"] = d.unit;
    if (d.decimals >= 0) dj["decimals"] = d.decimals;
    if (d.min) dj["min"] = *d.min;
    if (d.max) dj["max"] = *d.max;
    j["display"] = dj;
  }
  const MetricChart& c = v.chart;
  if (!c.id.empty())
    j["chart"] = Json{{"id", c.id},         {"title", c.title},       {"kind", c.kind},
                      {"x", c.x},           {"x_label", c.x_label},   {"x_log2", c.x_log2},
                      {"x_bytes", c.x_bytes}, {"reference", c.reference}, {"best_of", c.best_of}};
  if (v.key.rank > 0) j["key"] = Json{{"rank", v.key.rank}, {"caption", v.key.caption}, {"per", v.key.per}};
  if (v.run_to_run > 1) j["run_to_run"] = v.run_to_run;
  if (!v.run_to_run_where.empty()) j["run_to_run_where"] = v.run_to_run_where;
}
void from_json(const Json& j, MetricDescriptor& v) {
  v.name = j.at("name").get<std::string>();
  v.unit = str(j, "unit");
  v.better = better_from_string(str(j, "better"));
  v.kind = metric_kind_from_string(str(j, "kind"));
  opt_vec(j, "axes", v.axes);
  v.title = str(j, "title");
  v.description = str(j, "description");
  if (auto it = j.find("display"); it != j.end() && it->is_object()) {
    const Json& d = *it;
    v.display.scale = num(d, "scale", 1);
    v.display.unit = str(d, "unit");
    v.display.decimals = d.value("decimals", -1);
    if (d.contains("min") && d["min"].is_number()) v.display.min = d["min"].get<double>();
    if (d.contains("max") && d["max"].is_number()) v.display.max = d["max"].get<double>();
  }
  if (auto it = j.find("chart"); it != j.end() && it->is_object()) {
    const Json& c = *it;
    v.chart.id = str(c, "id");
    v.chart.title = str(c, "title");
    v.chart.kind = c.contains("kind") ? str(c, "kind") : "line";
    v.chart.x = str(c, "x");
    v.chart.x_label = str(c, "x_label");
    v.chart.x_log2 = c.value("x_log2", false);
    v.chart.x_bytes = c.value("x_bytes", false);
    v.chart.reference = str(c, "reference");
    v.chart.best_of = str(c, "best_of");
  }
  if (auto it = j.find("key"); it != j.end() && it->is_object()) {
    v.key.rank = it->value("rank", 0);
    v.key.caption = str(*it, "caption");
    v.key.per = str(*it, "per");
  }
  // A factor below 1 (or not a number) means nothing: the samples' spread alone.
  if (auto it = j.find("run_to_run"); it != j.end() && it->is_number())
    if (const double f = it->get<double>(); std::isfinite(f) && f > 1) v.run_to_run = f;
  if (auto it = j.find("run_to_run_where"); it != j.end() && it->is_object())
    for (const auto& [label, f] : it->items())
      if (f.is_number() && std::isfinite(f.get<double>()) && f.get<double>() > 1 && label.find('=') != std::string::npos)
        v.run_to_run_where[label] = f.get<double>();
}

void to_json(Json& j, const Check& v) {
  j = Json{{"id", v.id},
           {"status", to_string(v.status)},
           {"observed", v.observed},
           {"expected", v.expected},
           {"fix", v.fix}};
  if (!v.finding.empty()) j["finding"] = v.finding;
  if (!v.detail.empty()) j["detail"] = v.detail;
}
void from_json(const Json& j, Check& v) {
  v.id = j.at("id").get<std::string>();
  v.status = status_from_string(j.at("status").get<std::string>());
  v.observed = str(j, "observed");
  v.expected = str(j, "expected");
  v.fix = str(j, "fix");
  v.finding = str(j, "finding");
  v.detail = str(j, "detail");
}

void to_json(Json& j, const ProbeResult& v) {
  j = Json{{"name", v.name},         {"status", to_string(v.status)}, {"reason", v.reason},
           {"duration_s", v.duration_s}, {"config", v.config},        {"descriptors", v.descriptors},
           {"metrics", v.metrics},       {"checks", v.checks}};
  if (!v.environment.empty()) j["environment"] = v.environment;
  if (!v.data.empty()) j["data"] = v.data;
  if (const auto& a = v.host_activity)
    j["host_activity"] = Json{{"seconds", a->seconds}, {"cpus", a->cpus}, {"other_cpus", a->other_cpus},
                              {"steal_cpus", a->steal_cpus}};
}
void from_json(const Json& j, ProbeResult& v) {
  v.name = j.at("name").get<std::string>();
  v.status = status_from_string(j.at("status").get<std::string>());
  v.reason = str(j, "reason");
  v.duration_s = num(j, "duration_s");
  v.config = object_or_empty(j, "config");
  opt_vec(j, "descriptors", v.descriptors);
  opt_vec(j, "metrics", v.metrics);
  opt_vec(j, "checks", v.checks);
  v.environment = str_map(j, "environment");
  v.data = object_or_empty(j, "data");
  if (auto it = j.find("host_activity"); it != j.end() && it->is_object()) {
    HostActivity a;
    a.seconds = num(*it, "seconds");
    a.cpus = it->value("cpus", 0);
    a.other_cpus = num(*it, "other_cpus");
    a.steal_cpus = num(*it, "steal_cpus");
    if (std::isfinite(a.other_cpus) && std::isfinite(a.steal_cpus) && a.cpus > 0) v.host_activity = a;
  }
}

void to_json(Json& j, const Evidence& v) {
  j = Json{{"source", v.source}, {"line", v.line}, {"text", v.text}};
}
void from_json(const Json& j, Evidence& v) {
  v.source = str(j, "source");
  v.line = j.value("line", 0L);
  v.text = str(j, "text");
}

void to_json(Json& j, const Finding& v) {
  j = Json{{"id", v.id},         {"severity", to_string(v.severity)}, {"title", v.title},
           {"evidence", v.evidence}, {"remedy", v.remedy},          {"refs", v.refs}};
  if (!v.probe.empty()) j["probe"] = v.probe;
  if (v.count != 1) j["count"] = v.count;
  if (!v.first_seen.empty()) j["first_seen"] = v.first_seen;
  if (!v.last_seen.empty()) j["last_seen"] = v.last_seen;
  if (!v.facts.empty()) j["facts"] = v.facts;
  if (!v.action.empty()) j["action"] = v.action;
}
void from_json(const Json& j, Finding& v) {
  v.id = j.at("id").get<std::string>();
  v.severity = severity_from_string(str(j, "severity"));
  v.title = str(j, "title");
  opt_vec(j, "evidence", v.evidence);
  opt_vec(j, "remedy", v.remedy);
  opt_vec(j, "refs", v.refs);
  v.probe = str(j, "probe");
  v.count = j.value("count", 1L);
  v.first_seen = str(j, "first_seen");
  v.last_seen = str(j, "last_seen");
  v.facts = object_or_empty(j, "facts");
  v.action = str(j, "action");
}

void to_json(Json& j, const ToolInfo& v) {
  j = Json{{"name", v.name}, {"version", v.version}, {"git", v.git}};
}
void from_json(const Json& j, ToolInfo& v) {
  v.name = str(j, "name");
  v.version = str(j, "version");
  v.git = str(j, "git");
}

void to_json(Json& j, const RunInfo& v) {
  j = Json{{"id", v.id},           {"label", v.label},       {"argv", v.argv},
           {"started", v.started}, {"finished", v.finished}};
}
void from_json(const Json& j, RunInfo& v) {
  v.id = str(j, "id");
  v.label = str(j, "label");
  opt_vec(j, "argv", v.argv);
  v.started = str(j, "started");
  v.finished = str(j, "finished");
}

void to_json(Json& j, const HostInfo& v) {
  j = Json{{"hostname", v.hostname},
           {"kernel", v.kernel},
           {"os", v.os},
           {"instance_type", v.instance_type},
           {"cpu_model", v.cpu_model},
           {"cpus", v.cpus},
           {"memory", v.memory_bytes},
           {"gpus", v.gpus},
           {"driver", v.driver},
           {"cuda_runtime", v.cuda_runtime},
           {"nccl", v.nccl},
           {"libfabric", v.libfabric},
           {"mpi", v.mpi},
           {"env", v.env}};
}
void from_json(const Json& j, HostInfo& v) {
  v.hostname = str(j, "hostname");
  v.kernel = str(j, "kernel");
  v.os = str(j, "os");
  v.instance_type = str(j, "instance_type");
  v.cpu_model = str(j, "cpu_model");
  v.cpus = j.value("cpus", 0);
  v.memory_bytes = j.value("memory", 0LL);
  auto it = j.find("gpus");
  v.gpus = (it == j.end() || it->is_null()) ? Json::array() : *it;
  v.driver = str(j, "driver");
  v.cuda_runtime = str(j, "cuda_runtime");
  v.nccl = str(j, "nccl");
  v.libfabric = str(j, "libfabric");
  v.mpi = str(j, "mpi");
  v.env = str_map(j, "env");
}

void to_json(Json& j, const Report& v) {
  j = Json{{"schema", v.schema}, {"tool", v.tool},         {"run", v.run},
           {"host", v.host},     {"probes", v.probes},     {"findings", v.findings},
           {"verdict", to_string(v.verdict)}};
  if (!v.action.empty()) j["action"] = v.action;
  redact_report_json(j);  // no report leaves the process with a secret in it
}
void from_json(const Json& j, Report& v) {
  v.schema = j.at("schema").get<std::string>();
  v.tool = j.at("tool").get<ToolInfo>();
  v.run = j.at("run").get<RunInfo>();
  v.host = j.at("host").get<HostInfo>();
  v.probes = j.at("probes").get<std::vector<ProbeResult>>();
  opt_vec(j, "findings", v.findings);
  v.verdict = status_from_string(j.at("verdict").get<std::string>());
  v.action = str(j, "action");
}

std::string check_schema_major(const Json& j, const std::string& origin, const std::string& prefix,
                               const std::string& what, int oldest, int newest) {
  if (!j.is_object()) throw ReportError(origin + ": not a nodeprobe " + what + " (top level is not an object)");
  auto it = j.find("schema");
  if (it == j.end() || !it->is_string())
    throw ReportError(origin + ": not a nodeprobe " + what + " (no \"schema\" field)");
  const std::string schema = it->get<std::string>();
  if (schema.rfind(prefix, 0) != 0)
    throw ReportError(origin + ": not a nodeprobe " + what + " (schema \"" + schema + "\")");
  const std::string major = schema.substr(prefix.size(), schema.find('.', prefix.size()) - prefix.size());
  for (int m = oldest; m <= newest; ++m)
    if (major == std::to_string(m)) return schema;
  const std::string reads = oldest == newest ? prefix + std::to_string(newest)
                                             : prefix + std::to_string(oldest) + " to " + prefix + std::to_string(newest);
  throw ReportError(origin + ": " + what + " schema " + schema + " is not supported; this build reads " + reads);
}

Report parse_report(const std::string& text, const std::string& origin) {
  Json j;
  try {
    j = parse_json_text(text, origin);
  } catch (const InputError& e) {
    throw ReportError(e.what());
  }
  check_schema_major(j, origin, "nodeprobe.report/", "report", kReportSchemaOldestMajor, kReportSchemaMajor);
  redact_report_json(j);
  try {
    return j.get<Report>();
  } catch (const nlohmann::json::exception& e) {
    throw ReportError(origin + ": malformed report: " + one_line(e.what()));
  }
}

std::string read_report_text(const std::string& path, const InputOverrides& limits) {
  std::string text;
  try {
    text = read_input(path, input_limits(InputKind::kReport, limits));
  } catch (const InputError& e) {
    throw ReportError(e.what());
  }
  if (text.empty()) throw ReportError((path == "-" ? "stdin" : path) + ": empty file");
  return text;
}

Report load_report(const std::string& path, const InputOverrides& limits) {
  return parse_report(read_report_text(path, limits), path == "-" ? "stdin" : path);
}

std::string dump_report(const Report& r) {
  Json j = r;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace nodeprobe
