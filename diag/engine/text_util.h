#pragma once
/// Small text helpers shared by the diagnosis code: UTF-8 repair (reports
/// must stay valid JSON whatever bytes a log holds), secret redaction,
/// timestamps at the start of log lines, durations and ISO 8601 output.

#include <optional>
#include <string>
#include <string_view>

#include "nodeprobe/redact.h"

namespace nodeprobe::diag {

/// Valid UTF-8 (invalid sequences become U+FFFD, control bytes other than
/// tab become spaces), at most `max_bytes` long (cut on a character
/// boundary, "..." appended), without a trailing '\r'.
/// Number of '\n' bytes in `s` (eight bytes at a time).
std::size_t count_newlines(std::string_view s);

std::string clean_text(std::string_view s, std::size_t max_bytes = 400);

/// ASCII case-insensitive equality.
bool ci_equal(std::string_view a, std::string_view b);

/// The one secret redaction (nodeprobe/redact.h), shared with reports and bundles.
using nodeprobe::redact_secrets;

/// Context for timestamps without a year or zone (syslog "Nov 29 16:39:36",
/// glog "E1123 12:34:56.789"): the year is the one that puts the time at or
/// before `now`, the zone offset is `utc_offset_s` (local time of the host
/// that wrote the log).
struct TimeContext {
  double now = 0;          ///< epoch seconds
  long utc_offset_s = 0;   ///< local time = UTC + offset
};

/// The epoch time a log line starts with (or, for audit records, carries in
/// msg=audit(...)), or nullopt. Knows ISO 8601 (also in brackets and with a
/// container-runtime prefix), syslog, `dmesg -T` / ctime, audit raw and
/// ausearch -i, and glog formats. dmesg's seconds-since-boot are not times.
std::optional<double> parse_line_time(std::string_view line, const TimeContext& ctx);

/// "2h", "30m", "1d12h", "90s", "45" (seconds) -> seconds; nullopt when malformed.
std::optional<double> parse_duration(std::string_view s);

/// ISO 8601 UTC with seconds: "2026-11-29T16:39:36Z".
std::string iso8601(double epoch_s);

/// Current local-time offset from UTC in seconds (for bundles and syslog times).
long local_utc_offset();

/// Days from 1970-01-01 for a civil date (proleptic Gregorian).
long long days_from_civil(long long y, unsigned m, unsigned d);

}  // namespace nodeprobe::diag
