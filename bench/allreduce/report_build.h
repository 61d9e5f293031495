#pragma once
/// Turns what a run measured (complete or not) into the probe's entry of a
/// nodeprobe report: per-size metrics labelled backend/provider/size/dtype/op,
/// checks (data, straggler, mesh, EFA), per-rank rows and tables in `data`.

#include <optional>
#include <string>
#include <vector>

#include "ar_types.h"
#include "mesh.h"
#include "mpi_util.h"
#include "scaling.h"

namespace nodeprobe::allreduce {

struct RunData {
  Json config = Json::object();       ///< settings the user chose
  std::map<std::string, std::string> environment;  ///< what the node gave (interface, transports)
  Json limits = Json::object();       ///< deadlines (data.limits: not settings of the measurement)
  HostMap hosts;
  int nranks = 1;
  DType dtype = DType::kFloat32;
  RedOp op = RedOp::kSum;
  Coll coll = Coll::kAllReduce;
  int root = 0;
  bool compare = false;
  std::vector<TargetResult> targets;  ///< finished ones and the one in flight (partial rows)
  std::optional<MeshResult> mesh;
  std::optional<ScalingResult> scaling;
  std::string scaling_target;
  std::string scaling_error;          ///< scaling could not run (agreed failure)
  std::vector<int> unmonitored;       ///< ranks without a control connection
  std::vector<int> pids;              ///< per rank
  double started_s = 0;               ///< steady-clock start (duration_s of the probe)
};

/// The `provider` axis of a target: the requested fabric provider or NCCL
/// network, "auto" where the library chooses (MPI, NCCL without one).
std::string provider_label(const TargetResult& t);

/// Ranks whose time at the largest size exceeds 1.5x the median (for the first
/// target with per-rank times), as "rank 3 (host h4): 2.1x median".
std::vector<std::string> straggler_names(const RunData& d, std::vector<int>* ranks = nullptr);

/// The probe result. Status follows the targets and checks; `forced` (timeout /
/// error from the watchdog) overrides with `reason`.
ProbeResult build_probe(const RunData& d, std::optional<Status> forced = std::nullopt,
                        const std::string& reason = {});

}  // namespace nodeprobe::allreduce
