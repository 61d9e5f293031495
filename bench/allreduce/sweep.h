#pragma once
/// One target's nccl-tests style sweep: for every size, warm-up, timed
/// iterations (out-of-place, then in-place), then the data check.

#include <functional>
#include <string>

#include "backend.h"

namespace nodeprobe::allreduce {

struct SweepHooks {
  std::function<void(const std::string&)> phase;  ///< what this rank does now
  std::function<void(const SizeRow&)> row_done;   ///< rank 0: a table line is complete
  std::function<void(const std::string&)> fail;   ///< ranks out of step: end the run (no return)
};

/// Runs `t` over `ctx.comm`. A backend that cannot run here gives status skip
/// (or fail with its check, e.g. efa.missing); failures every rank agreed on
/// give error and the run goes on. InputError propagates. Collective.
TargetResult run_target(const BackendContext& ctx, const Target& t, const SweepHooks& hooks);

/// Applies the test fault of `plan` when this rank and size match (tests only).
void maybe_fault(const Plan& plan, int rank, std::size_t bytes, bool* corrupt, int launch = 1);

}  // namespace nodeprobe::allreduce
