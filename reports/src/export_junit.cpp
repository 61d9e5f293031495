// JUnit XML as CI systems (Jenkins, GitLab, GitHub test reporters) read it:
// <testsuites> / <testsuite> / <testcase> with <failure>, <error>, <skipped>
// and <system-out>; suite counters agree with their test cases.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "nodeprobe/exporters.h"
#include "nodeprobe/report_json.h"

namespace nodeprobe {
namespace {

/// Escapes for XML 1.0 text and attribute values; drops characters XML 1.0
/// cannot carry (C0 controls other than tab, LF, CR).
std::string xml(const std::string& s) {
  std::string out;
  for (char ch : sanitize_utf8(s)) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default:
        if (c >= 0x20) out += ch;
    }
  }
  return out;
}

/// Text content keeps its newlines readable.
std::string xml_text(const std::string& s) {
  std::string out;
  for (char ch : sanitize_utf8(s)) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default:
        if (c >= 0x20 || ch == '\n' || ch == '\t') out += ch;
    }
  }
  return out;
}

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s < 0 ? 0 : s);
  return buf;
}

const Finding* finding_for(const Report& r, const std::string& probe, const std::string& id) {
  for (const auto& f : r.findings)
    if (f.id == id && (f.probe.empty() || f.probe == probe)) return &f;
  return nullptr;
}

std::string remedy_text(const Finding* f) {
  if (!f || f->remedy.empty()) return {};
  std::string out = "remedy:\n";
  int i = 1;
  for (const auto& s : f->remedy) out += "  " + std::to_string(i++) + ". " + s + "\n";
  return out;
}

struct Case {
  std::string classname, name, time;
  std::string kind;  // "", "failure", "error", "skipped"
  std::string message, type, body, out;
};

struct Suite {
  std::string name;
  double time = 0;
  std::vector<Case> cases;
  int failures() const { return count("failure"); }
  int errors() const { return count("error"); }
  int skipped() const { return count("skipped"); }
  int count(const char* k) const {
    int n = 0;
    for (const auto& c : cases) n += c.kind == k;
    return n;
  }
};

Case probe_case(const Report& r, const ProbeResult& p) {
  Case c{"nodeprobe." + p.name, p.name, secs(p.duration_s), "", "", "", "", ""};
  const char* id = p.status == Status::kTimeout ? "probe.timeout"
                   : p.reason.rfind("crashed", 0) == 0 ? "probe.crash" : "";
  const Finding* f = *id ? finding_for(r, p.name, id) : nullptr;
  switch (p.status) {
    case Status::kPass: break;
    case Status::kWarn: c.out = "WARN: " + p.name + " passed with warnings" + (p.reason.empty() ? "" : ": " + p.reason); break;
    case Status::kSkip:
      c.kind = "skipped";
      c.message = p.reason;
      break;
    case Status::kFail:
      c.kind = "failure";
      c.type = "fail";
      c.message = p.reason.empty() ? p.name + " failed" : p.reason;
      c.body = c.message + "\n";
      break;
    case Status::kError:
    case Status::kTimeout:
    case Status::kUnknown:
      c.kind = "error";
      c.type = std::string(to_string(p.status));
      c.message = f ? f->title : (p.reason.empty() ? p.name + " " + c.type : p.reason);
      c.body = p.reason + "\n" + remedy_text(f);
      break;
  }
  return c;
}

Case check_case(const Report& r, const ProbeResult& p, const Check& ch) {
  Case c{"nodeprobe." + p.name, ch.id, secs(0), "", "", "", "", ""};
  const Finding* f = ch.finding.empty() ? nullptr : finding_for(r, p.name, ch.finding);
  std::string detail = "observed: " + ch.observed + "\nexpected: " + ch.expected + "\n";
  if (!ch.detail.empty()) detail += "detail: " + ch.detail + "\n";
  const bool fix_in_remedy = f && std::find(f->remedy.begin(), f->remedy.end(), ch.fix) != f->remedy.end();
  if (!ch.fix.empty() && !fix_in_remedy) detail += "fix: " + ch.fix + "\n";
  detail += remedy_text(f);
  const std::string title = f ? f->title : ch.id + ": observed " + ch.observed;
  switch (ch.status) {
    case Status::kPass: break;
    case Status::kWarn: c.out = "WARN: " + title + "\n" + detail; break;
    case Status::kSkip:
      c.kind = "skipped";
      c.message = ch.detail.empty() ? "skipped: " + ch.observed : ch.detail;
      break;
    case Status::kFail:
      c.kind = "failure";
      c.type = ch.finding.empty() ? "fail" : ch.finding;
      c.message = title;
      c.body = detail;
      break;
    default:
      c.kind = "error";
      c.type = std::string(to_string(ch.status));
      c.message = title;
      c.body = detail;
  }
  return c;
}

}  // namespace

std::string to_junit(const Report& r, const std::string& suite_name) {
  std::vector<Suite> suites;
  for (const auto& p : r.probes) {
    Suite s{p.name, p.duration_s, {}};
    s.cases.push_back(probe_case(r, p));
    for (const auto& ch : p.checks) s.cases.push_back(check_case(r, p, ch));
    suites.push_back(std::move(s));
  }
  Suite orphan{"findings", 0, {}};
  for (const auto& f : r.findings) {
    if (!f.probe.empty()) continue;
    Case c{"nodeprobe.findings", f.id, secs(0), "", "", "", "", ""};
    std::string body;
    for (const auto& ev : f.evidence)
      body += "evidence: " + ev.source + (ev.line ? ":" + std::to_string(ev.line) : "") + ": " + ev.text + "\n";
    body += remedy_text(&f);
    if (f.severity == Severity::kError) {
      c.kind = "failure";
      c.type = f.id;
      c.message = f.title;
      c.body = body;
    } else {
      c.out = std::string(f.severity == Severity::kWarn ? "WARN: " : "INFO: ") + f.title + "\n" + body;
    }
    orphan.cases.push_back(std::move(c));
  }
  if (!orphan.cases.empty()) suites.push_back(std::move(orphan));

  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
  for (const auto& s : suites) {
    tests += static_cast<int>(s.cases.size());
    failures += s.failures();
    errors += s.errors();
    skipped += s.skipped();
    time += s.time;
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"" << xml(suite_name) << "\" tests=\"" << tests << "\" failures=\""
      << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\""
      << secs(time) << "\">\n";
  int id = 0;
  for (const auto& s : suites) {
    out << "  <testsuite name=\"" << xml(suite_name + "." + s.name) << "\" id=\"" << id++
        << "\" tests=\"" << s.cases.size() << "\" failures=\"" << s.failures() << "\" errors=\""
        << s.errors() << "\" skipped=\"" << s.skipped() << "\" time=\"" << secs(s.time)
        << "\" timestamp=\"" << xml(r.run.started.substr(0, 19)) << "\" hostname=\""
        << xml(r.host.hostname) << "\">\n";
    out << "    <properties>\n";
    out << "      <property name=\"run_id\" value=\"" << xml(r.run.id) << "\"/>\n";
    out << "      <property name=\"instance_type\" value=\"" << xml(r.host.instance_type) << "\"/>\n";
    out << "      <property name=\"verdict\" value=\"" << to_string(r.verdict) << "\"/>\n";
    out << "    </properties>\n";
    for (const auto& c : s.cases) {
      out << "    <testcase classname=\"" << xml(c.classname) << "\" name=\"" << xml(c.name)
          << "\" time=\"" << c.time << "\"";
      if (c.kind.empty() && c.out.empty()) {
        out << "/>\n";
        continue;
      }
      out << ">\n";
      if (c.kind == "skipped") {
        out << "      <skipped message=\"" << xml(c.message) << "\"/>\n";
      } else if (!c.kind.empty()) {
        out << "      <" << c.kind << " message=\"" << xml(c.message) << "\" type=\"" << xml(c.type)
            << "\">" << xml_text(c.body) << "</" << c.kind << ">\n";
      }
      if (!c.out.empty()) out << "      <system-out>" << xml_text(c.out) << "</system-out>\n";
      out << "    </testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
  return out.str();
}

std::vector<std::pair<std::string, std::string>> export_documents(const Report& report,
                                                                 const ExportPaths& paths) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!paths.any()) return out;
  const Report r = redact_report(report);  // exports carry no secret either
  if (!paths.prometheus.empty()) out.emplace_back(paths.prometheus, to_prometheus(r));
  if (!paths.emf.empty()) out.emplace_back(paths.emf, to_cloudwatch_emf(r));
  if (!paths.junit.empty()) out.emplace_back(paths.junit, to_junit(r, r.tool.name.empty() ? "nodeprobe" : r.tool.name));
  return out;
}

}  // namespace nodeprobe
