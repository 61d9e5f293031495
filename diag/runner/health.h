#pragma once
/// `nodeprobe accept --profile health`: for Slurm's HealthCheckProgram or a
/// prolog. Only checks that answer quickly run (limits, the diagnosis of the
/// logs, the instance-type judgement), inside a hard budget (default 10 s,
/// --budget) that holds whatever hangs: the checks run in a child process,
/// the parent only waits, and at the budget it kills the child and decides
/// alone. Exit 1 only when the node should be drained; with
/// --drain-reason-file the line for `scontrol update ... reason=` is written.

#include <string>

#include "accept.h"

namespace nodeprobe::diag {

/// Longest drain reason written (Slurm shows reasons in `sinfo -R`; keep them short).
inline constexpr std::size_t kDrainReasonMax = 100;

/// "nodeprobe: <finding id>: <title>", cut to kDrainReasonMax characters.
std::string drain_line(const std::string& finding_id, const std::string& title);

/// The drain line for a finished report, "" when the node may stay: the
/// finding with the most severe action, when that action drains (reset-gpu,
/// reboot, replace, contact-support).
std::string drain_reason(const Report& r);

/// Runs the health profile under its budget; returns the exit code (0 keep,
/// 1 drain, 2 error or bad input, 64 usage).
int run_health(const AcceptOptions& opt, int argc, char** argv, const AcceptHooks& hooks);

}  // namespace nodeprobe::diag
