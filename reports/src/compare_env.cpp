// The environment half of a comparison: what changed around the numbers.
#include <set>

#include "nodeprobe/compare.h"

namespace nodeprobe {
namespace {

void field(std::vector<FieldDiff>& out, const std::string& section, const std::string& key,
           const std::string& b, const std::string& a) {
  if (b != a) out.push_back({section, key, b.empty() ? "(none)" : b, a.empty() ? "(none)" : a, ""});
}

/// A fact only some probes report (library versions, filled by the probe that
/// loads the library): unknown on one side is not a change of the node, it is
/// a probe that did not get that far (skipped, timed out).
void known_field(std::vector<FieldDiff>& out, const std::string& section, const std::string& key,
                 const std::string& b, const std::string& a) {
  if (!b.empty() && !a.empty()) field(out, section, key, b, a);
}

std::string gpu_summary(const Json& gpus) {
  if (!gpus.is_array() || gpus.empty()) return {};
  std::map<std::string, int> models;
  for (const auto& g : gpus) {
    std::string name;
    for (const char* k : {"name", "model", "product"}) {
      if (g.is_object() && g.contains(k) && g[k].is_string()) {
        name = g[k].get<std::string>();
        break;
      }
    }
    ++models[name.empty() ? "unknown" : name];
  }
  std::string out;
  for (const auto& [m, n] : models) out += (out.empty() ? "" : ", ") + std::to_string(n) + " x " + m;
  return out;
}

std::string scalar_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

/// Flattens a JSON object into "a.b[2].c" -> text.
void flatten(const Json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_array() && j.size() <= 16) {
    for (std::size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "[" + std::to_string(i) + "]", out);
  } else {
    out[prefix] = scalar_text(j);
  }
}

void map_diff(std::vector<FieldDiff>& out, const std::string& section, const std::string& probe,
              const std::map<std::string, std::string>& b, const std::map<std::string, std::string>& a) {
  std::set<std::string> keys;
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& k : keys) {
    auto ib = b.find(k);
    auto ia = a.find(k);
    const std::string vb = ib == b.end() ? "(unset)" : ib->second;
    const std::string va = ia == a.end() ? "(unset)" : ia->second;
    if (vb != va) out.push_back({section, k, vb, va, probe});
  }
}

}  // namespace

std::vector<FieldDiff> environment_diff(const Report& before, const Report& after) {
  std::vector<FieldDiff> out;
  const HostInfo& b = before.host;
  const HostInfo& a = after.host;
  field(out, "host", "instance_type", b.instance_type, a.instance_type);
  field(out, "host", "hostname", b.hostname, a.hostname);
  field(out, "host", "kernel", b.kernel, a.kernel);
  field(out, "host", "os", b.os, a.os);
  known_field(out, "host", "driver", b.driver, a.driver);
  known_field(out, "host", "cuda_runtime", b.cuda_runtime, a.cuda_runtime);
  known_field(out, "host", "nccl", b.nccl, a.nccl);
  known_field(out, "host", "libfabric", b.libfabric, a.libfabric);
  known_field(out, "host", "mpi", b.mpi, a.mpi);
  field(out, "host", "cpu_model", b.cpu_model, a.cpu_model);
  field(out, "host", "cpus", b.cpus ? std::to_string(b.cpus) : "", a.cpus ? std::to_string(a.cpus) : "");
  field(out, "host", "memory", b.memory_bytes ? std::to_string(b.memory_bytes) : "",
        a.memory_bytes ? std::to_string(a.memory_bytes) : "");
  field(out, "host", "gpus", gpu_summary(b.gpus), gpu_summary(a.gpus));
  field(out, "tool", "version", before.tool.version + " " + before.tool.git,
        after.tool.version + " " + after.tool.git);
  map_diff(out, "env", "", b.env, a.env);

  std::map<std::string, const ProbeResult*> pb;
  for (const auto& p : before.probes) pb.emplace(p.name, &p);
  for (const auto& p : after.probes) {
    auto it = pb.find(p.name);
    if (it == pb.end()) continue;
    // A probe that stopped before recording its settings or observations
    // (skipped, timed out) has nothing to compare: no side is a change.
    std::map<std::string, std::string> fb, fa;
    flatten(it->second->config, "", fb);
    flatten(p.config, "", fa);
    if (!fb.empty() && !fa.empty()) map_diff(out, "config:" + p.name, p.name, fb, fa);
    if (!it->second->environment.empty() && !p.environment.empty())
      map_diff(out, "environment:" + p.name, p.name, it->second->environment, p.environment);
  }
  return out;
}

}  // namespace nodeprobe
