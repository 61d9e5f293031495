#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <sstream>

#include "ar_math.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/error.h"

namespace nodeprobe::allreduce {
namespace {

std::size_t size_or_throw(const std::string& flag, const std::string& text) {
  std::string why;
  const auto v = parse_size(text, &why);
  if (!v) throw InputError(flag + ": " + why);
  return static_cast<std::size_t>(*v);
}

// --test-fault RANK:KIND[:SIZE[:LAUNCH]]: rank RANK fails as KIND at the
// first size >= SIZE (LAUNCH: only in that launch of --launches).
Plan::Fault parse_test_fault(const std::string& text) {
  const std::string usage = "--test-fault RANK:KIND[:SIZE[:LAUNCH]]";
  std::vector<std::string> field;
  std::istringstream in(text);
  for (std::string f; std::getline(in, f, ':');) field.push_back(f);
  if (field.size() < 2 || field.size() > 4) throw InputError(usage + ": got '" + text + "'");
  auto whole = [&](const std::string& f, const char* what) {
    int v = -1;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (ec != std::errc() || end != f.data() + f.size() || v < 0)
      throw InputError(usage + ": bad " + what + " '" + f + "'");
    return v;
  };
  Plan::Fault fault;
  fault.rank = whole(field[0], "rank");
  fault.kind = field[1];
  static const char* kKinds[] = {"exit", "kill", "stop", "corrupt", "throw"};
  if (std::none_of(std::begin(kKinds), std::end(kKinds), [&](const char* k) { return fault.kind == k; }))
    throw InputError("--test-fault kind must be exit, kill, stop, corrupt or throw");
  if (field.size() > 2) fault.at_bytes = size_or_throw("--test-fault", field[2]);
  if (field.size() > 3) fault.launch = whole(field[3], "launch");
  return fault;
}

}  // namespace

void add_allreduce_flags(CLI::App& app, Options& o) {
  add_common_flags(app, o.common);
  app.add_option("--backend", o.backends,
                 "What to measure, comma-separated: mpi, fabric[:PROVIDER], nccl[:socket|ofi], or a "
                 "bare libfabric provider (tcp, efa, shm, udp) meaning fabric over it")
      ->delimiter(',')
      ->type_name("LIST");
  app.add_option("--compare", o.compare,
                 "Run two targets in one invocation and report the busbw ratio A/B per size "
                 "(e.g. efa,tcp or fabric:tcp,mpi)")
      ->delimiter(',')
      ->type_name("A,B");
  app.add_option("--provider", o.provider, "libfabric provider for 'fabric' (tcp, efa, shm, udp, ...)");
  app.add_option("-b,--minbytes", o.min_bytes, "Smallest message size (K, M, G = powers of 1024; kB, MB = 1000)")
      ->check(size_range())
      ->capture_default_str();
  app.add_option("-e,--maxbytes", o.max_bytes, "Largest message size")->check(size_range())->capture_default_str();
  app.add_option("-f,--stepfactor", o.factor, "Multiply the size by F between steps (0: add -i bytes instead)")
      ->check(finite_range(0, 1024));
  app.add_option("-i,--stepbytes", o.step_bytes, "Add this many bytes between steps (with -f 0)")
      ->check(size_range())
      ->capture_default_str();
  app.add_option("-n,--iters", o.iters, "Timed iterations per size")->check(finite_range(1, 1000000));
  app.add_option("-w,--warmup_iters", o.warmup, "Untimed warm-up iterations per size")
      ->check(finite_range(0, 100000));
  app.add_option("--spread", o.spread_ms,
                 "Spread the timed iterations of each size over at least MS milliseconds (every rank pauses, then "
                 "a barrier, before each), so the samples see more than one scheduling slice of a busy host "
                 "(0: back to back, as nccl-tests)")
      ->check(finite_range(0, 600000))
      ->capture_default_str();
  app.add_option("-c,--check", o.check, "Data-check iterations after timing (0 disables)")
      ->check(finite_range(0, 1000));
  app.add_option("--collective", o.collective,
                 "allreduce (default), allgather, reducescatter, broadcast, reduce, alltoall, sendrecv: nccl-tests' "
                 "collectives with their sizes, algbw/busbw factors and data checks (also all_gather, "
                 "reduce_scatter, all_reduce_perf ...)")
      ->capture_default_str();
  app.add_option("-r,--root", o.root, "Root rank of broadcast and reduce")->check(finite_range(0, 1 << 20));
  app.add_option("-d,--datatype", o.dtype, "float, int32 (all backends); bfloat16, half (nccl)");
  app.add_option("-o,--op", o.op, "sum, prod, min, max (avg: nccl)");
  app.add_option("--inplace", o.inplace, "1: measure out-of-place and in-place (as nccl-tests); 0: out-of-place only")
      ->check(finite_range(0, 1));
  app.add_option("--chunk", o.chunk,
                 "fabric: largest pipeline chunk; each allreduce uses a quarter of a ring segment, "
                 "at least 64 KiB and at most this")
      ->check(size_range(64))
      ->capture_default_str();
  app.add_option("--window", o.window, "fabric: chunks in flight per direction")->check(finite_range(1, 1024));
  app.add_option("--algo", o.algo,
                 "fabric: allreduce algorithm: auto (by size: --oneshot-max, --rd-max, --ring-min), oneshot (every "
                 "rank sends its vector to all others, one step), rd (recursive doubling), rabenseifner "
                 "(recursive-halving reduce-scatter + recursive-doubling allgather), ring, linear (reduce to "
                 "rank 0, then rank 0 sends to all), twoshot (block p straight to rank p, which reduces it, then "
                 "straight back to all: two steps, the ring's bytes); allgather and "
                 "reducescatter: auto (the ring from --ring-min), rd (allgather's recursive doubling), rh "
                 "(reducescatter's recursive halving), ring")
      ->check(CLI::IsMember({"auto", "oneshot", "rd", "rh", "rabenseifner", "ring", "linear", "twoshot"}));
  app.add_option("--oneshot-max", o.oneshot_max,
                 "fabric, --algo auto: one-shot up to this size (bytes, K/M/G; 0: never) on at most 8 ranks");
  app.add_option("--rd-max", o.rd_max, "fabric, --algo auto: recursive doubling up to this size (bytes, K/M/G)");
  app.add_option("--linear-max", o.linear_max,
                 "fabric, --algo auto: linear (reduce to rank 0, then rank 0 sends to all) up to this size on 3 or "
                 "4 ranks, ahead of recursive doubling (bytes, K/M/G; 0: never)")
      ->capture_default_str();
  app.add_option("--ring-min", o.ring_min,
                 "fabric, --algo auto: the ring from this size (bytes, K/M/G); allreduce: Rabenseifner between "
                 "--rd-max and it (default 4M); allgather, reducescatter: recursive doubling / halving below it "
                 "(default 1M, 64K)");
  app.add_option("--chain-min", o.chain_min,
                 "fabric broadcast and reduce: a chain through the ranks pipelined in pieces from this size (bytes, "
                 "K/M/G), the binomial tree below")
      ->capture_default_str();
  app.add_option("--iface", o.iface,
                 "Interface for the mesh check, the control channel and fabric over tcp "
                 "(default: NCCL_SOCKET_IFNAME, else the first non-loopback interface)");
  app.add_option("--nccl-net", o.nccl_net, "NCCL network for 'nccl': socket or ofi (aws-ofi-nccl, EFA)")
      ->check(CLI::IsMember({"socket", "ofi"}));
  app.add_flag("--mesh", o.mesh, "Preflight: every rank connects to every other over TCP");
  app.add_flag("--pt2pt", o.pt2pt,
               "Instead of the allreduce sweep: latency (half a ping-pong round trip, p50/p99) and bandwidth "
               "(windows of 64 messages) between every pair of ranks at each size, per mpi/fabric target");
  app.add_option("--mesh-port", o.mesh_port, "Mesh: listen on PORT + local rank (0: any free port)")
      ->check(finite_range(0, 65535));
  app.add_option("--rendezvous-port", o.rendezvous_port,
                 "Mesh: also check every rank reaches rank 0 on this port (e.g. 29500)")
      ->check(finite_range(0, 65535));
  app.add_option("--mesh-timeout", o.mesh_timeout_s, "Mesh: seconds per connection attempt")
      ->check(finite_range(0.05, 60.0));
  app.add_flag("--scaling", o.scaling, "Data-parallel step emulation on 1, 2, 4 ... nodes");
  app.add_option("--compute-ms", o.compute_ms, "Scaling: compute time per step (ms)")
      ->check(finite_range(0.0, 1e6));
  app.add_option("--grad-bytes", o.grad_bytes, "Scaling: gradient bytes allreduced per step")
      ->check(size_range(1))
      ->capture_default_str();
  app.add_option("--bucket-mb", o.bucket_mb, "Scaling: bucket size in MiB (PyTorch DDP: 25)")
      ->capture_default_str()
      ->check(finite_range(0.001, 1e6));
  app.add_option("--steps", o.steps, "Scaling: timed steps per node count")->check(finite_range(1, 100000));
  app.add_option("--stall-timeout", o.stall_timeout_s,
                 "End the run when a rank is silent this long (stopped, hung host)")
      ->check(finite_range(1.0, 1e6));
  app.add_option("--np", o.np, "Start N local ranks through mpirun (single-node run without a launcher)")
      ->check(finite_range(1, 4096));
  app.add_option("--launches", o.launches,
                 "With --np: start the ranks K times (separate mpirun launches, 1 s apart) and report every "
                 "launch's timed samples pooled, so the spread holds what changes between launches (process and "
                 "vCPU placement); -n iterations per launch")
      ->check(finite_range(1, 100))
      ->capture_default_str();
  app.add_option("--pool", o.pool)->group("");
  app.add_option("--launch", o.launch)->group("");
  app.add_flag("--text-to-stderr", o.common.text_to_stderr)->group("");
  app.add_option("--test-fault", o.test_fault)->group("");
}

Plan make_plan(const Options& o) {
  Plan p;
  const auto dt = dtype_from_string(o.dtype);
  if (!dt) throw InputError("unknown datatype '" + o.dtype + "' (float, int32, bfloat16, half)");
  p.dtype = *dt;
  const auto op = redop_from_string(o.op);
  if (!op) throw InputError("unknown op '" + o.op + "' (sum, prod, min, max, avg)");
  p.op = *op;
  const auto coll = coll_from_string(o.collective);
  if (!coll)
    throw InputError("unknown collective '" + o.collective +
                     "' (allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv)");
  p.coll = *coll;
  p.root = o.root;
  if (p.root != 0 && p.coll != Coll::kBroadcast && p.coll != Coll::kReduce)
    throw InputError("-r/--root applies to broadcast and reduce, not " + std::string(to_string(p.coll)));

  const std::size_t lo = size_or_throw("-b", o.min_bytes);
  const std::size_t hi = size_or_throw("-e", o.max_bytes);
  const std::size_t step = size_or_throw("-i", o.step_bytes);
  if (lo > hi)
    throw InputError("-b " + o.min_bytes + " is larger than -e " + o.max_bytes);
  if (o.factor != 0 && !(o.factor > 1)) throw InputError("-f must be > 1 (or 0 with -i)");
  if (o.factor == 0 && step == 0) throw InputError("-f 0 needs -i STEP > 0");
  p.sizes = size_sweep(lo, hi, o.factor, step, dtype_size(p.dtype));
  if (p.sizes.empty())
    throw InputError("no size in -b " + o.min_bytes + " .. -e " + o.max_bytes + " holds one " +
                     std::string(to_string(p.dtype)) + " element");
  p.chunk_bytes = size_or_throw("--chunk", o.chunk);
  if (p.chunk_bytes < 64) throw InputError("--chunk must be at least 64 bytes");
  p.grad_bytes = size_or_throw("--grad-bytes", o.grad_bytes);
  // rh: reducescatter's recursive halving, the log-step schedule rd names for allgather.
  const bool halving = o.algo == "rh" || o.algo == "recursive_halving";
  if (!algo_from_string(halving ? "rd" : o.algo, &p.algo))
    throw InputError("--algo '" + o.algo + "': use auto, oneshot, rd, rh, rabenseifner, ring, linear or twoshot");
  const bool gathers = p.coll == Coll::kAllGather || p.coll == Coll::kReduceScatter;
  const std::string coll_name(to_string(p.coll));
  if (p.algo != Algo::kAuto && !gathers && p.coll != Coll::kAllReduce)
    throw InputError("--algo chooses the fabric's allreduce, allgather and reducescatter algorithm; " + coll_name +
                     " has one schedule (docs/allreduce.md)");
  const std::string log_name = p.coll == Coll::kReduceScatter ? "rh" : "rd";
  if (gathers && p.algo != Algo::kAuto && p.algo != Algo::kRing && (p.algo != Algo::kRecursiveDoubling ||
                                                                    (halving != (p.coll == Coll::kReduceScatter))))
    throw InputError("--algo '" + o.algo + "': " + coll_name + " runs auto, " + log_name + " or ring");
  if (halving && p.coll != Coll::kReduceScatter)
    throw InputError("--algo rh (recursive halving) is reducescatter's; " + coll_name +
                     (p.coll == Coll::kAllReduce ? " runs auto, oneshot, rd, rabenseifner, ring, linear or twoshot" : " has one schedule"));
  p.algo_sizes.oneshot_max = size_or_throw("--oneshot-max", o.oneshot_max);
  p.algo_sizes.rd_max = size_or_throw("--rd-max", o.rd_max);
  p.algo_sizes.linear_max = size_or_throw("--linear-max", o.linear_max);
  // Where the ring overtakes the log-step schedules, per collective, measured
  // on 4 netns hosts at 1 Gbit/s (docs/allreduce.md, Fabric algorithms).
  const std::string ring_min = !o.ring_min.empty()               ? o.ring_min
                               : p.coll == Coll::kAllGather      ? "1M"
                               : p.coll == Coll::kReduceScatter  ? "64K"
                                                                 : "4M";
  p.algo_sizes.ring_min = size_or_throw("--ring-min", ring_min);
  p.chain_min_bytes = size_or_throw("--chain-min", o.chain_min);
  // Allreduce's three thresholds are ordered; the other collectives use --ring-min alone.
  if (p.coll == Coll::kAllReduce && p.algo_sizes.rd_max >= p.algo_sizes.ring_min)
    throw InputError("--rd-max " + o.rd_max + " must be below --ring-min " + ring_min);
  if (p.coll == Coll::kAllReduce && p.algo_sizes.linear_max >= p.algo_sizes.ring_min)
    throw InputError("--linear-max " + o.linear_max + " must be below --ring-min " + ring_min);
  if (p.coll == Coll::kAllReduce && p.algo_sizes.oneshot_max >= p.algo_sizes.ring_min)
    throw InputError("--oneshot-max " + o.oneshot_max + " must be below --ring-min " + ring_min);

  if (!o.compare.empty()) {
    if (!o.backends.empty()) throw InputError("use either --backend or --compare, not both");
    if (o.compare.size() != 2) throw InputError("--compare takes exactly two targets (A,B)");
    p.compare = true;
  }
  for (const auto& text : p.compare ? o.compare : o.backends) {
    Target t = parse_target(text, o.provider);
    if (t.backend == "nccl" && t.provider.empty()) t.provider = o.nccl_net;
    if (std::find(p.targets.begin(), p.targets.end(), t) != p.targets.end())
      throw InputError("target '" + t.label() + "' is given twice");
    p.targets.push_back(t);
  }
  // --mesh alone runs only the preflight; otherwise MPI is the default. --scaling
  // runs the step emulation over the first target instead of the sweep.
  if (p.targets.empty() && (!o.mesh || o.scaling)) p.targets.push_back({"mpi", ""});
  if (o.scaling) {
    if (p.compare) throw InputError("--scaling runs over one target: use --backend, not --compare");
    p.sweep = false;
  }
  if (p.coll != Coll::kAllReduce && (o.scaling || o.pt2pt))
    throw InputError(std::string(o.scaling ? "--scaling emulates data-parallel allreduce steps"
                                           : "--pt2pt measures pairs, not a collective") +
                     ": it does not take --collective " + std::string(to_string(p.coll)));
  if (o.pt2pt) {
    if (o.scaling) throw InputError("use either --pt2pt or --scaling, not both");
    if (p.compare) throw InputError("--pt2pt measures pairs per target: use --backend, not --compare");
    for (const auto& t : p.targets)
      if (t.backend == "nccl") throw InputError("--pt2pt runs over mpi and fabric targets, not " + t.label());
    p.pt2pt = true;
  }
  if (o.launches > 1 && (o.pt2pt || o.scaling || !p.sweep))
    throw InputError("--launches pools the allreduce sweep's samples; it does not apply to --pt2pt or --scaling");

  for (const auto& t : p.targets) {
    const bool half = p.dtype == DType::kBFloat16 || p.dtype == DType::kFloat16;
    if (half && t.backend != "nccl")
      throw InputError(std::string(to_string(p.dtype)) + " needs --backend nccl (" + t.label() +
                       " reduces float32 and int32)");
    if (p.op == RedOp::kAvg && t.backend != "nccl" && coll_reduces(p.coll))
      throw InputError("-o avg needs --backend nccl (MPI has no average)");
  }
  if (p.op == RedOp::kAvg && p.dtype == DType::kInt32 && coll_reduces(p.coll))
    throw InputError("-o avg is defined for floating types only here");

  if (!o.test_fault.empty()) p.fault = parse_test_fault(o.test_fault);
  return p;
}

}  // namespace nodeprobe::allreduce
