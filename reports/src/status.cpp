#include "nodeprobe/status.h"

#include <algorithm>

namespace nodeprobe {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::kPass: return "pass";
    case Status::kWarn: return "warn";
    case Status::kFail: return "fail";
    case Status::kSkip: return "skip";
    case Status::kError: return "error";
    case Status::kTimeout: return "timeout";
    case Status::kUnknown: break;
  }
  return "unknown";
}

Status status_from_string(std::string_view s) {
  for (Status v : {Status::kPass, Status::kWarn, Status::kFail, Status::kSkip, Status::kError,
                   Status::kTimeout}) {
    if (to_string(v) == s) return v;
  }
  return Status::kUnknown;
}

Status aggregate(const std::vector<Status>& statuses) {
  auto any = [&](auto pred) { return std::any_of(statuses.begin(), statuses.end(), pred); };
  // A timeout is a measurement that could not finish: it counts as an error for
  // the run as a whole (the probe itself keeps "timeout").
  if (any([](Status s) {
        return s == Status::kError || s == Status::kTimeout || s == Status::kUnknown;
      }))
    return Status::kError;
  if (any([](Status s) { return s == Status::kFail; })) return Status::kFail;
  if (any([](Status s) { return s == Status::kWarn; })) return Status::kWarn;
  if (!any([](Status s) { return s == Status::kPass; })) return Status::kSkip;
  return Status::kPass;
}

int exit_code_for(Status s) {
  switch (s) {
    case Status::kPass:
    case Status::kWarn: return exit_code::kOk;
    case Status::kFail: return exit_code::kFail;
    case Status::kSkip: return exit_code::kSkip;
    case Status::kTimeout: return exit_code::kTimeout;
    case Status::kError:
    case Status::kUnknown: break;
  }
  return exit_code::kError;
}

Status status_for_exit_code(int code) {
  switch (code) {
    case exit_code::kOk: return Status::kPass;
    case exit_code::kFail: return Status::kFail;
    case exit_code::kSkip: return Status::kSkip;
    case exit_code::kTimeout: return Status::kTimeout;
    default: return Status::kError;
  }
}

}  // namespace nodeprobe
