#pragma once
/// Flags of `nodeprobe fleet`, shared by the subcommand (which checks them,
/// then hands them to the rank program or to mpirun) and by nodeprobe-fleet
/// (the rank program every node runs under mpirun or srun).

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace nodeprobe::diag {

struct FleetOptions {
  std::string profile = "quick";        ///< quick | full: the nodes' accept profile, pair sizes and iterations
  std::string pairs = "quick";          ///< quick | exhaustive | none
  std::vector<std::string> skip;        ///< phases left out: local, mesh, ring (pairs: --pairs none)
  std::string json_out, html_out;       ///< rank 0 writes these
  std::string node_json_dir;            ///< every node keeps its own accept report as DIR/<host>.json
  std::string label;
  std::vector<std::string> accept_args; ///< extra arguments for every node's `nodeprobe accept`
  std::string provider;                 ///< libfabric provider for pairs and ring ("": efa when every node has it, else tcp)
  std::string iface;                    ///< interface (NCCL_SOCKET_IFNAME syntax)
  std::string pair_backend = "auto";    ///< what carries the pairs: auto (nccl when every node can) | fabric | nccl
  int pair_gpu = 0;                     ///< the GPU an NCCL pair drives on each node
  std::string pair_bytes;               ///< bytes per allreduce in pairs and ring ("": quick 8M, full 64M)
  double share = 0.85;                  ///< outlier: below this share of the fleet median
  double mad_k = 5;                     ///< outlier: or this many scaled MADs from it (and >= 5 %)
  double stall_timeout_s = 15;          ///< a node silent this long is lost (timeout) and left out
  double timeout_s = 0;                 ///< the whole run (0: the phases' own deadlines)
  std::string hostfile;                 ///< run mpirun with this hostfile (convenience)
  std::vector<std::string> launcher_args;  ///< extra mpirun arguments with --hostfile
  bool quiet = false, verbose = false;
  std::string test_stop;                ///< hidden: RANK:PHASE, that rank stops itself (SIGSTOP) when the phase starts
};

/// Registers the flags on `app` (the subcommand, or nodeprobe-fleet's own app).
void add_fleet_flags(CLI::App& app, FleetOptions& opt);

/// "" when the options make sense, else a one-line reason (bad sizes, phases, both --hostfile and a launcher).
std::string check_fleet_options(const FleetOptions& opt);

/// Bytes per allreduce of pairs and ring for the options (profile default when unset).
std::size_t fleet_pair_bytes(const FleetOptions& opt);

/// Whether `phase` (local, mesh, pairs, ring) runs with these options.
bool fleet_phase_on(const FleetOptions& opt, const std::string& phase);

}  // namespace nodeprobe::diag
