// A strict well-formedness parser for the XML JUnit files use, and the JUnit
// schema's structural rules (the Ant/Jenkins junit.xsd as CI tools read it).
#include <cctype>
#include <cstdlib>
#include <set>

#include "format_checkers.h"

namespace nodeprobe::testing {

const std::string* XmlNode::attr(const std::string& k) const {
  for (const auto& [n, v] : attrs)
    if (n == k) return &v;
  return nullptr;
}

namespace {

class XmlParser {
 public:
  explicit XmlParser(const std::string& s) : s_(s) {}

  std::string parse(XmlNode* root) {
    if (s_.compare(0, 5, "<?xml") == 0) {
      const auto end = s_.find("?>");
      if (end == std::string::npos) return fail("unterminated XML declaration");
      const std::string decl = s_.substr(0, end);
      if (decl.find("version=\"1.0\"") == std::string::npos) return fail("XML declaration without version 1.0");
      pos_ = end + 2;
    }
    skip_misc();
    if (pos_ >= s_.size() || s_[pos_] != '<') return fail("no root element");
    if (auto e = element(root); !e.empty()) return e;
    skip_misc();
    if (pos_ != s_.size()) return fail("content after the root element");
    return {};
  }

 private:
  std::string fail(const std::string& what) const {
    std::size_t line = 1;
    for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) line += s_[i] == '\n';
    return "line " + std::to_string(line) + ": " + what;
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void skip_misc() {
    for (;;) {
      skip_ws();
      if (s_.compare(pos_, 4, "<!--") == 0) {
        const auto end = s_.find("-->", pos_ + 4);
        pos_ = end == std::string::npos ? s_.size() : end + 3;
      } else {
        return;
      }
    }
  }
  static bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
  static bool name_char(char c) {
    return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  }
  std::string name(std::string* out) {
    if (pos_ >= s_.size() || !name_start(s_[pos_])) return fail("expected a name");
    const std::size_t b = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    *out = s_.substr(b, pos_ - b);
    return {};
  }
  /// Decodes text up to `stop`, checking references and forbidden characters.
  std::string chars(char stop, std::string* out) {
    while (pos_ < s_.size() && s_[pos_] != stop) {
      const char c = s_[pos_];
      const auto uc = static_cast<unsigned char>(c);
      if (c == '<' && stop != '<') return fail("'<' inside an attribute value");
      if (uc < 0x20 && c != '\t' && c != '\n' && c != '\r') return fail("control character not allowed in XML 1.0");
      if (c == '&') {
        const auto semi = s_.find(';', pos_);
        if (semi == std::string::npos || semi - pos_ > 10) return fail("unterminated reference");
        const std::string ref = s_.substr(pos_ + 1, semi - pos_ - 1);
        if (ref == "amp") *out += '&';
        else if (ref == "lt") *out += '<';
        else if (ref == "gt") *out += '>';
        else if (ref == "quot") *out += '"';
        else if (ref == "apos") *out += '\'';
        else if (ref.size() > 1 && ref[0] == '#') {
          const long cp = ref[1] == 'x' ? std::strtol(ref.c_str() + 2, nullptr, 16) : std::strtol(ref.c_str() + 1, nullptr, 10);
          if (!(cp == 9 || cp == 10 || cp == 13 || (cp >= 0x20 && cp <= 0x10FFFF))) return fail("reference to a forbidden character");
          if (cp < 0x80) *out += static_cast<char>(cp);
          else *out += '?';
        } else {
          return fail("unknown entity &" + ref + ";");
        }
        pos_ = semi + 1;
        continue;
      }
      *out += c;
      ++pos_;
    }
    return {};
  }
  std::string element(XmlNode* node) {
    ++pos_;  // '<'
    if (auto e = name(&node->name); !e.empty()) return e;
    std::set<std::string> seen;
    for (;;) {
      const std::size_t before = pos_;
      skip_ws();
      if (pos_ >= s_.size()) return fail("unterminated start tag");
      if (s_.compare(pos_, 2, "/>") == 0) {
        pos_ += 2;
        return {};
      }
      if (s_[pos_] == '>') {
        ++pos_;
        break;
      }
      if (pos_ == before) return fail("attributes must be separated by white space");
      std::string an, av;
      if (auto e = name(&an); !e.empty()) return e;
      if (!seen.insert(an).second) return fail("duplicate attribute " + an);
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '=') return fail("expected '=' after attribute " + an);
      ++pos_;
      skip_ws();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) return fail("attribute value not quoted");
      const char q = s_[pos_++];
      if (auto e = chars(q, &av); !e.empty()) return e;
      if (pos_ >= s_.size()) return fail("unterminated attribute value");
      ++pos_;
      node->attrs.emplace_back(an, av);
    }
    for (;;) {
      if (auto e = chars('<', &node->text); !e.empty()) return e;
      if (pos_ >= s_.size()) return fail("unclosed element <" + node->name + ">");
      if (s_.compare(pos_, 4, "<!--") == 0) {
        const auto end = s_.find("-->", pos_ + 4);
        if (end == std::string::npos) return fail("unterminated comment");
        pos_ = end + 3;
        continue;
      }
      if (s_.compare(pos_, 2, "</") == 0) {
        pos_ += 2;
        std::string close;
        if (auto e = name(&close); !e.empty()) return e;
        if (close != node->name) return fail("</" + close + "> closes <" + node->name + ">");
        skip_ws();
        if (pos_ >= s_.size() || s_[pos_] != '>') return fail("malformed end tag");
        ++pos_;
        return {};
      }
      if (s_.compare(pos_, 2, "<!") == 0 || s_.compare(pos_, 2, "<?") == 0)
        return fail("DTD, CDATA or processing instruction not expected here");
      node->children.emplace_back();
      if (auto e = element(&node->children.back()); !e.empty()) return e;
    }
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

bool decimal_ok(const std::string* v) {
  if (!v || v->empty()) return false;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  return end == v->c_str() + v->size() && d >= 0;
}

bool count_ok(const std::string* v, long expect) {
  if (!v) return false;
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  return end == v->c_str() + v->size() && n == expect;
}

}  // namespace

std::string parse_xml(const std::string& text, XmlNode* root) { return XmlParser(text).parse(root); }

std::string check_junit(const std::string& text, XmlNode* out) {
  XmlNode root;
  if (auto e = parse_xml(text, &root); !e.empty()) return "not well-formed XML: " + e;
  if (root.name != "testsuites") return "root element is <" + root.name + ">, not <testsuites>";
  long tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& suite : root.children) {
    if (suite.name != "testsuite") return "<testsuites> contains <" + suite.name + ">";
    for (const char* a : {"name", "tests", "failures", "errors", "time", "timestamp", "hostname"})
      if (!suite.attr(a)) return std::string("<testsuite> without attribute ") + a;
    if (!decimal_ok(suite.attr("time"))) return "<testsuite time> is not a non-negative decimal";
    const std::string& ts = *suite.attr("timestamp");
    if (ts.size() != 19 || ts[10] != 'T') return "<testsuite timestamp> is not an ISO 8601 date-time without zone";
    long t = 0, f = 0, e = 0, s = 0;
    bool props = false;
    for (const auto& c : suite.children) {
      if (c.name == "properties") {
        if (props || t > 0) return "<properties> must come once, before the test cases";
        props = true;
        for (const auto& p : c.children)
          if (p.name != "property" || !p.attr("name") || !p.attr("value")) return "bad <property>";
        continue;
      }
      if (c.name == "system-out" || c.name == "system-err") continue;
      if (c.name != "testcase") return "<testsuite> contains <" + c.name + ">";
      ++t;
      if (!c.attr("name") || !c.attr("classname")) return "<testcase> without name or classname";
      if (!decimal_ok(c.attr("time"))) return "<testcase time> is not a non-negative decimal";
      int outcomes = 0;
      for (const auto& o : c.children) {
        if (o.name == "failure" || o.name == "error") {
          if (!o.attr("message") || !o.attr("type")) return "<" + o.name + "> without message or type";
          (o.name == "failure" ? f : e) += 1;
          ++outcomes;
        } else if (o.name == "skipped") {
          ++s;
          ++outcomes;
        } else if (o.name != "system-out" && o.name != "system-err") {
          return "<testcase> contains <" + o.name + ">";
        }
      }
      if (outcomes > 1) return "<testcase " + *c.attr("name") + "> has more than one outcome";
    }
    if (!count_ok(suite.attr("tests"), t)) return "<testsuite tests> does not match its test cases";
    if (!count_ok(suite.attr("failures"), f)) return "<testsuite failures> does not match";
    if (!count_ok(suite.attr("errors"), e)) return "<testsuite errors> does not match";
    if (suite.attr("skipped") && !count_ok(suite.attr("skipped"), s)) return "<testsuite skipped> does not match";
    tests += t, failures += f, errors += e, skipped += s;
  }
  if (root.attr("tests") && !count_ok(root.attr("tests"), tests)) return "<testsuites tests> does not match";
  if (root.attr("failures") && !count_ok(root.attr("failures"), failures)) return "<testsuites failures> does not match";
  if (root.attr("errors") && !count_ok(root.attr("errors"), errors)) return "<testsuites errors> does not match";
  if (root.attr("skipped") && !count_ok(root.attr("skipped"), skipped)) return "<testsuites skipped> does not match";
  if (out) *out = std::move(root);
  return {};
}

}  // namespace nodeprobe::testing
