#include "nodeprobe/size.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace nodeprobe {
namespace {

constexpr const char* kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
constexpr const char* kDecimal[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};

bool fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

/// Multiplier of `unit` (already lower case), 0 when unknown.
long double unit_multiplier(const std::string& unit) {
  if (unit.empty() || unit == "b") return 1;
  static const char kLetters[] = "kmgt";
  const auto pos = std::string_view(kLetters).find(unit[0]);
  if (pos == std::string_view::npos) return 0;
  const std::string rest = unit.substr(1);
  const int power = static_cast<int>(pos) + 1;
  if (rest.empty() || rest == "i" || rest == "ib") return std::pow(1024.0L, power);
  if (rest == "b") return std::pow(1000.0L, power);
  return 0;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text, std::string* why) {
  const std::string shown(text);
  std::size_t i = 0;
  std::string digits;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) digits += text[i++];
  std::string fraction;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) fraction += text[i++];
  }
  if (digits.empty() && fraction.empty()) {
    fail(why, "'" + shown + "' is not a size (e.g. 4096, 64K, 16MiB, 1.5G, 110kB; " + kSizeUnitsHelp + ")");
    return std::nullopt;
  }
  if (i < text.size() && text[i] == ' ') ++i;  // "16 MiB", as format_size() prints it
  std::string unit;
  for (; i < text.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  const long double mult = unit_multiplier(unit);
  if (mult == 0) {
    fail(why, "unknown unit '" + std::string(text.substr(text.size() - unit.size())) + "' in '" + shown + "' (" +
                  kSizeUnitsHelp + ")");
    return std::nullopt;
  }
  // Whole part exactly (long double has 64 mantissa bits on x86; check the
  // integer path separately so 2^64 - 1 itself is accepted).
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t whole = 0;
  for (char c : digits) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (whole > (kMax - d) / 10) {
      fail(why, "'" + shown + "' is larger than the largest size (16 EiB)");
      return std::nullopt;
    }
    whole = whole * 10 + d;
  }
  const bool exact_int = fraction.find_first_not_of('0') == std::string::npos && mult == std::floor(mult);
  if (exact_int) {
    const auto m = static_cast<std::uint64_t>(mult);
    if (m != 0 && whole > kMax / m) {
      fail(why, "'" + shown + "' is larger than the largest size (16 EiB)");
      return std::nullopt;
    }
    return whole * m;
  }
  long double v = static_cast<long double>(whole);
  long double scale = 0.1L;
  for (char c : fraction) {
    v += scale * (c - '0');
    scale /= 10;
  }
  const long double bytes = std::round(v * mult);
  if (!(bytes < 18446744073709551616.0L)) {
    fail(why, "'" + shown + "' is larger than the largest size (16 EiB)");
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(bytes);
}

std::string format_size(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  int u = 0;
  std::uint64_t scale = 1;
  while (u < 6 && bytes / scale >= 1024) scale *= 1024, ++u;
  if (bytes % scale == 0) return std::to_string(bytes / scale) + " " + kBinary[u];
  int d = 0;
  std::uint64_t v = bytes;
  while (v % 1000 == 0) v /= 1000, ++d;
  if (d > 0) return std::to_string(v) + " " + kDecimal[d];
  return format_size(static_cast<double>(bytes));
}

std::string format_size(double bytes) {
  if (!std::isfinite(bytes)) return "? B";
  if (bytes < 0) return "-" + format_size(-bytes);
  if (bytes < 1024) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
    return buf;
  }
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g %s", bytes, kBinary[u]);
  return buf;
}

}  // namespace nodeprobe
