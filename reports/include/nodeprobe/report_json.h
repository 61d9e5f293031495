#pragma once
/// JSON conversion of the report model, and loading with one-line errors.

#include <stdexcept>
#include <string>

#include "nodeprobe/input.h"
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

/// The one schema-version check of every document this build reads: `j`'s
/// "schema" is `prefix` + a major in [oldest, newest] ("nodeprobe.report/1").
/// Returns the schema text; throws ReportError naming `origin` and `what`
/// ("report", "fleet report") otherwise: a foreign document, or one of
/// another major (the message names the majors this build reads).
std::string check_schema_major(const Json& j, const std::string& origin, const std::string& prefix,
                               const std::string& what, int oldest, int newest);

/// Parses report JSON text. `origin` names the input in messages. Throws
/// ReportError on malformed or too deeply nested JSON, a foreign document or
/// another schema major. Secrets in it are redacted (redact_report_json).
Report parse_report(const std::string& text, const std::string& origin);

/// The whole text of a report file ("-" reads stdin) through the bounded
/// input (nodeprobe/input.h: a regular file or a pipe, at most 64 MiB unless
/// `limits` raise it, a read deadline on pipes). Throws ReportError (cannot
/// open, read error, empty) naming the file.
std::string read_report_text(const std::string& path, const InputOverrides& limits = {});

/// Reads and parses a report file ("-" reads stdin) through read_report_text.
Report load_report(const std::string& path, const InputOverrides& limits = {});
/// Applies the one secret redaction (nodeprobe/redact.h) to every string of
/// a report document: argv flag values, values under secret-named keys
/// (env, config, facts) and secrets inside any text (evidence, reasons).
/// Every report serialised (to_json) or parsed (parse_report) goes through it.
void redact_report_json(Json& doc);

/// A copy of `r` with the same redaction (for exporters and renderers).
Report redact_report(const Report& r);

/// Serialises with 2-space indentation and a trailing newline.
std::string dump_report(const Report& r);

}  // namespace nodeprobe
