#pragma once
/// JSON conversion of the report model, and loading with one-line errors.

#include <stdexcept>
#include <string>

#include "nodeprobe/report.h"

namespace nodeprobe {

void to_json(Json& j, const Stats& v);
void from_json(const Json& j, Stats& v);
void to_json(Json& j, const Metric& v);
void from_json(const Json& j, Metric& v);
void to_json(Json& j, const Check& v);
void from_json(const Json& j, Check& v);
void to_json(Json& j, const ProbeResult& v);
void from_json(const Json& j, ProbeResult& v);
void to_json(Json& j, const Evidence& v);
void from_json(const Json& j, Evidence& v);
void to_json(Json& j, const Finding& v);
void from_json(const Json& j, Finding& v);
void to_json(Json& j, const ToolInfo& v);
void from_json(const Json& j, ToolInfo& v);
void to_json(Json& j, const RunInfo& v);
void from_json(const Json& j, RunInfo& v);
void to_json(Json& j, const HostInfo& v);
void from_json(const Json& j, HostInfo& v);
void to_json(Json& j, const Report& v);
void from_json(const Json& j, Report& v);

/// A report that cannot be read; what() is one line naming the file and reason.
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses report JSON text. `origin` names the input in messages. Throws
/// ReportError on malformed JSON, a foreign document or another schema major.
Report parse_report(const std::string& text, const std::string& origin);

/// The whole text of a report file ("-" reads stdin). Throws ReportError
/// (cannot open, read error, empty) naming the file.
std::string read_report_text(const std::string& path);

/// Reads and parses a report file ("-" reads stdin).
Report load_report(const std::string& path);

/// Serialises with 2-space indentation and a trailing newline.
std::string dump_report(const Report& r);

}  // namespace nodeprobe
