#include "text_util.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace nodeprobe::diag {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Parses exactly n digits at s[pos]; advances pos.
bool digits(std::string_view s, std::size_t& pos, int n, int* out) {
  if (pos + static_cast<std::size_t>(n) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos + static_cast<std::size_t>(i)];
    if (!is_digit(c)) return false;
    v = v * 10 + (c - '0');
  }
  pos += static_cast<std::size_t>(n);
  *out = v;
  return true;
}

// 1..3 digits.
bool some_digits(std::string_view s, std::size_t& pos, int max_n, int* out) {
  int v = 0, n = 0;
  while (pos < s.size() && is_digit(s[pos]) && n < max_n) {
    v = v * 10 + (s[pos] - '0');
    ++pos;
    ++n;
  }
  *out = v;
  return n > 0;
}

double fraction(std::string_view s, std::size_t& pos) {
  if (pos >= s.size() || (s[pos] != '.' && s[pos] != ',')) return 0;
  ++pos;
  double f = 0, scale = 0.1;
  while (pos < s.size() && is_digit(s[pos])) {
    f += (s[pos] - '0') * scale;
    scale /= 10;
    ++pos;
  }
  return f;
}

int month_index(std::string_view s, std::size_t pos) {
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (pos + 3 > s.size()) return -1;
  for (int i = 0; i < 12; ++i)
    if (s.compare(pos, 3, kMonths[i]) == 0) return i + 1;
  return -1;
}

double civil_seconds(long long y, int mo, int d, int h, int mi, int sec) {
  return static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) *
             86400.0 +
         h * 3600.0 + mi * 60.0 + sec;
}

bool valid(int mo, int d, int h, int mi, int s) {
  return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 60;
}

int year_of(double epoch) {
  const std::time_t t = static_cast<std::time_t>(epoch);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

// Local time without a year: pick the year that puts it at or before now (+1 day slack).
double yearless(int mo, int d, int h, int mi, int s, double frac, const TimeContext& ctx) {
  int year = year_of(ctx.now + static_cast<double>(ctx.utc_offset_s));
  double t = civil_seconds(year, mo, d, h, mi, s) + frac - static_cast<double>(ctx.utc_offset_s);
  if (t > ctx.now + 86400) t = civil_seconds(year - 1, mo, d, h, mi, s) + frac - static_cast<double>(ctx.utc_offset_s);
  return t;
}

// YYYY-MM-DD[T ]HH:MM:SS[.f][Z|+HH:MM|+HHMM]
std::optional<double> iso_at(std::string_view s, std::size_t pos, const TimeContext& ctx) {
  int y, mo, d, h, mi, sec;
  if (!digits(s, pos, 4, &y) || pos >= s.size() || s[pos++] != '-' || !digits(s, pos, 2, &mo) ||
      pos >= s.size() || s[pos++] != '-' || !digits(s, pos, 2, &d) || pos >= s.size() ||
      (s[pos] != 'T' && s[pos] != ' '))
    return std::nullopt;
  ++pos;
  if (!digits(s, pos, 2, &h) || pos >= s.size() || s[pos++] != ':' || !digits(s, pos, 2, &mi) ||
      pos >= s.size() || s[pos++] != ':' || !digits(s, pos, 2, &sec) || !valid(mo, d, h, mi, sec))
    return std::nullopt;
  const double frac = fraction(s, pos);
  double t = civil_seconds(y, mo, d, h, mi, sec) + frac;
  if (pos < s.size() && s[pos] == 'Z') return t;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int sign = s[pos] == '-' ? -1 : 1;
    std::size_t p = pos + 1;
    int oh = 0, om = 0;
    if (digits(s, p, 2, &oh)) {
      if (p < s.size() && s[p] == ':') ++p;
      digits(s, p, 2, &om);
      return t - sign * (oh * 3600.0 + om * 60.0);
    }
  }
  return t - static_cast<double>(ctx.utc_offset_s);  // no zone: local time
}

// Mmm dd HH:MM:SS (syslog)
std::optional<double> syslog_at(std::string_view s, std::size_t pos, const TimeContext& ctx) {
  const int mo = month_index(s, pos);
  if (mo < 0 || pos + 15 > s.size() || s[pos + 3] != ' ') return std::nullopt;
  pos += 4;
  if (s[pos] == ' ') ++pos;
  int d, h, mi, sec;
  if (!some_digits(s, pos, 2, &d) || pos >= s.size() || s[pos++] != ' ' || !digits(s, pos, 2, &h) ||
      pos >= s.size() || s[pos++] != ':' || !digits(s, pos, 2, &mi) || pos >= s.size() ||
      s[pos++] != ':' || !digits(s, pos, 2, &sec) || !valid(mo, d, h, mi, sec))
    return std::nullopt;
  const double frac = fraction(s, pos);
  // ctime / dmesg -T carry the year after the time: "Fri Aug 30 11:11:22 2024".
  int y = 0;
  std::size_t p = pos;
  if (p + 5 <= s.size() && s[p] == ' ' && digits(s, ++p, 4, &y))
    return civil_seconds(y, mo, d, h, mi, sec) + frac - static_cast<double>(ctx.utc_offset_s);
  return yearless(mo, d, h, mi, sec, frac, ctx);
}

// [IWEF]MMDD HH:MM:SS.ffffff (glog; month may be one digit: "E321")
std::optional<double> glog_at(std::string_view s, std::size_t pos, const TimeContext& ctx) {
  if (pos >= s.size() || std::strchr("IWEF", s[pos]) == nullptr) return std::nullopt;
  ++pos;
  std::size_t start = pos;
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  const std::size_t n = pos - start;
  if (n < 3 || n > 4 || pos >= s.size() || s[pos] != ' ') return std::nullopt;
  const int md = std::stoi(std::string(s.substr(start, n)));
  const int mo = md / 100, d = md % 100;
  ++pos;
  int h, mi, sec;
  if (!digits(s, pos, 2, &h) || pos >= s.size() || s[pos++] != ':' || !digits(s, pos, 2, &mi) ||
      pos >= s.size() || s[pos++] != ':' || !digits(s, pos, 2, &sec) || !valid(mo, d, h, mi, sec))
    return std::nullopt;
  return yearless(mo, d, h, mi, sec, fraction(s, pos), ctx);
}

// audit(1730072197.188:289) raw, or ausearch -i: audit(07/14/2025 06:17:13.290:402)
// (also DD.MM.YYYY and MM/DD/YY).
std::optional<double> audit_time(std::string_view s, const TimeContext& ctx) {
  const std::size_t a = s.find("audit(");
  if (a == std::string_view::npos) return std::nullopt;
  std::size_t pos = a + 6;
  const std::size_t start = pos;
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  if (pos < s.size() && s[pos] == '.' && pos - start >= 9 && pos - start <= 11) {  // epoch seconds
    double t = 0;
    for (std::size_t i = start; i < pos; ++i) t = t * 10 + (s[i] - '0');
    return t + fraction(s, pos);
  }
  pos = start;
  int x, y2, year;
  if (!some_digits(s, pos, 2, &x) || pos >= s.size()) return std::nullopt;
  const char sep = s[pos];
  if (sep != '/' && sep != '.') return std::nullopt;
  ++pos;
  if (!some_digits(s, pos, 2, &y2) || pos >= s.size() || s[pos++] != sep) return std::nullopt;
  const std::size_t ys = pos;
  if (!some_digits(s, pos, 4, &year)) return std::nullopt;
  if (pos - ys == 2) year += 2000;
  const int mo = sep == '/' ? x : y2, d = sep == '/' ? y2 : x;
  int h, mi, sec;
  if (pos >= s.size() || s[pos++] != ' ' || !digits(s, pos, 2, &h) || pos >= s.size() ||
      s[pos++] != ':' || !digits(s, pos, 2, &mi) || pos >= s.size() || s[pos++] != ':' ||
      !digits(s, pos, 2, &sec) || !valid(mo, d, h, mi, sec))
    return std::nullopt;
  return civil_seconds(year, mo, d, h, mi, sec) + fraction(s, pos) - static_cast<double>(ctx.utc_offset_s);
}

}  // namespace

bool ci_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::size_t count_newlines(std::string_view s) {
  // SWAR: a byte of x is zero exactly where s had '\n'; the expression below
  // sets the high bit of each zero byte and of no other (no borrow between bytes).
  constexpr std::uint64_t kNl = 0x0a0a0a0a0a0a0a0aULL;
  constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  std::size_t n = 0;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    const std::uint64_t x = w ^ kNl;
    const std::uint64_t t = ~(((x & kLow7) + kLow7) | x | kLow7);
    n += static_cast<std::size_t>(((t >> 7) * 0x0101010101010101ULL) >> 56);  // sum of 0/1 bytes
  }
  for (; i < s.size(); ++i) {
    if (s[i] == '\n') ++n;
  }
  return n;
}

long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

std::string clean_text(std::string_view s, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes) + 4);
  std::size_t i = 0;
  bool cut = false;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 1;
    bool ok = true;
    if (c >= 0x80) {
      if (c >= 0xC2 && c <= 0xDF) len = 2;
      else if (c >= 0xE0 && c <= 0xEF) len = 3;
      else if (c >= 0xF0 && c <= 0xF4) len = 4;
      else ok = false;
      if (ok && i + len > s.size()) ok = false;
      for (std::size_t k = 1; ok && k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) ok = false;
      if (ok && len == 3) {  // overlongs and surrogates
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) ok = false;
      }
      if (ok && len == 4) {
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) ok = false;
      }
    }
    const std::size_t add = ok ? len : 3;
    if (out.size() + add > max_bytes) {
      cut = true;
      break;
    }
    if (!ok) {
      out += "\xEF\xBF\xBD";
      i += 1;
    } else if (c < 0x20 || c == 0x7F) {
      out += c == '\t' ? '\t' : ' ';
      i += 1;
    } else {
      out.append(s.data() + i, len);
      i += len;
    }
  }
  while (!out.empty() && (out.back() == ' ')) out.pop_back();
  if (cut) out += "...";
  return out;
}


std::optional<double> parse_line_time(std::string_view s, const TimeContext& ctx) {
  std::size_t pos = 0;
  // Skip a few wrappers: "<6>", "[", "[80746] ", "[rank0]:", "[1,0]<stdout>:".
  for (int round = 0; round < 4 && pos < s.size(); ++round) {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '[' || s[pos] == '|' || s[pos] == '\t')) ++pos;
    if (pos < s.size() && s[pos] == '<') {
      const std::size_t e = s.find('>', pos);
      if (e != std::string_view::npos && e - pos < 6) pos = e + 1;
    }
    if (pos + 4 <= s.size() && ci_equal(s.substr(pos, 4), "rank")) {
      const std::size_t e = s.find(']', pos);
      if (e == std::string_view::npos || e - pos > 12) break;
      pos = e + 1;
      if (pos < s.size() && s[pos] == ':') ++pos;
      continue;
    }
    if (pos < s.size() && is_digit(s[pos])) {
      if (auto t = iso_at(s, pos, ctx)) return t;
      std::size_t e = pos;
      while (e < s.size() && is_digit(s[e])) ++e;
      if (e < s.size() && s[e] == ']' && e - pos <= 8) {  // "[80746] " line counters
        pos = e + 1;
        continue;
      }
      break;
    }
    break;
  }
  if (pos < s.size()) {
    if (auto t = syslog_at(s, pos, ctx)) return t;
    // "Fri Aug 30 11:11:22 2024" (dmesg -T, ctime, mpirun --timestamp-output)
    if (pos + 4 < s.size() && s[pos + 3] == ' ' && std::isalpha(static_cast<unsigned char>(s[pos])))
      if (auto t = syslog_at(s, pos + 4, ctx)) return t;
    if (auto t = glog_at(s, pos, ctx)) return t;
  }
  return audit_time(s, ctx);
}

std::optional<double> parse_duration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double total = 0;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t start = pos;
    while (pos < s.size() && (is_digit(s[pos]) || s[pos] == '.')) ++pos;
    if (pos == start) return std::nullopt;
    double v = 0;
    try {
      v = std::stod(std::string(s.substr(start, pos - start)));
    } catch (...) {
      return std::nullopt;
    }
    double unit = 1;
    if (pos < s.size()) {
      switch (s[pos]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        case 'w': unit = 7 * 86400; break;
        default: return std::nullopt;
      }
      ++pos;
    } else if (start != 0) {
      return std::nullopt;  // "1h30" is ambiguous
    }
    total += v * unit;
  }
  if (!std::isfinite(total) || total < 0) return std::nullopt;
  return total;
}

std::string iso8601(double epoch_s) {
  const std::time_t t = static_cast<std::time_t>(std::floor(epoch_s));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

long local_utc_offset() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  return tm.tm_gmtoff;
}

}  // namespace nodeprobe::diag
