#include "fleet_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>

#include "nodeprobe/cli_checks.h"
#include "nodeprobe/size.h"

namespace nodeprobe::diag {

void add_fleet_flags(CLI::App& app, FleetOptions& opt) {
  app.add_option("--profile", opt.profile, "quick or full: each node's accept profile, pair sizes and iterations")
      ->check(CLI::IsMember({"quick", "full"}));
  app.add_option("--pairs", opt.pairs,
                 "quick: every pair once, N-1 rounds of N/2 disjoint pairs; exhaustive: the schedule 3 times; none")
      ->check(CLI::IsMember({"quick", "exhaustive", "none"}));
  app.add_option("--skip", opt.skip, "Leave phases out: local, mesh, ring (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"local", "mesh", "ring"}));
  app.add_option("--json", opt.json_out, "Write the fleet report (nodeprobe.fleet/1) to PATH ('-' = stdout only)")
      ->type_name("PATH|-");
  app.add_option("--html", opt.html_out, "Also write a self-contained HTML page");
  app.add_option("--node-json", opt.node_json_dir, "Every node keeps its own accept report as DIR/<host>.json");
  app.add_option("--label", opt.label, "Free-text label stored in the report");
  app.add_option("--accept-arg", opt.accept_args,
                 "Extra argument for every node's `nodeprobe accept` (repeat; e.g. --accept-arg=--expect=p4d.24xlarge)")
      ->allow_extra_args(false);
  app.add_option("--provider", opt.provider, "libfabric provider for pairs and ring (default: efa on every node, else tcp)");
  app.add_option("--pair-backend", opt.pair_backend,
                 "What carries the pairs: nccl on each node's GPU, fabric (libfabric, host memory), or auto "
                 "(nccl when every node has a usable GPU and libnccl, else fabric); the ring is fabric")
      ->check(CLI::IsMember({"auto", "fabric", "nccl"}));
  app.add_option("--pair-gpu", opt.pair_gpu, "The GPU an NCCL pair drives on each node (default 0)")
      ->check(CLI::Range(0, 1023));
  app.add_option("--iface", opt.iface, "Interface for mesh, control and tcp (NCCL_SOCKET_IFNAME syntax)");
  app.add_option("--pair-bytes", opt.pair_bytes, "Bytes per allreduce in pairs and ring (default quick 8 MiB, full 64 MiB)")
      ->check(size_range(4096, std::uint64_t{8} << 30));
  app.add_option("--outlier-share", opt.share, "Outlier below this share of the fleet median (default 0.85)")
      ->check(finite_range(0.01, 0.999));
  app.add_option("--outlier-mads", opt.mad_k, "Or this many scaled MADs from the median, at least 5 % away (default 5)")
      ->check(finite_range(0.5, 1000.0));
  app.add_option("--stall-timeout", opt.stall_timeout_s, "A node silent this long is lost: timeout, the rest goes on (default 15)")
      ->check(finite_range(1.0, 3600.0));
  app.add_option("--timeout", opt.timeout_s, "Bound the whole run (seconds; default: the phases' own deadlines)")
      ->check(finite_range(0.0, 86400.0));
  app.add_option("--hostfile", opt.hostfile, "Run mpirun yourself over these hosts (one rank per node)");
  app.add_option("--launcher-arg", opt.launcher_args, "Extra mpirun argument with --hostfile (repeat)")
      ->allow_extra_args(false);
  app.add_flag("-q,--quiet", opt.quiet, "No text output");
  app.add_flag("-v,--verbose", opt.verbose, "Say what every phase does");
  app.add_option("--test-stop", opt.test_stop)->group("");  // tests: RANK:PHASE stops that rank
}

std::string check_fleet_options(const FleetOptions& opt) {
  for (double v : {opt.share, opt.mad_k, opt.stall_timeout_s, opt.timeout_s})
    if (!std::isfinite(v)) return "numbers must be finite";
  if (!opt.pair_bytes.empty()) {
    const auto b = parse_size(opt.pair_bytes);
    if (!b || *b < 4096 || *b > (std::uint64_t{8} << 30))
      return "--pair-bytes must be a size between 4 KiB and 8 GiB (e.g. 8M, 64M), not '" + opt.pair_bytes + "'";
  }
  if (!opt.test_stop.empty()) {
    const auto c = opt.test_stop.find(':');
    const std::string phase = c == std::string::npos ? "" : opt.test_stop.substr(c + 1);
    if (c == 0 || (phase != "local" && phase != "mesh" && phase != "pairs" && phase != "ring"))
      return "--test-stop must be RANK:PHASE (local, mesh, pairs, ring)";
  }
  return {};
}

std::size_t fleet_pair_bytes(const FleetOptions& opt) {
  if (!opt.pair_bytes.empty())
    if (const auto b = parse_size(opt.pair_bytes)) return static_cast<std::size_t>(*b);
  return opt.profile == "full" ? 64u << 20 : 8u << 20;
}

bool fleet_phase_on(const FleetOptions& opt, const std::string& phase) {
  if (phase == "pairs") return opt.pairs != "none";
  return std::find(opt.skip.begin(), opt.skip.end(), phase) == opt.skip.end();
}

}  // namespace nodeprobe::diag
