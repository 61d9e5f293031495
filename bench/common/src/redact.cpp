#include "nodeprobe/redact.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace nodeprobe {
namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool ident(char c) { return alnum(c) || c == '_' || c == '-' || c == '.'; }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
bool space(char c) { return c == ' ' || c == '\t'; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool istarts_with(std::string_view s, std::size_t at, std::string_view prefix) {
  if (at + prefix.size() > s.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[at + i]) != prefix[i]) return false;
  return true;
}

// Where a value ends: whitespace, a quote, or a separator of lists and queries.
bool value_end(char c) {
  return space(c) || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == ',' || c == ';' || c == '&' ||
         c == ')' || c == '}' || c == ']' || c == '>' || c == '<';
}

// One pass over a text: unchanged spans are copied, redacted ones replaced,
// so a pass is linear however many secrets a 64 MiB log holds.
class Edit {
 public:
  explicit Edit(const std::string& in) : in_(in) {}
  /// Replaces [b, e) (b >= the end of the previous cut) with `marker`.
  void cut(std::size_t b, std::size_t e, const char* marker = kRedacted) {
    out_.append(in_, done_, b - done_);
    out_ += marker;
    done_ = e;
    cut_ = true;
  }
  /// Replaces the text with the edited one (a pass that cut nothing copies nothing).
  void apply(std::string& text) {
    if (!cut_) return;
    out_.append(in_, done_, std::string::npos);
    text = std::move(out_);
  }

 private:
  const std::string& in_;
  std::string out_;
  std::size_t done_ = 0;
  bool cut_ = false;
};

constexpr std::size_t kRedactedLen = std::char_traits<char>::length(kRedacted);
bool already(const std::string& s, std::size_t at) { return s.compare(at, kRedactedLen, kRedacted) == 0; }

// End of the value starting at q (a quoted value runs to its closing quote).
std::size_t value_span(const std::string& s, std::size_t q, bool* quoted) {
  *quoted = false;
  if (q < s.size() && (s[q] == '"' || s[q] == '\'')) {
    const char qc = s[q];
    std::size_t e = q + 1;
    while (e < s.size() && s[e] != qc && s[e] != '\n') e += (s[e] == '\\' && e + 1 < s.size()) ? 2u : 1u;
    *quoted = true;
    return std::min(e, s.size());
  }
  std::size_t e = q;
  while (e < s.size() && !value_end(s[e])) ++e;
  return e;
}

// An HTTP auth scheme before the credential ("Bearer X", "Basic X").
std::size_t skip_scheme(const std::string& s, std::size_t q) {
  for (std::string_view w : {"bearer ", "basic ", "token ", "digest ", "negotiate "})
    if (istarts_with(s, q, w)) {
      q += w.size();
      while (q < s.size() && space(s[q])) ++q;
      return q;
    }
  return q;
}

// PEM private key blocks, BEGIN through END (or the end of the text).
void redact_pem(std::string& s) {
  Edit ed(s);
  for (std::size_t p = 0; (p = s.find("-----BEGIN ", p)) != std::string::npos;) {
    const std::size_t line_end = std::min(s.find('\n', p), p + 120);
    const std::size_t head_end = s.find("-----", p + 11);
    if (head_end == std::string::npos || head_end > line_end ||
        std::string_view(s).substr(p, head_end - p).find("PRIVATE KEY") == std::string_view::npos) {
      p += 11;
      continue;
    }
    std::size_t end = s.find("-----END ", head_end);
    if (end != std::string::npos) {
      const std::size_t close = s.find("-----", end + 9);
      end = close == std::string::npos ? s.size() : close + 5;
    } else {
      end = s.size();
    }
    ed.cut(p, end, "<redacted: private key material>");
    p = end;
  }
  ed.apply(s);
}

// scheme://user:PASSWORD@host and scheme://TOKEN@host.
void redact_url_credentials(std::string& s) {
  Edit ed(s);
  for (std::size_t p = 0; (p = s.find("://", p)) != std::string::npos;) {
    const std::size_t u = p + 3;
    std::size_t e = u, colon = std::string::npos;
    while (e < s.size() && s[e] != '@' && s[e] != '/' && !value_end(s[e]) && s[e] != '?' && s[e] != '#') {
      if (s[e] == ':' && colon == std::string::npos) colon = e;
      ++e;
    }
    if (e >= s.size() || s[e] != '@' || e == u) {
      p = u;
      continue;
    }
    const std::size_t from = colon != std::string::npos ? colon + 1 : u;
    if (from < e && !already(s, from)) ed.cut(from, e);
    p = e;
  }
  ed.apply(s);
}

// Tokens recognisable by their shape wherever they stand.
void redact_token_shapes(std::string& s) {
  struct Shape {
    const char* prefix;
    std::size_t min_rest;
    bool upper_digits;  // AWS key ids: [A-Z0-9] only, exactly min_rest
  };
  static const Shape kShapes[] = {
      {"AKIA", 16, true}, {"ASIA", 16, true}, {"AGPA", 16, true}, {"AIDA", 16, true}, {"AROA", 16, true},
      {"ghp_", 30, false}, {"gho_", 30, false}, {"ghu_", 30, false}, {"ghs_", 30, false}, {"ghr_", 30, false},
      {"github_pat_", 20, false}, {"glpat-", 20, false}, {"xoxb-", 10, false}, {"xoxp-", 10, false},
      {"xoxa-", 10, false}, {"hf_", 30, false}, {"sk-", 20, false}, {"AIza", 30, false},
  };
  for (const Shape& sh : kShapes) {
    if (s.find(sh.prefix) == std::string::npos) continue;
    const std::size_t plen = std::strlen(sh.prefix);
    Edit ed(s);
    for (std::size_t p = 0; (p = s.find(sh.prefix, p)) != std::string::npos;) {
      if (p > 0 && (alnum(s[p - 1]) || s[p - 1] == '_')) {
        p += plen;
        continue;
      }
      std::size_t e = p + plen;
      if (sh.upper_digits) {
        while (e < s.size() && e - p - plen < sh.min_rest &&
               (std::isupper(static_cast<unsigned char>(s[e])) || std::isdigit(static_cast<unsigned char>(s[e]))))
          ++e;
        if (e - p - plen == sh.min_rest && (e == s.size() || !alnum(s[e]))) ed.cut(p, e);
        p = e;
        continue;
      }
      while (e < s.size() && (alnum(s[e]) || s[e] == '_' || s[e] == '-')) ++e;
      // A run too short holds no longer match further in: skip all of it.
      if (e - p - plen >= sh.min_rest) ed.cut(p, e);
      p = e;
    }
    ed.apply(s);
  }
  // JSON web tokens: eyJ<header>.<payload>.<signature>.
  Edit ed(s);
  for (std::size_t p = 0; (p = s.find("eyJ", p)) != std::string::npos;) {
    if (p > 0 && alnum(s[p - 1])) {
      p += 3;
      continue;
    }
    std::size_t e = p, dots = 0;
    while (e < s.size() && (alnum(s[e]) || s[e] == '_' || s[e] == '-' || s[e] == '.')) dots += s[e++] == '.';
    if (dots >= 2 && e - p >= 30) ed.cut(p, e);
    p = std::max(e, p + 3);
  }
  ed.apply(s);
}

// NAME=VALUE, NAME: VALUE, "NAME": "VALUE" where NAME names a secret.
void redact_assignments(std::string& s) {
  Edit ed(s);
  std::size_t next = 0;  // redactions must not overlap
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if ((c != '=' && c != ':') || i < next) continue;
    if (c == ':' && i + 2 < s.size() && s[i + 1] == '/' && s[i + 2] == '/') continue;  // a URL
    // The name before the separator (spaces and a closing quote allowed between).
    std::size_t b = i;
    while (b > 0 && space(s[b - 1])) --b;
    if (b > 0 && (s[b - 1] == '"' || s[b - 1] == '\'')) --b;
    std::size_t a = b;
    while (a > 0 && ident(s[a - 1])) --a;
    if (a == b || !secret_name(std::string_view(s).substr(a, b - a))) continue;
    std::size_t q = i + 1;
    while (q < s.size() && space(s[q])) ++q;
    bool quoted = false;
    std::size_t v, e;
    if (q < s.size() && (s[q] == '"' || s[q] == '\'')) {
      e = value_span(s, q, &quoted);
      v = skip_scheme(s, q + 1);
    } else {
      v = skip_scheme(s, q);
      e = value_span(s, v, &quoted);
    }
    const std::string_view val = std::string_view(s).substr(v, e - v);
    if (val == "(null" || val == "null" || val == "none" || val == "true" || val == "false") continue;  // audit's key=(null)
    if (v < e && !already(s, v)) {
      ed.cut(v, e);
      next = e;
    }
  }
  ed.apply(s);
}

// Flags with a separate value: --password X, --token X, -u user:pass.
void redact_flag_values(std::string& s) {
  Edit ed(s);
  for (std::size_t p = 0; (p = s.find('-', p)) != std::string::npos; ++p) {
    if (p > 0 && !space(s[p - 1])) continue;
    std::size_t n = p;
    while (n < s.size() && s[n] == '-') ++n;
    std::size_t e = n;
    while (e < s.size() && ident(s[e])) ++e;
    if (e >= s.size() || !space(s[e]) || n - p > 2) {
      p = e > p ? e - 1 : p;
      continue;
    }
    const std::string_view name = std::string_view(s).substr(n, e - n);
    const bool user = name == "u" || name == "user";
    if (!user && !secret_name(name)) {
      p = e - 1;
      continue;
    }
    std::size_t q = e;
    while (q < s.size() && space(s[q])) ++q;
    if (q >= s.size() || s[q] == '-') continue;
    bool quoted = false;
    const std::size_t end = value_span(s, q, &quoted);
    if (quoted) ++q;
    if (user) {
      const std::size_t colon = s.find(':', q);
      if (colon == std::string::npos || colon >= end) continue;
      q = colon + 1;
    }
    if (end > q && !already(s, q)) {
      ed.cut(q, end);
      p = end;
    }
  }
  ed.apply(s);
}

// True when the line holding `at` names a mysql or mariadb client before it.
bool mysql_line(const std::string& s, std::size_t at) {
  const std::size_t from = s.rfind('\n', at);
  const std::size_t b = from == std::string::npos ? 0 : from + 1;
  for (std::size_t i = b; i + 5 <= at; ++i)
    if (istarts_with(s, i, "mysql") || istarts_with(s, i, "mariadb")) return true;
  return false;
}

// mysql/mariadb client passwords glued to -p.
void redact_mysql(std::string& s) {
  Edit ed(s);
  for (std::size_t p = 0; (p = s.find("-p", p)) != std::string::npos; p += 2) {
    if ((p > 0 && !space(s[p - 1])) || p + 2 >= s.size() || value_end(s[p + 2]) || s[p + 2] == '-') continue;
    if (!mysql_line(s, p)) continue;
    bool quoted = false;
    std::size_t q = p + 2;
    const std::size_t e = value_span(s, q, &quoted);
    if (quoted) ++q;
    if (e > q && !already(s, q)) {
      ed.cut(q, e);
      p = e - 2;
    }
  }
  ed.apply(s);
}

}  // namespace

bool secret_name(std::string_view name) {
  // Word parts of the name: split at _ . - and at lower->upper case changes.
  // Distinctive words count inside a part (AWSSECRETKEY), "token" and the
  // like at its end (HFTOKEN, not max_tokens or tokenizer), short words
  // only as a whole part (KEY, not monkey).
  static const std::string_view kInside[] = {"password", "passwd", "passphrase", "secret", "credential", "apikey",
                                             "privatekey", "accesskey"};
  static const std::string_view kAtEnd[] = {"token", "signature", "cookie", "authorization"};
  static const std::string_view kWhole[] = {"key", "pwd", "sig", "auth", "oauth", "pat"};
  // Most names a log shows are times and counters: no letter, no secret.
  if (name.size() > 128 || std::none_of(name.begin(), name.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }))
    return false;
  char buf[128];
  std::size_t len = 0;
  auto check = [&]() {
    const std::string_view part(buf, len);
    len = 0;
    if (part.size() < 3) return false;
    for (auto w : kWhole)
      if (part == w) return true;
    for (auto w : kAtEnd)
      if (ends_with(part, w)) return true;
    for (auto w : kInside)
      if (part.find(w) != std::string_view::npos) return true;
    return false;
  };
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '_' || c == '-' || c == '.' || c == ' ') {
      if (check()) return true;
      continue;
    }
    if (i > 0 && std::isupper(static_cast<unsigned char>(c)) && std::islower(static_cast<unsigned char>(name[i - 1])))
      if (check()) return true;
    buf[len++] = lower(c);
  }
  return check();
}

std::string redact_secrets(std::string_view text) {
  std::string s(text);
  if (s.empty()) return s;
  redact_pem(s);
  redact_url_credentials(s);
  redact_token_shapes(s);
  redact_assignments(s);
  redact_flag_values(s);
  redact_mysql(s);
  return s;
}

std::string redact_value(std::string_view name, std::string_view value) {
  if (secret_name(name) && !value.empty()) return kRedacted;
  return redact_secrets(value);
}

std::vector<std::string> redact_argv(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  bool next_secret = false, next_user = false;
  for (const auto& a : argv) {
    if (next_secret && !a.empty() && a.front() != '-') {
      out.push_back(kRedacted);
      next_secret = next_user = false;
      continue;
    }
    if (next_user && a.find(':') != std::string::npos) {
      out.push_back(a.substr(0, a.find(':') + 1) + kRedacted);
      next_secret = next_user = false;
      continue;
    }
    next_secret = next_user = false;
    std::string r = redact_secrets(a);
    if (a.size() > 1 && a.front() == '-' && a.find('=') == std::string::npos) {
      const std::string_view name = std::string_view(a).substr(a.find_first_not_of('-'));
      next_secret = secret_name(name);
      next_user = name == "u" || name == "user";
      // mysql's -pPASSWORD in an argv of its own.
      if (a.size() > 2 && a[1] == 'p' && a[0] == '-' && !argv.empty() &&
          (argv.front().find("mysql") != std::string::npos || argv.front().find("mariadb") != std::string::npos))
        r = std::string("-p") + kRedacted;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace nodeprobe
