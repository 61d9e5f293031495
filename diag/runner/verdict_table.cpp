#include "verdict_table.h"

#include <algorithm>
#include <cstdio>

#include "nodeprobe/key_numbers.h"

namespace nodeprobe::diag {
namespace {

const char* color_of(Status s) {
  switch (s) {
    case Status::kPass: return "\033[32m";
    case Status::kWarn: return "\033[33m";
    case Status::kFail:
    case Status::kError:
    case Status::kTimeout:
    case Status::kUnknown: return "\033[31m";
    case Status::kSkip: break;
  }
  return "\033[2m";
}

std::string cell(std::string s, std::size_t w) {
  if (s.size() < w) s.resize(w, ' ');
  return s;
}

std::string status_cell(Status s, bool color) {
  std::string t = cell(std::string(to_string(s)), 8);
  return color ? color_of(s) + t + "\033[0m" : t;
}

}  // namespace

void render_verdict_table(const Report& r, std::ostream& out, bool color, int exit_code) {
  std::size_t w = 5;
  for (const auto& p : r.probes) w = std::max(w, p.name.size());
  w = std::min<std::size_t>(w + 2, 26);
  out << cell("probe", w) << cell("status", 8) << cell("time", 9) << "key numbers / reason\n";
  for (const auto& p : r.probes) {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f s", p.duration_s);
    std::string what = key_numbers(p);
    if (p.status != Status::kPass && !p.reason.empty()) what = p.reason + (what.empty() ? "" : " (" + what + ")");
    out << cell(p.name, w) << status_cell(p.status, color) << cell(t, 9) << what << "\n";
  }
  if (!r.findings.empty()) {
    out << "\nfindings:\n";
    for (const auto& f : r.findings) {
      out << "  " << cell(std::string(to_string(f.severity)), 6) << f.id << ": " << f.title;
      if (!f.probe.empty()) out << " [" << f.probe << "]";
      if (f.count > 1) out << " (x" << f.count << ")";
      out << "\n";
      if (!f.remedy.empty()) out << "        fix: " << f.remedy.front() << "\n";
    }
  }
  out << "\nverdict: " << status_cell(r.verdict, color) << "(exit " << exit_code << ")\n";
  if (!r.action.empty()) out << "node action: " << r.action << "\n";
}

}  // namespace nodeprobe::diag
