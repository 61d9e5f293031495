#include "export_util.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "nodeprobe/exporters.h"

namespace nodeprobe {
namespace detail {

UnitMap map_unit(const std::string& unit) {
  struct Row {
    const char* unit;
    double scale;
    const char* prom;
    const char* cw;
    double cw_scale;
  };
  static const Row kRows[] = {
      {"", 1, "", "None", 1},
      {"s", 1, "seconds", "Seconds", 1},
      {"ms", 1e-3, "seconds", "Milliseconds", 1},
      {"us", 1e-6, "seconds", "Microseconds", 1},
      {"ns", 1e-9, "seconds", "Microseconds", 1e-3},
      {"B", 1, "bytes", "Bytes", 1},
      {"bytes", 1, "bytes", "Bytes", 1},
      {"KiB", 1024.0, "bytes", "Bytes", 1024.0},
      {"MiB", 1048576.0, "bytes", "Bytes", 1048576.0},
      {"GiB", 1073741824.0, "bytes", "Bytes", 1073741824.0},
      {"KB", 1e3, "bytes", "Kilobytes", 1},
      {"MB", 1e6, "bytes", "Megabytes", 1},
      {"GB", 1e9, "bytes", "Gigabytes", 1},
      {"B/s", 1, "bytes_per_second", "Bytes/Second", 1},
      {"KB/s", 1e3, "bytes_per_second", "Kilobytes/Second", 1},
      {"MB/s", 1e6, "bytes_per_second", "Megabytes/Second", 1},
      {"GB/s", 1e9, "bytes_per_second", "Gigabytes/Second", 1},
      {"MiB/s", 1048576.0, "bytes_per_second", "Bytes/Second", 1048576.0},
      {"GiB/s", 1073741824.0, "bytes_per_second", "Bytes/Second", 1073741824.0},
      {"Gbps", 1e9, "bits_per_second", "Gigabits/Second", 1},
      {"Gbit/s", 1e9, "bits_per_second", "Gigabits/Second", 1},
      {"Mbps", 1e6, "bits_per_second", "Megabits/Second", 1},
      {"%", 1e-2, "ratio", "Percent", 1},
      {"fraction", 1, "ratio", "None", 1},
      {"ratio", 1, "ratio", "None", 1},
      {"TFLOP/s", 1e12, "flop_per_second", "None", 1},
      {"GFLOP/s", 1e9, "flop_per_second", "None", 1},
      {"1/s", 1, "per_second", "Count/Second", 1},
      {"samples/s", 1, "samples_per_second", "Count/Second", 1},
      {"ops/s", 1, "ops_per_second", "Count/Second", 1},
      {"count", 1, "", "Count", 1},
  };
  for (const Row& r : kRows)
    if (unit == r.unit) return {r.scale, r.prom, r.cw, r.cw_scale};
  // Unknown unit: keep the value, name the unit in the suffix.
  std::string suffix;
  for (std::size_t i = 0; i < unit.size(); ++i) {
    if (unit[i] == '/') suffix += "_per_";
    else if (unit[i] == '%') suffix += "percent";
    else suffix += unit[i];
  }
  return {1, snake(suffix), "None", 1};
}

std::string snake(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const char lc = static_cast<char>(std::tolower(c));
    if (std::isalnum(c) && c < 0x80) out += lc;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

}  // namespace detail

std::string sanitize_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    std::size_t len = 0;
    unsigned cp = 0;
    if (c < 0x80) len = 1, cp = c;
    else if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    bool ok = len > 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) ok = false;
      else cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values beyond U+10FFFF are invalid too.
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
               (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF))
      ok = false;
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

double iso8601_to_epoch(const std::string& t) {
  std::tm tm{};
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
    return std::numeric_limits<double>::quiet_NaN();
  double frac = 0;
  if (t.size() > 19 && t[19] == '.') frac = std::strtod(("0" + t.substr(19)).c_str(), nullptr);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const time_t secs = ::timegm(&tm);
  if (secs == static_cast<time_t>(-1)) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(secs) + frac;
}

}  // namespace nodeprobe
