#pragma once
/// The end of `nodeprobe accept`: one line per probe (status, time, key
/// numbers or the reason it did not pass), the findings with their first
/// remedy step, and the verdict with its exit code.

#include <ostream>

#include "nodeprobe/report.h"

namespace nodeprobe::diag {

void render_verdict_table(const Report& r, std::ostream& out, bool color, int exit_code);

}  // namespace nodeprobe::diag
