#pragma once
/// Command line of nodeprobe-allreduce: the common probe flags, nccl-tests'
/// sweep flags (-b -e -f -i -n -w -c -d -o), the backends and the modes.

#include <cstddef>
#include <string>
#include <vector>

// CLI11 is heavy: headers only name CLI::App; the .cpp that builds the
// command line includes <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

#include "ar_types.h"
#include "coll_plan.h"
#include "nodeprobe/probe_main.h"

namespace nodeprobe::allreduce {

struct Options {
  CommonOptions common;
  std::vector<std::string> backends;  ///< --backend (comma list of targets)
  std::vector<std::string> compare;   ///< --compare A,B
  std::string provider = "tcp";       ///< --provider (for "fabric" without one)
  std::string min_bytes = "1M", max_bytes = "64M", step_bytes = "0";
  double factor = 2;
  int iters = 20, warmup = 1, check = 1;
  double spread_ms = 0;               ///< --spread: timed iterations of a size spread over at least this long
  std::string collective = "allreduce";  ///< --collective (nccl-tests' collectives)
  int root = 0;                       ///< -r,--root: broadcast and reduce
  std::string dtype = "float", op = "sum";
  int inplace = 1;                    ///< also measure in-place (nccl-tests prints both)
  std::string chunk = "4M";           ///< fabric: largest pipeline chunk (a quarter segment below it)
  int window = 8;                     ///< fabric: chunks in flight per direction
  std::string algo = "auto";          ///< fabric: auto|rd|rabenseifner|ring
  std::string oneshot_max = "0";      ///< fabric auto: one-shot up to this size (on at most 8 ranks; 0: never)
  std::string rd_max = "4K";          ///< fabric auto: recursive doubling up to this size
  std::string linear_max = "2K";      ///< fabric auto: linear up to this size on 3-4 ranks (0: never)
  /// fabric auto: the ring from this size (allreduce: Rabenseifner between;
  /// allgather, reducescatter: recursive doubling / halving below); empty:
  /// the collective's default (kRingMinDefault in options.cpp)
  std::string ring_min;
  std::string chain_min = "64K";      ///< fabric broadcast/reduce: the pipelined chain from this size (binomial below)
  std::string iface;                  ///< interface for mesh / control / fabric tcp
  std::string nccl_net;               ///< --nccl-net socket|ofi (sets the target of "nccl")
  bool mesh = false;
  bool pt2pt = false;                 ///< --pt2pt: latency / bandwidth between every pair instead of the allreduce sweep
  int mesh_port = 0;                  ///< 0: ephemeral ports
  int rendezvous_port = 0;
  double mesh_timeout_s = 2;
  bool scaling = false;
  double compute_ms = 50;
  std::string grad_bytes = "100M";
  double bucket_mb = 25;
  int steps = 5;
  double stall_timeout_s = 60;        ///< a rank silent this long ends the run
  int np = 0;                         ///< --np N: start N local ranks through mpirun
  int launches = 1;                   ///< --launches K (with --np): start the ranks K times, samples pooled
  std::string pool;                   ///< hidden: the launcher's sample pool file (launch_pool.h)
  int launch = 1;                     ///< hidden: which launch of --launches this is (1 = the first)
  std::string test_fault;             ///< hidden: RANK:KIND[:SIZE] for tests (exit|kill|stop|corrupt|throw)
};

/// Everything the options mean, validated (sizes parsed, targets resolved).
struct Plan {
  std::vector<Target> targets;
  bool compare = false;            ///< report target[0] / target[1] per size
  bool sweep = true;               ///< run the size sweep (not with --scaling: it uses targets[0])
  bool pt2pt = false;              ///< the sweep measures every pair point to point instead
  std::vector<std::size_t> sizes;  ///< bytes
  Coll coll = Coll::kAllReduce;
  int root = 0;
  DType dtype = DType::kFloat32;
  RedOp op = RedOp::kSum;
  std::size_t chunk_bytes = 0;
  Algo algo = Algo::kAuto;
  AlgoSizes algo_sizes;              ///< --oneshot-max, --rd-max, --ring-min
  std::size_t chain_min_bytes = 0;
  std::size_t grad_bytes = 0;
  struct Fault {
    int rank = -1;
    std::string kind;
    std::size_t at_bytes = 0;
    int launch = 0;  ///< with --launches: only in this launch (1 = the first); 0: every launch
  } fault;
};

/// Registers every flag on `app`.
void add_allreduce_flags(CLI::App& app, Options& opt);

/// Validates and resolves the options. Throws InputError with a one-line reason.
Plan make_plan(const Options& opt);

}  // namespace nodeprobe::allreduce
