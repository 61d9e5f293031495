#include "nodeprobe/instance_table.h"

#include <algorithm>
#include <set>

#include "nodeprobe/json_input.h"
#include "nodeprobe/share_dir.h"

extern const char* const kNodeprobeBuiltinInstanceTypes;  // generated from diag/data/instance_types.json

namespace nodeprobe {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw InstanceTableError(where + ": " + what); }

std::optional<int> count(const Json& t, const char* key, const std::string& where) {
  auto it = t.find(key);
  if (it == t.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1024)
    fail(where, std::string(key) + " must be a whole number from 0 to 1024");
  return it->get<int>();
}

bool flag(const Json& t, const char* key, const std::string& where, bool dflt) {
  auto it = t.find(key);
  if (it == t.end()) return dflt;
  if (!it->is_boolean()) fail(where, std::string(key) + " must be true or false");
  return it->get<bool>();
}

}  // namespace

const InstanceSpec* InstanceTable::find(std::string_view type) const {
  auto it = types.find(type);
  return it == types.end() ? nullptr : &it->second;
}

bool InstanceTable::gpu_less(std::string_view type) const {
  const auto dot = type.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == type.size()) return false;
  const std::string_view family = type.substr(0, dot);
  return std::find(gpu_less_families.begin(), gpu_less_families.end(), family) != gpu_less_families.end();
}

std::string InstanceTable::unknown_reason(std::string_view type) const {
  if (type.empty() || known(type)) return {};
  std::string known_types;
  for (const auto& [t, s] : types) known_types += (known_types.empty() ? "" : ", ") + t;
  std::string families;
  for (const auto& f : gpu_less_families) families += (families.empty() ? "" : ", ") + f;
  return "unknown instance type '" + std::string(type) + "' (known: " + known_types +
         (families.empty() ? "" : "; families without GPUs: " + families) + ")";
}

std::string InstanceTable::list_lines() const {
  std::string out;
  for (const auto& [t, s] : types) {
    out += t + "\tinstance type (--expect): ";
    out += s.gpu_count ? std::to_string(*s.gpu_count) + " x " + (s.gpu_model.empty() ? "GPU" : s.gpu_model) : "GPUs not judged";
    if (s.efa) out += ", EFA";
    if (s.nvswitch) out += ", NVSwitch";
    out += "\n";
  }
  for (const auto& f : gpu_less_families) out += f + ".*\tinstance type (--expect): no GPU\n";
  return out;
}

InstanceTable parse_instance_table(const std::string& text, const std::string& origin) {
  Json j;
  try {
    j = parse_json_text(text, origin);
  } catch (const std::exception& e) {
    throw InstanceTableError(e.what());
  }
  if (!j.is_object()) fail(origin, "not a JSON object");
  for (const auto& [key, v] : j.items())
    if (key != "schema" && key != "description" && key != "rules" && key != "instance_types" &&
        key != "gpu_less_families")
      fail(origin, "unknown key \"" + key + "\"");
  if (j.value("schema", "") != "nodeprobe.instance_types/1") fail(origin, "schema must be \"nodeprobe.instance_types/1\"");
  InstanceTable t;
  t.origin = origin;
  auto it = j.find("instance_types");
  if (it == j.end() || !it->is_object()) fail(origin, "missing \"instance_types\" object");
  static const std::set<std::string> kKeys = {"gpu_count", "gpu_model", "efa_devices", "efa", "nvswitch", "min", "notes"};
  for (const auto& [type, v] : it->items()) {
    const std::string where = origin + ": " + type;
    if (!v.is_object()) fail(where, "must be an object");
    for (const auto& [key, x] : v.items())
      if (!kKeys.count(key)) fail(where, "unknown key \"" + key + "\"");
    if (type.empty() || type.find('.') == std::string::npos) fail(where, "an instance type is FAMILY.SIZE");
    InstanceSpec s;
    s.type = type;
    s.gpu_count = count(v, "gpu_count", where);
    if (auto m = v.find("gpu_model"); m != v.end() && !m->is_null()) {
      if (!m->is_string()) fail(where, "gpu_model must be a string");
      s.gpu_model = m->get<std::string>();
    }
    s.efa_devices = count(v, "efa_devices", where);
    s.efa = flag(v, "efa", where, s.efa_devices.value_or(0) > 0);
    s.nvswitch = flag(v, "nvswitch", where, false);
    t.types.emplace(type, std::move(s));
  }
  if (auto f = j.find("gpu_less_families"); f != j.end()) {
    if (!f->is_array()) fail(origin, "gpu_less_families must be an array of family names");
    for (const auto& x : *f) {
      if (!x.is_string() || x.get<std::string>().empty()) fail(origin, "gpu_less_families must be an array of family names");
      t.gpu_less_families.push_back(x.get<std::string>());
    }
  }
  return t;
}

std::string instance_table_text(std::string* origin) {
  if (auto text = read_share_file("instance_types.json")) {
    if (origin) *origin = *share_dir() + "instance_types.json";
    return *text;
  }
  if (origin) *origin = "built-in instance_types.json";
  return kNodeprobeBuiltinInstanceTypes;
}

const InstanceTable& instance_table() {
  static const InstanceTable t = [] {
    std::string origin;
    const std::string text = instance_table_text(&origin);
    return parse_instance_table(text, origin);
  }();
  return t;
}

}  // namespace nodeprobe
