#pragma once
// Strict checkers for the export formats, written for the tests from the
// formats' rules (not from our exporters): Prometheus text exposition 0.0.4,
// CloudWatch Embedded Metric Format, JUnit XML. Each returns "" when the
// document is valid, else the first violation with its line.

#include <map>
#include <string>
#include <vector>

namespace nodeprobe::testing {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};
struct PromFamily {
  std::string name, help, type;
  std::vector<PromSample> samples;
};

/// Parses Prometheus text format 0.0.4 strictly (as node_exporter's textfile
/// collector would accept it: no sample timestamps, no duplicate series).
std::string check_prometheus(const std::string& text, std::vector<PromFamily>* out = nullptr);

/// Checks every line as a CloudWatch EMF record. `records` receives the count.
std::string check_emf(const std::string& text, std::size_t* records = nullptr);

/// A parsed XML element.
struct XmlNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<XmlNode> children;
  std::string text;
  const std::string* attr(const std::string& k) const;
};

/// A well-formedness parser for the XML subset JUnit files use (declaration,
/// elements, attributes, character and entity references, comments; no DTD).
std::string parse_xml(const std::string& text, XmlNode* root);

/// Well-formed XML plus the JUnit schema's structure and consistent counters.
std::string check_junit(const std::string& text, XmlNode* root = nullptr);

}  // namespace nodeprobe::testing
