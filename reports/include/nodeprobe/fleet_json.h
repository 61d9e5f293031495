#pragma once
/// JSON of the fleet report (schema nodeprobe.fleet/1) and loading with
/// one-line errors, as report_json.h does for node reports.

#include <string>

#include "nodeprobe/fleet.h"

namespace nodeprobe {

Json fleet_to_json(const FleetReport& r);
/// Throws ReportError (one line, naming `origin`) on JSON that is not a fleet report of major 1.
FleetReport fleet_from_json(const Json& j, const std::string& origin);

/// Parses fleet report text. Throws ReportError.
FleetReport parse_fleet_report(const std::string& text, const std::string& origin);
/// Reads and parses a fleet report file ("-" reads stdin). Throws ReportError.
FleetReport load_fleet_report(const std::string& path);
/// 2-space indentation and a trailing newline.
std::string dump_fleet_report(const FleetReport& r);

/// The "schema" string of a JSON document ("" when it has none or is not JSON):
/// lets a command tell node reports from fleet reports before parsing either.
std::string document_schema(const std::string& text);

}  // namespace nodeprobe
