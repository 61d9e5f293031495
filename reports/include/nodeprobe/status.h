#pragma once
/// Status vocabulary, aggregation rule and exit-code table shared by every
/// nodeprobe executable (../shared/DESIGN.md, "Statuses and exit codes").

#include <string_view>
#include <vector>

namespace nodeprobe {

/// Outcome of a check, a probe or a whole run. kUnknown only comes from parsing
/// a string this build does not know.
enum class Status { kPass, kWarn, kFail, kSkip, kError, kTimeout, kUnknown };

/// Exit codes of every executable.
namespace exit_code {
inline constexpr int kOk = 0;        ///< pass or warn
inline constexpr int kFail = 1;      ///< fail
inline constexpr int kError = 2;     ///< error or bad input
inline constexpr int kUsage = 64;    ///< command-line usage error
inline constexpr int kSkip = 77;     ///< skip (CTest SKIP_RETURN_CODE)
inline constexpr int kTimeout = 124; ///< deadline passed
inline constexpr int kInterrupted = 130;  ///< SIGINT
}  // namespace exit_code

/// "pass", "warn", ... ; kUnknown gives "unknown".
std::string_view to_string(Status s);
/// Inverse of to_string; strings this build does not know map to kUnknown.
Status status_from_string(std::string_view s);

/// Run aggregation: any error (or timeout, or unknown) -> error; else any fail ->
/// fail; else any warn -> warn; all skip (or nothing) -> skip; else pass.
Status aggregate(const std::vector<Status>& statuses);

/// The exit code an executable returns for an aggregated status.
int exit_code_for(Status s);

/// The status an exit code stands for (the inverse of exit_code_for, used by the
/// runner when a probe leaves no report). Exit 2 and unknown codes map to error.
Status status_for_exit_code(int code);

}  // namespace nodeprobe
