#include "nodeprobe/fleet_json.h"

#include <cmath>
#include <limits>

#include "nodeprobe/report_json.h"

namespace nodeprobe {
namespace {

double num(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return it->get<double>();
}

std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

Json obj(const Json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || !it->is_object() ? Json::object() : *it;
}

const Json& arr(const Json& j, const char* key) {
  static const Json empty = Json::array();
  auto it = j.find(key);
  return it == j.end() || !it->is_array() ? empty : *it;
}

// Non-finite numbers become null (JSON has no NaN).
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json finding_json(const FleetFinding& f) {
  Json j{{"id", f.id}, {"severity", to_string(f.severity)}, {"title", f.title}};
  if (!f.action.empty()) j["action"] = f.action;
  return j;
}

FleetFinding finding_from(const Json& j) {
  return {j.at("id").get<std::string>(), severity_from_string(str(j, "severity")), str(j, "title"), str(j, "action")};
}

}  // namespace

Json fleet_to_json(const FleetReport& r) {
  Json j;
  j["schema"] = r.schema;
  j["tool"] = r.tool;
  j["run"] = r.run;
  j["config"] = r.config;
  j["verdict"] = to_string(r.verdict);
  j["reason"] = r.reason;
  Json phases = Json::array();
  for (const auto& p : r.phases)
    phases.push_back({{"name", p.name}, {"status", to_string(p.status)}, {"duration_s", number(p.duration_s)},
                      {"deadline_s", number(p.deadline_s)}, {"nodes", p.nodes}, {"reason", p.reason}});
  j["phases"] = phases;
  Json nodes = Json::array();
  for (const auto& n : r.nodes) {
    Json f = Json::array();
    for (const auto& x : n.findings) f.push_back(finding_json(x));
    Json node{{"host", n.host}, {"rank", n.rank}, {"verdict", to_string(n.verdict)}, {"action", n.action},
              {"reason", n.reason}, {"findings", f}, {"metrics", n.metrics}, {"local", n.local}};
    if (!n.timed_out_in.empty()) node["timed_out_in"] = n.timed_out_in;
    if (!n.report.empty()) node["report"] = n.report;
    nodes.push_back(std::move(node));
  }
  j["nodes"] = nodes;
  Json pairs = Json::array();
  for (const auto& p : r.pairs) {
    Json pj{{"a", p.a},           {"b", p.b},           {"rank_a", p.rank_a},
            {"rank_b", p.rank_b}, {"round", p.round},   {"status", to_string(p.status)},
            {"busbw", number(p.busbw)}, {"ratio_to_median", number(p.ratio_to_median)}};
    if (p.stats.n > 0) pj["stats"] = p.stats;
    if (!p.reason.empty()) pj["reason"] = p.reason;
    if (!p.transport.empty()) pj["transport"] = p.transport;
    pairs.push_back(std::move(pj));
  }
  j["pairs"] = pairs;
  Json ring = Json::array();
  for (const auto& p : r.ring) {
    Json pj{{"nodes", p.nodes}, {"source", p.source}, {"bytes", p.bytes}, {"status", to_string(p.status)}, {"time_s", number(p.time_s)},
            {"busbw", number(p.busbw)}, {"retention", number(p.retention)}};
    if (p.stats.n > 0) pj["stats"] = p.stats;
    if (!p.reason.empty()) pj["reason"] = p.reason;
    ring.push_back(std::move(pj));
  }
  j["ring"] = ring;
  j["mesh"] = r.mesh;
  Json outliers = Json::array();
  for (const auto& o : r.outliers) {
    Json oj{{"kind", o.kind}, {"host", o.host}};
    if (!o.gpu.empty()) oj["gpu"] = o.gpu;
    if (!o.peer.empty()) oj["peer"] = o.peer;
    oj["metric"] = o.metric;
    oj["value"] = number(o.value);
    oj["fleet_median"] = number(o.fleet_median);
    oj["ratio"] = number(o.ratio);
    oj["reason"] = o.reason;
    if (!o.action.empty()) oj["action"] = o.action;
    outliers.push_back(std::move(oj));
  }
  j["outliers"] = outliers;
  Json findings = Json::array();
  for (const auto& f : r.findings) findings.push_back(finding_json(f));
  j["findings"] = findings;
  Json drain = Json::array();
  for (const auto& d : r.drain) drain.push_back({{"host", d.host}, {"action", d.action}, {"reason", d.reason}});
  j["drain"] = drain;
  j["model"] = r.model;
  return j;
}

FleetReport fleet_from_json(const Json& j, const std::string& origin) {
  const std::string schema = check_schema_major(j, origin, "nodeprobe.fleet/", "fleet report", 1, 1);
  FleetReport r;
  try {
    r.schema = schema;
    r.tool = j.at("tool").get<ToolInfo>();
    r.run = j.at("run").get<RunInfo>();
    r.config = obj(j, "config");
    r.verdict = status_from_string(j.at("verdict").get<std::string>());
    r.reason = str(j, "reason");
    for (const auto& p : arr(j, "phases"))
      r.phases.push_back({str(p, "name"), status_from_string(str(p, "status")), num(p, "duration_s"),
                          num(p, "deadline_s"), str(p, "reason"), p.value("nodes", 0)});
    for (const auto& n : j.at("nodes")) {
      FleetNode x;
      x.host = n.at("host").get<std::string>();
      x.rank = n.value("rank", 0);
      x.verdict = status_from_string(str(n, "verdict"));
      x.action = str(n, "action");
      x.reason = str(n, "reason");
      x.timed_out_in = str(n, "timed_out_in");
      x.report = str(n, "report");
      x.local = obj(n, "local");
      for (const auto& f : arr(n, "findings")) x.findings.push_back(finding_from(f));
      for (const auto& m : arr(n, "metrics")) x.metrics.push_back(m.get<Metric>());
      r.nodes.push_back(std::move(x));
    }
    for (const auto& p : arr(j, "pairs")) {
      FleetPair x;
      x.a = p.at("a").get<std::string>();
      x.b = p.at("b").get<std::string>();
      x.rank_a = p.value("rank_a", 0);
      x.rank_b = p.value("rank_b", 0);
      x.round = p.value("round", 0);
      x.status = status_from_string(str(p, "status"));
      x.reason = str(p, "reason");
      x.busbw = num(p, "busbw");
      x.ratio_to_median = num(p, "ratio_to_median");
      x.transport = str(p, "transport");
      if (p.contains("stats")) x.stats = p["stats"].get<Stats>();
      r.pairs.push_back(std::move(x));
    }
    for (const auto& p : arr(j, "ring")) {
      FleetRingPoint x;
      x.nodes = p.value("nodes", 0);
      x.source = p.value("source", "ring");
      x.bytes = num(p, "bytes");
      x.status = status_from_string(str(p, "status"));
      x.reason = str(p, "reason");
      x.time_s = num(p, "time_s");
      x.busbw = num(p, "busbw");
      x.retention = num(p, "retention");
      if (p.contains("stats")) x.stats = p["stats"].get<Stats>();
      r.ring.push_back(std::move(x));
    }
    r.mesh = obj(j, "mesh");
    for (const auto& o : arr(j, "outliers")) {
      FleetOutlier x;
      x.kind = str(o, "kind");
      x.host = str(o, "host");
      x.gpu = str(o, "gpu");
      x.peer = str(o, "peer");
      x.metric = str(o, "metric");
      x.value = num(o, "value");
      x.fleet_median = num(o, "fleet_median");
      x.ratio = num(o, "ratio");
      x.reason = str(o, "reason");
      x.action = str(o, "action");
      r.outliers.push_back(std::move(x));
    }
    for (const auto& f : arr(j, "findings")) r.findings.push_back(finding_from(f));
    for (const auto& d : arr(j, "drain")) r.drain.push_back({str(d, "host"), str(d, "action"), str(d, "reason")});
    r.model = obj(j, "model");
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    throw ReportError(origin + ": malformed fleet report: " + what);
  }
  return r;
}

FleetReport parse_fleet_report(const std::string& text, const std::string& origin) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ReportError(origin + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
  return fleet_from_json(j, origin);
}

FleetReport load_fleet_report(const std::string& path) {
  return parse_fleet_report(read_report_text(path), path == "-" ? "stdin" : path);
}

std::string dump_fleet_report(const FleetReport& r) {
  return fleet_to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string document_schema(const std::string& text) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("schema") || !j["schema"].is_string()) return {};
  return j["schema"].get<std::string>();
}

}  // namespace nodeprobe
