#include <string>

#include "nodeprobe/redact.h"
#include "nodeprobe/report_json.h"

namespace nodeprobe {
namespace {

void redact_node(Json& j, const std::string& key) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    std::string r = key.empty() ? redact_secrets(s) : redact_value(key, s);
    if (r != s) j = std::move(r);
    return;
  }
  if (j.is_array()) {
    bool all_strings = !j.empty();
    for (const auto& x : j) all_strings = all_strings && x.is_string();
    if (key == "argv" && all_strings) {
      const auto redacted = redact_argv(j.get<std::vector<std::string>>());
      for (std::size_t i = 0; i < redacted.size(); ++i) j[i] = redacted[i];
      return;
    }
    for (auto& x : j) redact_node(x, "");
    return;
  }
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) redact_node(it.value(), it.key());
}

}  // namespace

void redact_report_json(Json& doc) { redact_node(doc, ""); }

Report redact_report(const Report& r) {
  const Json j = r;  // to_json redacts
  return j.get<Report>();
}

}  // namespace nodeprobe
