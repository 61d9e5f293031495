#include "normalise.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "nodeprobe/report.h"
#include "text_util.h"

namespace nodeprobe::diag {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }
bool alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool starts(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.compare(0, p.size(), p) == 0; }

// A JSON record somewhere in the line: the span from the first '{' to the last '}'.
std::string_view json_span(std::string_view line) {
  // Called on every candidate line: most hold no '{' at all, so that is
  // asked first, and the last '}' is found with memrchr, not a byte loop.
  const std::size_t a = line.find('{');
  if (a == std::string_view::npos) return {};
  const void* close = ::memrchr(line.data() + a, '}', line.size() - a);
  if (!close) return {};
  const std::size_t b = static_cast<std::size_t>(static_cast<const char*>(close) - line.data());
  return line.substr(a, b - a + 1);
}

bool looks_like_record(std::string_view line) {
  const std::string_view j = json_span(line);
  if (j.size() < 8) return false;
  for (const char* k : {"\"MESSAGE\"", "\"message\"", "\"msg\"", "\"log\""})
    if (j.find(k) != std::string_view::npos) return true;
  return false;
}

// Removes ANSI escape sequences (ESC [ ... final byte) and lone ESCs.
std::string strip_ansi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\x1b') {
      out += s[i];
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < s.size() && !(s[j] >= 0x40 && s[j] <= 0x7e)) ++j;
      i = j;
    }
  }
  return out;
}

// Where a Windows path starts at s[i]: a drive ("E:\dev", "C:/app", one
// backslash; an escaped text doubles it, "C:\\Users") or a UNC share
// ("\\server\share" after a space, a quote or '=').
bool windows_path_at(std::string_view s, std::size_t i) {
  if (i + 3 >= s.size()) return false;
  const auto alnum = [&](std::size_t k) { return std::isalnum(static_cast<unsigned char>(s[k])) != 0; };
  if (s[i + 1] == ':' && std::isalpha(static_cast<unsigned char>(s[i])) && (i == 0 || !alnum(i - 1)))
    return (s[i + 2] == '\\' && s[i + 3] != '\\' && s[i + 3] != '"') || (s[i + 2] == '/' && s[i + 3] != '/');
  if (s[i] != '\\' || s[i + 1] != '\\' || !alnum(i + 2)) return false;
  return i == 0 || (s[i - 1] != '\0' && std::strchr(" \t\"'=(", s[i - 1]) != nullptr);
}

// Splits at "#012", literal "\n", '\r' (keeping pieces), "#011" and "\t" as
// tabs. Inside a plain Windows path (up to its closing quote, or the next
// space or quote when unquoted) backslashes separate folders: the "\n" of
// "\native" is no escape. An escaped backslash ("\\") is kept whole, so a
// repr's "\\native" is no newline either.
void split_pieces(std::string_view s, std::vector<std::string>& out) {
  char path_end = 0;  // in a path: its closing quote, or ' ' for an unquoted one
  std::string cur;
  auto flush = [&] {
    std::size_t b = 0;
    while (b < cur.size() && (cur[b] == ' ' || cur[b] == '\t')) ++b;
    if (b < cur.size()) out.push_back(cur.substr(b));
    cur.clear();
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '#' && i + 3 < s.size() && s[i + 1] == '0' && s[i + 2] == '1' && (s[i + 3] == '2' || s[i + 3] == '1')) {
      if (s[i + 3] == '2') flush();
      else cur += '\t';
      i += 3;
    } else if (path_end) {
      if (c == path_end || (path_end == ' ' && (c == ' ' || c == '\t' || c == '"' || c == '\''))) path_end = 0;
      if (c == '\r' || c == '\n') {
        path_end = 0;
        flush();
      } else {
        cur += c;
      }
    } else if (windows_path_at(s, i)) {
      path_end = i > 0 && (s[i - 1] == '"' || s[i - 1] == '\'') ? s[i - 1] : ' ';
      cur += c;
    } else if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\\') {
      cur += "\\\\";
      ++i;
    } else if (c == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == 't' || s[i + 1] == 'r')) {
      if (s[i + 1] == 't') cur += '\t';
      else flush();
      ++i;
    } else if (c == '\r' || c == '\n') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
}

std::optional<double> record_time(const Json& j) {
  if (j.contains("__REALTIME_TIMESTAMP")) {
    const Json& v = j.at("__REALTIME_TIMESTAMP");
    try {
      const double us = v.is_string() ? std::stod(v.get<std::string>()) : v.is_number() ? v.get<double>() : -1;
      if (us > 0) return us / 1e6;
    } catch (...) {
    }
  }
  for (const char* k : {"time", "timestamp", "@timestamp", "ts"}) {
    if (!j.contains(k) || !j.at(k).is_string()) continue;
    TimeContext ctx;  // records carry their zone ('Z' or an offset)
    if (auto t = parse_line_time(j.at(k).get<std::string>(), ctx)) return t;
  }
  return std::nullopt;
}

std::string record_message_field(const Json& j) {
  for (const char* k : {"MESSAGE", "message", "msg", "log", "text"}) {
    if (!j.contains(k)) continue;
    const Json& v = j.at(k);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {  // journald writes non-UTF-8 messages as byte arrays
      std::string s;
      for (const auto& b : v)
        if (b.is_number_integer()) s += static_cast<char>(b.get<int>());
      return s;
    }
  }
  return {};
}

// The record's message, and its error field where structured loggers (zap,
// logrus, slog: gpud, dcgm-exporter, the GPU Operator) keep the failure's
// text apart from the message ({"msg":"device memory info failed",
// "error":"GPU is lost"}), as logfmt prints it: msg error="...".
//
// An event's own message can sit in an object under the record (a node
// problem detector's "msg":"NPD caught event: %v" with the Xid line in
// "details":{"message":...}): the message of each object field, two levels
// down, follows as a line of its own.
std::string record_message(const Json& j, int depth = 0) {
  std::string m = record_message_field(j);
  if (m.empty()) return m;
  for (const char* k : {"error", "err"}) {
    if (!j.contains(k) || !j.at(k).is_string()) continue;
    const std::string e = j.at(k).get<std::string>();
    if (!e.empty() && m.find(e) == std::string::npos) m += " error=\"" + e + "\"";
    break;
  }
  if (depth < 2)
    for (const auto& [key, v] : j.items()) {
      if (!v.is_object()) continue;
      const std::string n = record_message(v, depth + 1);
      if (!n.empty() && m.find(n) == std::string::npos) m += "\n" + n;
    }
  return m;
}

// "HH:MM:SS" at s[p]; advances p past it and an optional fraction.
bool clock_at(std::string_view s, std::size_t& p) {
  if (p + 8 > s.size() || !digit(s[p]) || !digit(s[p + 1]) || s[p + 2] != ':' || !digit(s[p + 3]) ||
      !digit(s[p + 4]) || s[p + 5] != ':' || !digit(s[p + 6]) || !digit(s[p + 7]))
    return false;
  p += 8;
  if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
    ++p;
    while (p < s.size() && digit(s[p])) ++p;
  }
  return true;
}

bool month_at(std::string_view s, std::size_t p) {
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (p + 4 > s.size() || s[p + 3] != ' ') return false;
  for (const char* m : kMonths)
    if (s.compare(p, 3, m) == 0) return true;
  return false;
}

// Length of a timestamp at the start of s (ISO, syslog, ctime), 0 if none.
std::size_t timestamp_len(std::string_view s) {
  std::size_t p = 0;
  // ISO 8601 / python logging: 2024-01-01[T ]00:00:00[.,fff][Z|+hh:mm|+hhmm]
  if (s.size() >= 19 && digit(s[0]) && digit(s[1]) && digit(s[2]) && digit(s[3]) && s[4] == '-' && s[7] == '-' &&
      (s[10] == 'T' || s[10] == ' ' || (s[10] == ',' && s[11] == ' '))) {  // Airflow: "2024-05-01, 10:00:00 UTC"
    p = s[10] == ',' ? 12 : 11;
    if (!clock_at(s, p)) return 0;
    if (p < s.size() && s[p] == 'Z') ++p;
    else if (p < s.size() && (s[p] == '+' || s[p] == '-') && p + 3 <= s.size() && digit(s[p + 1])) {
      ++p;
      while (p < s.size() && (digit(s[p]) || s[p] == ':')) ++p;
    }
    return p;
  }
  // Numeric dates with slashes: "2024/05/01 10:00:00" (Go's log, MLflow), "05/01/2024 10:00:00"
  // (transformers' example scripts), "05/01/24 10:00:00" (rich), "24/05/01 10:00:00" (log4j's
  // default layout in Spark).
  {
    std::size_t a = 0;
    while (a < s.size() && a < 5 && digit(s[a])) ++a;
    if ((a == 2 || a == 4) && a + 1 < s.size() && s[a] == '/') {
      std::size_t b = a + 1;
      while (b < s.size() && b - a - 1 < 3 && digit(s[b])) ++b;
      if (b - a - 1 == 2 && b < s.size() && s[b] == '/') {
        std::size_t c = b + 1;
        while (c < s.size() && c - b - 1 < 5 && digit(s[c])) ++c;
        if ((c - b - 1 == 2 || c - b - 1 == 4) && c < s.size() && s[c] == ' ') {
          p = c + 1;
          return clock_at(s, p) ? p : 0;
        }
      }
    }
  }
  // ctime: "Mon Jan  1 00:00:00 2024"; syslog: "Jan  1 00:00:00"
  std::size_t q = 0;
  if (s.size() > 4 && alpha(s[0]) && alpha(s[1]) && alpha(s[2]) && s[3] == ' ' && month_at(s, 4)) q = 4;
  if (!month_at(s, q)) return 0;
  p = q + 4;
  while (p < s.size() && s[p] == ' ') ++p;
  while (p < s.size() && digit(s[p])) ++p;
  if (p >= s.size() || s[p] != ' ') return 0;
  ++p;
  if (!clock_at(s, p)) return 0;
  if (p + 5 <= s.size() && s[p] == ' ' && digit(s[p + 1]) && digit(s[p + 2]) && digit(s[p + 3]) && digit(s[p + 4]) &&
      (p + 5 == s.size() || !digit(s[p + 5])))
    p += 5;
  return p;
}

// A token "word:" or "word[123]:" (program name), length including ':' or 0.
std::size_t program_len(std::string_view s) {
  if (s.empty() || s[0] == '{' || s[0] == '"') return 0;  // a JSON record, not a program
  std::size_t p = 0;
  while (p < s.size() && p < 64 && s[p] != ' ' && s[p] != ':' && s[p] != '[') ++p;
  if (p == 0 || p >= s.size()) return 0;
  if (s[p] == '[') {
    const std::size_t e = s.find(']', p);
    if (e == std::string_view::npos || e - p > 12) return 0;
    p = e + 1;
  }
  // "prog:" ends a tag; "name::" is a scope or a pytest node id ("tests/test_x.py::test_y"), not a program
  if (p < s.size() && s[p] == ':' && (p + 1 >= s.size() || s[p + 1] != ':')) return p + 1;
  return 0;
}

std::size_t skip_spaces(std::string_view s, std::size_t p) {
  while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) ++p;
  return p;
}

// Ray's prefix on a worker's output as the driver prints it: "(Name pid=1234,
// ip=10.0.0.1) ", "(pid=1234) ", "(raylet) ", "(raylet, ip=10.0.0.1) ".
std::size_t ray_prefix_len(std::string_view s) {
  if (s.size() < 8 || s[0] != '(') return 0;
  const std::size_t e = s.find(')');
  if (e == std::string_view::npos || e > 160 || e + 1 >= s.size() || s[e + 1] != ' ') return 0;
  const std::string_view in = s.substr(1, e - 1);
  if (in == "raylet" || starts(in, "raylet, ip=")) return e + 2;
  const std::size_t pid = in.find("pid=");
  if (pid == std::string_view::npos || (pid > 0 && in[pid - 1] != ' ')) return 0;
  if (pid > 0 && in.substr(0, pid - 1).find(' ') != std::string_view::npos) return 0;  // one name, no spaces
  std::size_t q = pid + 4;
  if (q >= in.size() || !digit(in[q])) return 0;
  while (q < in.size() && digit(in[q])) ++q;
  return q == in.size() || starts(in.substr(q), ", ip=") ? e + 2 : 0;
}

bool level_name(std::string_view w) {
  for (const char* l : {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL"})
    if (w == l) return true;
  return false;
}

// Length of a log level's name (level_name) at s[p] in capitals, or 0.
std::size_t level_at(std::string_view s, std::size_t p) {
  std::size_t w = p;
  while (w < s.size() && w - p < 9 && s[w] >= 'A' && s[w] <= 'Z') ++w;
  return w > p && level_name(s.substr(p, w - p)) ? w - p : 0;
}

// One wrapper at the start of s, or 0. `mid`, when given, receives up to two
// points inside it where the message may already begin (after a timestamp,
// after a host or log-stream name): the word after them may be the program
// or the message's own first word.
std::size_t wrapper_len(std::string_view s, std::size_t* mid = nullptr) {
  if (s.empty()) return 0;
  // A UTF-8 byte order mark (a file saved by a Windows editor).
  if (starts(s, "\xEF\xBB\xBF")) return 3;
  // A colour code before the text (ESC [ ... m).
  if (s[0] == '\x1b' && s.size() > 2 && s[1] == '[') {
    std::size_t p = 2;
    while (p < s.size() && p < 16 && (digit(s[p]) || s[p] == ';')) ++p;
    if (p < s.size() && s[p] == 'm') return p + 1;
  }
  // A quoted log (Markdown, e-mail): "> ".
  if (s[0] == '>' && s.size() > 1 && s[1] == ' ') return 2;
  // journalctl -o verbose: the message field, indented.
  if (starts(s, "MESSAGE=")) return 8;
  if (s[0] == '(') return ray_prefix_len(s);
  // Table cells of a console paste (CloudWatch, Grafana): "| 2025-05-16T16:39:55.214-07:00 | "
  if (s[0] == '|' && s.size() > 2 && s[1] == ' ') return 2;
  // <6> syslog/kmsg priority
  if (s[0] == '<') {
    std::size_t p = 1;
    while (p < s.size() && p < 5 && digit(s[p])) ++p;
    if (p > 1 && p < s.size() && s[p] == '>') return p + 1;
  }
  if (s[0] == '[') {
    const std::size_t e = s.find(']');
    if (e != std::string_view::npos && e < 48) {
      const std::string_view in = s.substr(1, e - 1);
      std::size_t after = e + 1;
      if (after < s.size() && s[after] == ':') ++after;
      // [  123.456789] dmesg; [Mon Jan  1 00:00:00 2024] dmesg -T
      const std::size_t b = skip_spaces(in, 0);
      bool secs = b < in.size();
      for (std::size_t i = b; i < in.size(); ++i) secs &= digit(in[i]) || in[i] == '.';
      if (secs || (timestamp_len(in) == in.size() && !in.empty())) return after;
      // A stamp and a few words: "[2024-05-01 10:00:00 TP0] " (SGLang), "[2024-05-01 10:00:00
      // +0000] " (gunicorn), "[2024-05-01, 10:00:00 UTC] " (Airflow)
      if (const std::size_t ts = timestamp_len(in); ts > 0 && in.size() - ts <= 24) return after;
      // A source position: "[launch.py:321:sigkill_handler] " (DeepSpeed), "[core.py:100] " (vLLM)
      if (const std::size_t c = in.find(':'); c != std::string_view::npos && c > 2 && c + 1 < in.size() &&
                                              digit(in[c + 1]) && in.find(' ') == std::string_view::npos) {
        const std::size_t dot = in.rfind('.', c);
        if (dot != std::string_view::npos && dot + 1 < c && alpha(in[dot + 1])) return after;
      }
      // Hydra's "[%(asctime)s][%(name)s][%(levelname)s] - ": a logger name right before a level's bracket
      if (after < s.size() && s[after] == '[' && !in.empty() && in.size() < 64 && in.find(' ') == std::string_view::npos) {
        const std::size_t e2 = s.find(']', after);
        if (e2 != std::string_view::npos && level_name(s.substr(after + 1, e2 - after - 1))) return after;
      }
      // [rank0]: [rank 3]: [default0]: [1,0]<stdout>: [pod/name/container]
      if (starts(in, "rank") || starts(in, "default") || starts(in, "pod/")) return after;
      // ... and Open MPI's --tag-output with names, as SageMaker runs it: [1,mpirank:0,algo-1]<stderr>:
      const bool named_tag = !in.empty() && digit(in[0]) && after < s.size() && s.compare(after, 4, "<std") == 0 &&
                             in.find(' ') == std::string_view::npos;
      if (!in.empty() && digit(in[0]) && (named_tag || in.find_first_not_of("0123456789,") == std::string_view::npos)) {
        if (after < s.size() && s[after] == '<') {
          const std::size_t g = s.find('>', after);
          if (g != std::string_view::npos && g - after < 10) after = g + 1;
          if (after < s.size() && s[after] == ':') ++after;
        }
        return after;
      }
      // [E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] glog
      if (in.size() > 6 && std::strchr("IWEF", in[0]) && digit(in[1])) return after;
      // [E 2024-05-01 10:00:00.123 ServerApp] Jupyter Server, [I 10:00:00.123 NotebookApp]
      // the notebook, [W 240501 10:00:00 web:2246] tornado: traitlets' and tornado's
      // LogFormatter "[%(levelname)1.1s %(asctime)s %(name)s]"; NeMo's the same after its
      // name: "[NeMo E 2024-05-01 10:00:00 train:10] "
      const std::string_view letter = starts(in, "NeMo ") ? in.substr(5) : in;
      if (letter.size() > 4 && letter[0] != '\0' && std::strchr("DIWEC", letter[0]) && letter[1] == ' ' &&
          digit(letter[2]))
        return after;
      // [INFO ] [ERROR] log4j's padded "%-5p" (TorchServe, Spark, Java services), then its
      // "%t %c - " (thread, logger): "[INFO ] W-9000-model_1.0-stdout MODEL_LOG - "
      if (const std::size_t lv = level_at(in, 0); lv && in.find_first_not_of(' ', lv) == std::string_view::npos) {
        if (mid) mid[0] = after;
        std::size_t q = skip_spaces(s, after);
        if (s.compare(q, 2, "- ") == 0) return q + 2;  // Hydra's "[ERROR] - "
        for (int tok = 0; tok < 2; ++tok) {
          const std::size_t w = q;
          while (q < s.size() && q - w < 128 && s[q] != ' ') ++q;
          if (q == w || q >= s.size() || s[q] != ' ') return after;
          if (tok == 0) q = skip_spaces(s, q);
        }
        return s.compare(q, 3, " - ") == 0 ? q + 3 : after;
      }
    }
  }
  // dmesg -x: "kern  :err   : "
  {
    std::size_t p = 0;
    while (p < s.size() && p < 8 && alpha(s[p])) ++p;
    if (p >= 3) {
      std::size_t q = skip_spaces(s, p);
      if (q < s.size() && s[q] == ':') {
        q = skip_spaces(s, q + 1);
        std::size_t r = q;
        while (r < s.size() && r - q < 8 && alpha(s[r])) ++r;
        if (r > q) {
          std::size_t t = skip_spaces(s, r);
          if (t < s.size() && s[t] == ':' && t + 1 < s.size() && s[t + 1] == ' ') return t + 1;
        }
      }
    }
  }
  // A level word first. vLLM's "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] " with
  // "%m-%d %H:%M:%S" (older "file.py:100] "), each line of a multi-line message headed alike;
  // loguru's padded "ERROR    | __main__:main:10 - "; rich's level padded to its column.
  if (const std::size_t w = level_at(s, 0)) {
    std::size_t p = w + 7;
    if (w + 16 <= s.size() && s[w] == ' ' && digit(s[w + 1]) && digit(s[w + 2]) && s[w + 3] == '-' &&
        digit(s[w + 4]) && digit(s[w + 5]) && s[w + 6] == ' ' && clock_at(s, p)) {
      if (mid) mid[0] = p;
      p = skip_spaces(s, p);
      const std::size_t e = s.find("] ", p);
      if (e != std::string_view::npos && e - p < 80 && s.substr(p, e - p).find(' ') == std::string_view::npos)
        return e + 2;
      return p;
    }
    p = skip_spaces(s, w);
    if (p + 1 < s.size() && s[p] == '|' && s[p + 1] == ' ') {
      const std::size_t q = p + 2, d = s.find(" - ", q);
      if (d != std::string_view::npos && d - q < 128 && s.substr(q, d - q).find(' ') == std::string_view::npos)
        return d + 3;
      return q;
    }
    if (p >= 9 && p > w && p < s.size()) return p;
  }
  // Airflow's task log "{taskinstance.py:1234} ERROR - " (after its bracketed time)
  if (s[0] == '{' && s.size() > 4 && s[1] != '"') {
    const std::size_t e = s.find("} ");
    if (e != std::string_view::npos && e < 80 && s.substr(1, e - 1).find(' ') == std::string_view::npos &&
        s.substr(1, e - 1).find(':') != std::string_view::npos) {
      const std::size_t lv = level_at(s, e + 2);
      if (lv && s.compare(e + 2 + lv, 3, " - ") == 0) return e + 2 + lv + 3;
    }
  }
  // Timestamps, then "host prog[pid]:" or "prog:" or containerd "stdout F"
  if (const std::size_t t = timestamp_len(s)) {
    std::size_t p = skip_spaces(s, t);
    if (p + 1 < s.size() && s[p] == '|' && s[p + 1] == ' ') return p + 2;  // "ts | message"
    // TensorFlow's C++ logging after its stamp: "2024-05-01 10:00:00.123456: E tensorflow/core/x.cc:10] "
    if (p + 4 < s.size() && s[p] == ':' && s[p + 1] == ' ' && std::strchr("IWEF", s[p + 2]) && s[p + 2] != '\0' &&
        s[p + 3] == ' ') {
      const std::size_t e = s.find("] ", p + 4);
      if (e != std::string_view::npos && e - p < 200) return e + 2;
    }
    // Python logging "%(asctime)s - %(name)s - %(levelname)s - %(message)s":
    // words between " - " up to the level name.
    if (p + 1 < s.size() && s[p] == '-' && s[p + 1] == ' ') {
      std::size_t q = p + 2, level_end = 0;
      for (int k = 0; k < 3; ++k) {
        const std::size_t dash = s.find(" - ", q);
        if (dash == std::string_view::npos || dash - q > 64) break;
        const std::string_view w = s.substr(q, dash - q);
        if (w.find(' ') != std::string_view::npos) break;
        q = dash + 3;
        if (level_name(w)) level_end = q;
        // transformers' examples put the level first: "%(asctime)s - %(levelname)s - %(name)s - ":
        // the word after the level may be the logger's name
        else if (level_end && k == 1 && mid) mid[0] = q;
      }
      if (level_end) return level_end;
    }
    if (mid) mid[0] = p;
    const std::string_view rest = s.substr(p);
    if ((starts(rest, "stdout ") || starts(rest, "stderr ")) && rest.size() > 9 && rest[8] == ' ' &&
        (rest[7] == 'F' || rest[7] == 'P'))
      return p + 9;
    if (const std::size_t prog = program_len(rest)) return p + prog;
    // host then program
    std::size_t h = 0;
    while (h < rest.size() && rest[h] != ' ' && h < 128) ++h;
    if (h > 0 && h < rest.size()) {
      const std::size_t q = skip_spaces(rest, h);
      if (mid) mid[1] = p + q;  // a host, or a log stream (aws logs tail), before the message
      if (const std::size_t prog = program_len(rest.substr(q))) return p + q + prog;
    }
    return p;
  }
  // glog without brackets: "E1206 18:44:12.715298 123 file.cc:607] "
  if (s.size() > 6 && std::strchr("IWEF", s[0]) && digit(s[1]) && digit(s[2]) && digit(s[3])) {
    const std::size_t e = s.find("] ");
    if (e != std::string_view::npos && e < 80) return e + 2;
  }
  // NCCL: "host:1234:5678 [0] "
  {
    const std::size_t sp = s.find(' ');
    if (sp != std::string_view::npos && sp < 128 && sp + 3 < s.size() && s[sp + 1] == '[') {
      const std::string_view tok = s.substr(0, sp);
      const std::size_t c2 = tok.rfind(':');
      const std::size_t c1 = c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : tok.rfind(':', c2 - 1);
      if (c1 != std::string_view::npos && c2 > c1 + 1 && c2 + 1 < tok.size() &&
          tok.substr(c1 + 1, c2 - c1 - 1).find_first_not_of("0123456789") == std::string_view::npos &&
          tok.substr(c2 + 1).find_first_not_of("0123456789") == std::string_view::npos) {
        const std::size_t e = s.find(']', sp);
        if (e != std::string_view::npos && e - sp < 8) return e + 1;
      }
    }
  }
  // srun --label "12: " and docker compose "svc-1  | "
  {
    std::size_t p = 0;
    while (p < s.size() && p < 6 && digit(s[p])) ++p;
    if (p > 0 && p + 1 < s.size() && s[p] == ':' && s[p + 1] == ' ') return p + 2;
    p = 0;
    while (p < s.size() && p < 64 && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '-' || s[p] == '_' || s[p] == '.')) ++p;
    if (p > 0) {
      const std::size_t q = skip_spaces(s, p);
      if (q > p && q + 1 < s.size() && s[q] == '|' && s[q + 1] == ' ') return q + 2;
    }
  }
  return 0;
}

// A prefix that may be a wrapper or the message's own first word, tried as a
// start for the anchored patterns only (message_body keeps it): Python
// logging's default "%(levelname)s:%(name)s:" ("ERROR:root:"), pdsh's
// "host: " (DeepSpeed's multi-node launcher), a program or label "word: ",
// pytest's failure marker "E   " before each line of an exception
// (_pytest/_code/code.py: "E" and spaces to the indent), and the left border
// "│ " of a panel that rich and typer draw around a traceback.
std::size_t soft_wrapper_len(std::string_view s) {
  if (s.size() > 2 && s[0] == 'E' && s[1] == ' ') {  // pytest; one space where a page collapsed the run
    std::size_t p = 1;
    while (p < s.size() && s[p] == ' ') ++p;
    if (p < s.size() && s[p] >= 'A' && s[p] <= 'Z') return p;
  }
  if (starts(s, "\xE2\x94\x82 ")) return 4;  // U+2502 BOX DRAWINGS LIGHT VERTICAL
  std::size_t p = level_at(s, 0);
  if (p && p < s.size() && s[p] == ':') {
    std::size_t q = p + 1;
    while (q < s.size() && q - p < 128 && s[q] != ':' && s[q] != ' ') ++q;
    if (q > p + 1 && q < s.size() && s[q] == ':') return q + 1;
  }
  p = 0;
  while (p < s.size() && p < 64 && (alpha(s[p]) || digit(s[p]) || s[p] == '-' || s[p] == '_' || s[p] == '.')) ++p;
  if (p > 0 && p + 1 < s.size() && s[p] == ':' && s[p + 1] == ' ') return p + 2;
  return 0;
}

}  // namespace

std::size_t message_starts(std::string_view line, std::string_view* out, std::size_t max) {
  std::size_t n = 0;
  auto push = [&](std::string_view v) {
    while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.remove_suffix(1);
    if (v.empty() || v.size() >= line.size() || n >= max) return;
    for (std::size_t i = 0; i < n; ++i)
      if (out[i].data() == v.data()) return;
    out[n++] = v;
  };
  std::string_view s = line;
  for (int round = 0; round < 8; ++round) {
    s.remove_prefix(skip_spaces(s, 0));
    push(s);
    std::size_t mid[2] = {0, 0};
    std::size_t k = wrapper_len(s, mid);
    for (const std::size_t m : mid)
      if (m > 0 && m < s.size()) {
        const std::string_view at = s.substr(skip_spaces(s, m));
        push(at);
        // A soft wrapper right after a host or stream name ("stream E   KeyError: ...").
        if (const std::size_t soft = soft_wrapper_len(at); soft > 0 && soft < at.size())
          push(at.substr(skip_spaces(at, soft)));
      }
    if (k == 0) k = soft_wrapper_len(s);
    if (k == 0 || k >= s.size()) break;
    s.remove_prefix(k);
  }
  s.remove_prefix(skip_spaces(s, 0));
  push(s);
  return n;
}

namespace {

// The entity at s[i] ('&'), decoded, and its length; 0 when it is none of
// those a web page writes for log text (&lt; &gt; &amp; &quot; &#39; ...).
std::size_t entity_at(std::string_view s, std::size_t i, char* out) {
  static const struct {
    const char* name;
    char c;
  } kEntities[] = {{"&lt;", '<'},   {"&gt;", '>'},   {"&amp;", '&'},  {"&quot;", '"'},  {"&#39;", '\''},
                   {"&#34;", '"'},  {"&apos;", '\''}, {"&#x27;", '\''}, {"&#x22;", '"'}, {"&nbsp;", ' '}};
  for (const auto& e : kEntities) {
    const std::size_t n = std::strlen(e.name);
    if (s.compare(i, n, e.name) == 0) {
      *out = e.c;
      return n;
    }
  }
  return 0;
}

// The typographic character at s[i] (UTF-8) that stands for an ASCII one,
// decoded, and its length; 0 when there is none. Text copied from a
// rendered web page, a forum editor, a word processor or a chat client
// carries curly quotes where the program printed ' and " (U+2018 in
// "couldn't", U+201C and U+201D around a name), primes and the acute
// accent for apostrophes, U+00A0 where the page had &nbsp;, and the
// fullwidth forms of ASCII a CJK input method types.
std::size_t typographic_at(std::string_view s, std::size_t i, char* out) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (i + 1 < s.size() && byte(0) == 0xC2) {
    if (byte(1) == 0xA0) *out = ' ';          // U+00A0 no-break space
    else if (byte(1) == 0xB4) *out = '\'';    // U+00B4 acute accent
    else return 0;
    return 2;
  }
  if (i + 2 >= s.size()) return 0;
  // Fullwidth forms U+FF01-U+FF5E (EF BC 81 .. EF BD 9E) are ASCII 0x21-0x7E
  // typed by a CJK input method ("Out of memory：Killed process 217423（python）"),
  // and U+3000 is its space.
  if (byte(0) == 0xEF && (byte(1) == 0xBC || byte(1) == 0xBD)) {
    const unsigned cp = 0xFF00u + (byte(1) == 0xBC ? 0u : 0x40u) + (byte(2) & 0x3Fu);
    if ((byte(2) & 0xC0) != 0x80 || cp < 0xFF01 || cp > 0xFF5E) return 0;
    *out = static_cast<char>(cp - 0xFF01 + 0x21);
    return 3;
  }
  if (byte(0) == 0xE3 && byte(1) == 0x80 && byte(2) == 0x80) {
    *out = ' ';
    return 3;
  }
  if (byte(0) != 0xE2 || byte(1) != 0x80) return 0;
  const unsigned char b = byte(2);
  if (b >= 0x98 && b <= 0x9B) *out = '\'';     // U+2018-U+201B single quotation marks
  else if (b >= 0x9C && b <= 0x9F) *out = '"';  // U+201C-U+201F double quotation marks
  else if (b == 0xB2) *out = '\'';              // U+2032 prime
  else if (b == 0xB3) *out = '"';               // U+2033 double prime
  else return 0;
  return 3;
}

// An HTML entity or a typographic stand-in at s[i], decoded, and its length.
std::size_t encoded_at(std::string_view s, std::size_t i, char* out) {
  return s[i] == '&' ? entity_at(s, i, out) : typographic_at(s, i, out);
}

bool has_entity(std::string_view s) {
  char c;
  // One memchr pass per byte that can begin one (most lines hold none).
  for (const char lead : {'&', '\xC2', '\xE2', '\xE3', '\xEF'})
    for (std::size_t i = s.find(lead); i != std::string_view::npos; i = s.find(lead, i + 1))
      if (encoded_at(s, i, &c)) return true;
  return false;
}

// The text with its HTML entities and typographic stand-ins decoded.
std::string decode_entities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c;
    const std::size_t n = encoded_at(s, i, &c);
    if (n) {
      out += c;
      i += n - 1;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string_view ascii_spaces(std::string_view block, std::string* storage) {
  static constexpr std::string_view kNbsp = "\xC2\xA0";
  std::size_t at = block.find(kNbsp);
  if (at == std::string_view::npos) return block;
  storage->clear();
  storage->reserve(block.size());
  std::size_t from = 0;
  for (; at != std::string_view::npos; at = block.find(kNbsp, from)) {
    storage->append(block.substr(from, at - from));
    *storage += ' ';
    from = at + kNbsp.size();
  }
  storage->append(block.substr(from));
  return *storage;
}

bool needs_unwrap(std::string_view line) {
  if (line.find('\x1b') != std::string_view::npos || line.find("#012") != std::string_view::npos ||
      line.find("#011") != std::string_view::npos || line.find("\\n") != std::string_view::npos)
    return true;
  const std::size_t cr = line.find('\r');
  if (cr != std::string_view::npos && cr + 1 < line.size()) return true;
  return looks_like_record(line) || has_entity(line);
}

bool is_json_record(std::string_view line) { return looks_like_record(line); }

std::vector<std::string> unwrap(std::string_view line, std::optional<double>* time) {
  std::vector<std::string> out;
  std::string text, decoded;
  if (has_entity(line)) {  // a web page's text: entities first, then what they encoded
    decoded = decode_entities(line);
    line = decoded;
  }
  if (looks_like_record(line)) {
    const Json j = Json::parse(json_span(line), nullptr, false);
    if (j.is_object()) {
      text = record_message(j);
      if (time) *time = record_time(j);
    }
    // A JSON logger's record carried inside another (etcd's or mongod's JSON
    // line in journald's or docker's record): the inner message.
    for (int depth = 0; depth < 2 && !text.empty() && looks_like_record(text); ++depth) {
      const Json inner = Json::parse(json_span(text), nullptr, false);
      if (!inner.is_object()) break;
      std::string m = record_message(inner);
      if (m.empty()) break;
      if (time && !*time) *time = record_time(inner);
      text = std::move(m);
    }
  }
  if (text.empty()) text.assign(line);
  if (decoded.empty() && has_entity(text)) text = decode_entities(text);
  if (text.find('\x1b') != std::string::npos) text = strip_ansi(text);
  split_pieces(text, out);
  return out;
}

std::string_view message_body(std::string_view line) {
  std::string_view s = line;
  for (int round = 0; round < 8; ++round) {
    const std::size_t b = skip_spaces(s, 0);
    s.remove_prefix(b);
    const std::size_t n = wrapper_len(s);
    if (n == 0 || n >= s.size()) break;
    s.remove_prefix(n);
  }
  s.remove_prefix(skip_spaces(s, 0));
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  return s.empty() ? line : s;
}

std::string_view strip_wrappers(std::string_view line) {
  std::string_view s = line;
  const std::size_t first = skip_spaces(s, 0);
  // A table's row ("| 0  NVIDIA H100 ... |"), not a console table's time cell ("| 2024-... | ").
  if (first < s.size() && s[first] == '|' && !timestamp_len(s.substr(skip_spaces(s, first + 1)))) return line;
  for (int round = 0; round < 8; ++round) {
    const std::size_t b = skip_spaces(s, 0);
    const std::size_t n = wrapper_len(s.substr(b));
    if (n == 0 || b + n >= s.size()) break;
    s.remove_prefix(b + n);
  }
  // A colour reset at the end of a coloured line.
  if (s.size() > 3 && s.compare(s.size() - 3, 3, "\x1b[m") == 0) s.remove_suffix(3);
  else if (s.size() > 4 && s.compare(s.size() - 4, 4, "\x1b[0m") == 0) s.remove_suffix(4);
  if (s.data() != line.data() && s[0] == ' ' && s.data()[-1] != ' ') s.remove_prefix(1);  // the wrapper's own separator
  // A whole line in a Markdown code span, as a thread quotes one message:
  // "`ImportError: cannot import name ...`" (not a fence: "```").
  std::size_t end = s.size();
  while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\r')) --end;
  if (end > 2 && s[0] == '`' && s[end - 1] == '`' && s[1] != '`') s = s.substr(1, end - 2);
  return s;
}

std::string evidence_display(std::string_view text, std::size_t max_bytes) {
  const std::string_view body = message_body(text);
  if (body.size() <= max_bytes) return std::string(body);
  std::size_t cut = max_bytes;
  while (cut > max_bytes / 2 && body[cut] != ' ' && body[cut] != ',') --cut;
  if (cut <= max_bytes / 2) cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(body[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return std::string(body.substr(0, cut)) + " ...";
}

namespace {

// Would a line starting like this be a new log line rather than the tail of a wrapped one?
bool starts_new_line(std::string_view s) {
  if (s.empty()) return true;
  const char c = s[0];
  if (c == '[' || c == '|' || c == '+' || c == '#') return true;
  // "<3>" (a /dev/kmsg priority) and '{"' (a JSON record) begin lines; a
  // bare '<' or '{' is as often the middle of a message cut at the
  // terminal's width ("driver 7.0 " / "< image 7.5", "IOError(Os " / "{ code: 11").
  if (c == '<') {
    std::size_t i = 1;
    while (i < s.size() && i < 4 && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > 1 && i < s.size() && s[i] == '>';
  }
  if (c == '{') {
    const std::size_t i = s.find_first_not_of(' ', 1);
    return i != std::string_view::npos && s[i] == '"';
  }
  if (timestamp_len(s) > 0) return true;
  return false;
}

// Calls fn(index, offset, line) for each line of `block`, the line without
// its newline and a trailing '\r'.
template <typename Fn>
void for_each_line(std::string_view block, Fn fn) {
  long index = 0;
  for (std::size_t pos = 0; pos < block.size(); ++index) {
    const void* nl = std::memchr(block.data() + pos, '\n', block.size() - pos);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - block.data()) : block.size();
    std::string_view line = block.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(index, pos, line);
    pos = end + 1;
  }
}

bool ends_table(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  if (s.empty()) return true;
  const char c = s.back();
  if (c == '|' || c == '+') return true;
  // A rule of dashes or equals signs ends in two of them; one is as often a
  // message cut at the terminal's width ("... exited, code=" / "killed, ...").
  return (c == '-' || c == '=') && s.size() >= 2 && s[s.size() - 2] == c;
}

// "[10.0.0.2]:29500" or "[fe80::1%eth0]:29500": an endpoint in brackets,
// which gloo, c10d and others print, can open the piece after a soft wrap
// ("... connect " / "[10.0.0.2]:29500: Connection refused"), where a prefix
// such as "[rank0]: " or "[12.345]" never has a port after its bracket.
bool bracketed_endpoint(std::string_view s) {
  if (s.size() < 5 || s[0] != '[') return false;
  const std::size_t close = s.find(']');
  if (close == std::string_view::npos || close < 3 || close > 64 || close + 2 >= s.size()) return false;
  if (s.substr(1, close - 1).find_first_of(" \t") != std::string_view::npos) return false;
  return s[close + 1] == ':' && digit(s[close + 2]);
}

}  // namespace

std::vector<WrapRun> wrap_runs(std::string_view block) {
  std::vector<WrapRun> runs;
  // Pass 1: the longest line and how many lines have exactly that length;
  // whether any line ends in a space (a soft wrap a terminal copy leaves).
  std::size_t max_len = 0, at_max = 0, soft = 0;
  for_each_line(block, [&](long, std::size_t, std::string_view line) {
    const std::size_t len = line.size();
    if (len >= 40 && line.back() == ' ') ++soft;
    if (len > max_len) {
      max_len = len;
      at_max = 1;
    } else if (len == max_len) {
      ++at_max;
    }
  });
  const bool fixed_width = max_len >= 60 && max_len <= 1024 && at_max >= 3;
  if (!fixed_width && soft == 0) return runs;
  // Pass 2: full-width lines followed by their continuation.
  WrapRun cur;
  bool cur_soft = false;  // the run's last piece was cut after a space
  for_each_line(block, [&](long index, std::size_t pos, std::string_view line) {
    // A piece of a wrapped line: full width, or cut after a space mid-sentence.
    const bool soft_cut = line.size() >= 40 && line.back() == ' ' && !ends_table(line);
    const bool full = (fixed_width && line.size() == max_len && !ends_table(line)) || soft_cut;
    if (cur.lines > 0) {
      if (!starts_new_line(line) || (cur_soft && bracketed_endpoint(line))) {
        cur.text.append(line);
        ++cur.lines;
        cur_soft = soft_cut;
        if (!full) {
          runs.push_back(std::move(cur));
          cur = WrapRun{};
        }
      } else {
        if (cur.lines > 1) runs.push_back(std::move(cur));
        cur = WrapRun{};
      }
    }
    if (cur.lines == 0 && full) {
      cur.first_offset = pos;
      cur.first_line = index;
      cur.lines = 1;
      cur.text.assign(line);
      cur_soft = soft_cut;
    }
  });
  if (cur.lines > 1) runs.push_back(std::move(cur));
  return runs;
}

std::vector<WrapRun> sentence_runs(std::string_view block) {
  std::vector<WrapRun> runs;
  std::string_view prev;  // the previous line, when it ends mid-sentence
  std::size_t prev_offset = 0;
  for_each_line(block, [&](long index, std::size_t pos, std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (!prev.empty() && !line.empty()) {
      // The continuation: no record start (prefix, timestamp, bracket, a
      // first word with a colon such as "file.cc:87" or "libfabric:pid:"),
      // no wrapper message_body would strip, and it goes on in lower case
      // or with a path, as the rest of a sentence does.
      std::string_view rest = line.substr(skip_spaces(line, 0));
      // Both lines in the same wrapper (the same bytes, digits aside: a
      // timestamp moves on): the continuation is judged without it.
      const std::string_view body = message_body(line);
      bool alike = false;
      if (body.data() != rest.data()) {
        const std::string_view pb = message_body(prev);
        const std::string_view pw = prev.substr(0, static_cast<std::size_t>(pb.data() - prev.data()));
        const std::string_view lw = line.substr(0, static_cast<std::size_t>(body.data() - line.data()));
        // The first line's prefix may go on with its program or label ("WARNING:").
        alike = !lw.empty() && pw.size() >= lw.size();
        for (std::size_t i = 0; alike && i < lw.size(); ++i)
          alike = pw[i] == lw[i] || (digit(pw[i]) && digit(lw[i]));
        if (alike) rest = body;
      }
      const char c = rest.empty() ? '\0' : rest[0];
      const std::string_view token = rest.substr(0, rest.find_first_of(" \t"));
      if (((c >= 'a' && c <= 'z') || c == '/') && token.find(':') == std::string_view::npos &&
          !starts_new_line(alike ? rest : line) && (alike || body.data() == rest.data())) {
        WrapRun run;
        run.first_offset = prev_offset;
        run.first_line = index - 1;
        run.lines = 2;
        run.text.assign(prev);
        run.text += ' ';
        run.text.append(rest);
        if (run.text.find('\x1b') != std::string::npos) run.text = strip_ansi(run.text);  // coloured lines
        runs.push_back(std::move(run));
      }
    }
    // A line that stops mid-sentence: long enough to be a message, ending in
    // a lower-case word or a comma, not the edge of a table.
    const char last = line.empty() ? '\0' : line.back();
    const bool open = line.size() >= 40 && ((last >= 'a' && last <= 'z') || last == ',') && !ends_table(line);
    prev = open ? line : std::string_view();
    prev_offset = pos;
  });
  return runs;
}

}  // namespace nodeprobe::diag
