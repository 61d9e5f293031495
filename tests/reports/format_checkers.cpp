#include "format_checkers.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace nodeprobe::testing {
namespace {

std::string at(std::size_t line, const std::string& what) { return "line " + std::to_string(line) + ": " + what; }

bool metric_name_ok(const std::string& n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_' || n[0] == ':')) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':')) return false;
  return true;
}

bool label_name_ok(const std::string& n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  if (n.rfind("__", 0) == 0) return false;  // reserved
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

bool parse_prom_value(const std::string& s, double* v) {
  if (s == "NaN") return *v = NAN, true;
  if (s == "+Inf" || s == "Inf") return *v = INFINITY, true;
  if (s == "-Inf") return *v = -INFINITY, true;
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  for (char c : s)  // no hex floats, no "nan"/"inf" spellings
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
      return false;
  return true;
}

}  // namespace

std::string check_prometheus(const std::string& text, std::vector<PromFamily>* out) {
  if (text.empty()) return "empty document";
  if (text.back() != '\n') return "the last line does not end with a newline";
  std::vector<PromFamily> fams;
  std::map<std::string, std::size_t> index;  // family -> position
  std::set<std::string> closed;              // families whose samples ended
  std::set<std::string> series;
  std::string current;
  std::istringstream in(text);
  std::size_t ln = 0;
  auto family_of = [&](const std::string& name) -> PromFamily& {
    auto it = index.find(name);
    if (it == index.end()) {
      index[name] = fams.size();
      fams.push_back({name, "", "", {}});
      return fams.back();
    }
    return fams[it->second];
  };
  for (std::string line; std::getline(in, line);) {
    ++ln;
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream ls(line.substr(1));
      std::string kw, name;
      ls >> kw >> name;
      if (kw != "HELP" && kw != "TYPE") continue;  // a comment
      if (line.compare(0, 2 + kw.size(), "# " + kw) != 0) return at(ln, "malformed " + kw + " line");
      if (!metric_name_ok(name)) return at(ln, "bad metric name in " + kw + ": " + name);
      if (closed.count(name)) return at(ln, kw + " for " + name + " after its samples ended");
      PromFamily& f = family_of(name);
      if (!f.samples.empty()) return at(ln, kw + " for " + name + " after its samples");
      const std::string rest = line.size() > 7 + name.size() ? line.substr(8 + name.size()) : "";
      if (kw == "HELP") {
        if (!f.help.empty()) return at(ln, "second HELP for " + name);
        for (std::size_t i = 0; i < rest.size(); ++i)
          if (rest[i] == '\\' && (i + 1 >= rest.size() || (rest[i + 1] != '\\' && rest[i + 1] != 'n')))
            return at(ln, "invalid escape in HELP");
          else if (rest[i] == '\\') ++i;
        f.help = rest.empty() ? " " : rest;
      } else {
        if (!f.type.empty()) return at(ln, "second TYPE for " + name);
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary", "untyped"};
        if (!kTypes.count(rest)) return at(ln, "unknown TYPE '" + rest + "'");
        f.type = rest;
      }
      continue;
    }
    // A sample: name{labels} value
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    const std::string name = line.substr(0, i);
    if (!metric_name_ok(name)) return at(ln, "bad metric name '" + name + "'");
    PromSample s;
    s.name = name;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (true) {
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        std::size_t j = i;
        while (j < line.size() && line[j] != '=') ++j;
        const std::string lname = line.substr(i, j - i);
        if (!label_name_ok(lname)) return at(ln, "bad label name '" + lname + "'");
        if (j + 1 >= line.size() || line[j + 1] != '"') return at(ln, "label value not quoted");
        std::string value;
        std::size_t k = j + 2;
        bool closed_q = false;
        for (; k < line.size(); ++k) {
          if (line[k] == '\\') {
            if (k + 1 >= line.size()) return at(ln, "dangling escape");
            const char e = line[k + 1];
            if (e == '\\') value += '\\';
            else if (e == '"') value += '"';
            else if (e == 'n') value += '\n';
            else return at(ln, std::string("invalid escape \\") + e + " in label value");
            ++k;
          } else if (line[k] == '"') {
            closed_q = true;
            break;
          } else {
            value += line[k];
          }
        }
        if (!closed_q) return at(ln, "unterminated label value");
        if (s.labels.count(lname)) return at(ln, "duplicate label " + lname);
        s.labels[lname] = value;
        i = k + 1;
        if (i < line.size() && line[i] == ',') ++i;
        else if (i < line.size() && line[i] == '}') continue;
        else return at(ln, "expected ',' or '}' after a label");
      }
    }
    if (i >= line.size() || line[i] != ' ') return at(ln, "expected a space before the value");
    std::istringstream vs(line.substr(i + 1));
    std::string value, ts, extra;
    vs >> value >> ts >> extra;
    if (!parse_prom_value(value, &s.value)) return at(ln, "bad value '" + value + "'");
    if (!ts.empty()) return at(ln, "sample timestamp present (the textfile collector rejects them)");
    // Family: a gauge's samples carry the family name itself.
    if (!current.empty() && current != name) closed.insert(current);
    if (closed.count(name)) return at(ln, "samples of " + name + " are not contiguous");
    current = name;
    PromFamily& f = family_of(name);
    if (f.type.empty()) return at(ln, "sample of " + name + " before its TYPE line");
    std::string key = name + "{";
    for (const auto& [k, v] : s.labels) key += k + "=" + v + ",";
    if (!series.insert(key).second) return at(ln, "duplicate series " + key + "}");
    f.samples.push_back(std::move(s));
  }
  for (const auto& f : fams)
    if (f.samples.empty()) return "family " + f.name + " has HELP/TYPE but no samples";
  if (out) *out = std::move(fams);
  return {};
}

std::string check_emf(const std::string& text, std::size_t* records) {
  static const std::set<std::string> kUnits = {
      "Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes",
      "Terabytes", "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
      "Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
      "Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
      "Count/Second", "None"};
  std::istringstream in(text);
  std::size_t ln = 0, n = 0;
  for (std::string line; std::getline(in, line);) {
    ++ln;
    if (line.size() > 256 * 1024) return at(ln, "record larger than a CloudWatch Logs event (256 KiB)");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      return at(ln, std::string("not JSON: ") + e.what());
    }
    if (!j.is_object()) return at(ln, "record is not an object");
    if (!j.contains("_aws") || !j["_aws"].is_object()) return at(ln, "no _aws object");
    const auto& aws = j["_aws"];
    if (!aws.contains("Timestamp") || !aws["Timestamp"].is_number_integer() || aws["Timestamp"].get<long long>() <= 0)
      return at(ln, "_aws.Timestamp must be a positive integer (ms since epoch)");
    if (!aws.contains("CloudWatchMetrics") || !aws["CloudWatchMetrics"].is_array() || aws["CloudWatchMetrics"].empty())
      return at(ln, "_aws.CloudWatchMetrics must be a non-empty array");
    for (const auto& d : aws["CloudWatchMetrics"]) {
      if (!d.is_object()) return at(ln, "directive is not an object");
      for (const auto& [k, v] : d.items())
        if (k != "Namespace" && k != "Dimensions" && k != "Metrics") return at(ln, "unknown directive key " + k);
      if (!d.contains("Namespace") || !d["Namespace"].is_string()) return at(ln, "Namespace missing");
      const auto ns = d["Namespace"].get<std::string>();
      if (ns.empty() || ns.size() > 255 || ns.rfind("AWS/", 0) == 0) return at(ln, "bad Namespace");
      if (!d.contains("Dimensions") || !d["Dimensions"].is_array()) return at(ln, "Dimensions must be an array");
      std::set<std::string> dim_names;
      for (const auto& set : d["Dimensions"]) {
        if (!set.is_array()) return at(ln, "a DimensionSet must be an array");
        if (set.size() > 30) return at(ln, "more than 30 dimensions in a DimensionSet");
        for (const auto& dn : set) {
          if (!dn.is_string()) return at(ln, "dimension name is not a string");
          const auto name = dn.get<std::string>();
          if (name.empty() || name.size() > 255) return at(ln, "dimension name length");
          if (!j.contains(name) || !j[name].is_string()) return at(ln, "dimension " + name + " has no string value at the root");
          const auto v = j[name].get<std::string>();
          if (v.empty() || v.size() > 1024) return at(ln, "dimension value of " + name + " must have 1..1024 characters");
          dim_names.insert(name);
        }
      }
      if (!d.contains("Metrics") || !d["Metrics"].is_array() || d["Metrics"].empty()) return at(ln, "Metrics must be a non-empty array");
      if (d["Metrics"].size() > 100) return at(ln, "more than 100 metrics in one directive");
      std::set<std::string> names;
      for (const auto& m : d["Metrics"]) {
        if (!m.is_object() || !m.contains("Name") || !m["Name"].is_string()) return at(ln, "metric without Name");
        for (const auto& [k, v] : m.items())
          if (k != "Name" && k != "Unit" && k != "StorageResolution") return at(ln, "unknown metric key " + k);
        const auto name = m["Name"].get<std::string>();
        if (name.empty() || name.size() > 255) return at(ln, "metric name length");
        if (!names.insert(name).second) return at(ln, "metric " + name + " twice in one directive");
        if (dim_names.count(name)) return at(ln, name + " is both a dimension and a metric");
        if (m.contains("Unit") && (!m["Unit"].is_string() || !kUnits.count(m["Unit"].get<std::string>())))
          return at(ln, "metric " + name + " has a unit CloudWatch does not know");
        if (!j.contains(name)) return at(ln, "metric " + name + " has no value at the root");
        const auto& v = j[name];
        if (v.is_array()) {
          if (v.empty() || v.size() > 100) return at(ln, "metric " + name + " value array size");
          for (const auto& x : v)
            if (!x.is_number() || !std::isfinite(x.get<double>())) return at(ln, "non-numeric value in " + name);
        } else if (!v.is_number() || !std::isfinite(v.get<double>())) {
          return at(ln, "metric " + name + " value is not a finite number");
        }
      }
    }
    ++n;
  }
  if (records) *records = n;
  return {};
}

}  // namespace nodeprobe::testing
