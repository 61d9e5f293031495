#include "driver.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>

#include "ar_math.h"
#include "control.h"
#include "launch_pool.h"
#include "mesh.h"
#include "net_util.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/emit.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/stop.h"
#include "pt2pt.h"
#include "report_build.h"
#include "scaling.h"
#include "shm_segments.h"
#include "sweep.h"
#include "table.h"

namespace nodeprobe::allreduce {
namespace {

constexpr const char* kTool = "nodeprobe-allreduce";
// Rank 0's monitor ends a stopped run within a second; the stop handlers'
// own exit is the backstop for a rank that cannot.
constexpr double kRankGrace_s = 3;

// What rank 0 has so far; the watchdog reads it to write a partial report.
struct Shared {
  std::timed_mutex mu;
  Report skeleton;
  RunData data;
};

Report finish_report(Report r, ProbeResult p) {
  r.probes = {std::move(p)};
  finalize_report(r);
  return r;
}

Report skeleton(const Options& opt, int argc, char** argv) {
  Report r = new_report(kTool, argc, argv, opt.common.label);
  r.host = collect_host_facts(FsRoot(opt.common.sysroot), environ);
  r.host.libfabric = libfabric_version();
  r.host.nccl = nccl_library_version();
  return r;
}

/// Settings go to config; what the node gave us (interface, thread level)
/// to environment; deadlines to data.limits (they bound the run, not the numbers).
void fill_config(RunData& d, const Options& opt, const Plan& plan, const HostMap& hosts, int nranks,
                 int thread_level, const std::string& ip, const std::string& iface) {
  Json c;
  Json targets = Json::array();
  for (const auto& t : plan.targets) targets.push_back(t.label());
  c["targets"] = targets;
  c["compare"] = plan.compare;
  c["sweep"] = plan.sweep;
  c["minbytes"] = plan.sizes.front();
  c["maxbytes"] = plan.sizes.back();
  c["stepfactor"] = opt.factor;
  c["iters"] = opt.iters;
  c["warmup_iters"] = opt.warmup;
  c["spread_ms"] = opt.spread_ms;
  c["launches"] = opt.launches;
  c["check"] = opt.check;
  c["datatype"] = std::string(to_string(plan.dtype));
  c["op"] = std::string(to_string(plan.op));
  c["collective"] = std::string(to_string(plan.coll));
  if (plan.coll == Coll::kBroadcast || plan.coll == Coll::kReduce) {
    c["root"] = plan.root;
    c["chain_min_bytes"] = plan.chain_min_bytes;
  }
  c["inplace"] = opt.inplace;
  c["chunk_bytes"] = plan.chunk_bytes;
  c["window"] = opt.window;
  c["algo"] = to_string(plan.algo);
  c["oneshot_max_bytes"] = plan.algo_sizes.oneshot_max;
  c["rd_max_bytes"] = plan.algo_sizes.rd_max;
  c["linear_max_bytes"] = plan.algo_sizes.linear_max;
  c["ring_min_bytes"] = plan.algo_sizes.ring_min;
  c["ranks"] = nranks;
  c["hosts"] = hosts.hosts;
  if (opt.mesh) c["mesh"] = true;
  if (plan.pt2pt) c["pt2pt"] = true;
  if (opt.scaling)
    c["scaling"] = {{"compute_ms", opt.compute_ms}, {"grad_bytes", plan.grad_bytes}, {"bucket_mb", opt.bucket_mb},
                    {"steps", opt.steps}};
  d.config = c;
  d.environment["interface"] = iface;
  d.environment["interface_ip"] = ip;
  d.environment["mpi_thread_level"] = std::to_string(thread_level);
  d.limits = {{"timeout_s", opt.common.timeout_s}, {"stall_timeout_s", opt.stall_timeout_s}};
  if (opt.mesh)
    d.limits["mesh"] = {{"port", opt.mesh_port}, {"rendezvous_port", opt.rendezvous_port},
                        {"timeout_s", opt.mesh_timeout_s}};
}

int run_inner(Options& opt, int argc, char** argv, double t_start, int thread_level) {
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &nranks);
  const HostMap hosts = host_map(world);
  Shared shared;
  if (rank == 0) {
    shared.skeleton = skeleton(opt, argc, argv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
      std::string v(lib, static_cast<std::size_t>(len));
      shared.skeleton.host.mpi = v.substr(0, v.find_first_of(",\n"));
    }
  }
  std::ostream& out = text_stream(opt.common);
  const bool talk = rank == 0 && !opt.common.quiet;

  // Input: the same flags on every rank, so every rank reaches the same verdict.
  Plan plan;
  LocalAddr addr;
  std::unique_ptr<SamplePool> pool;
  Control ctl(world, hosts);
  auto input_error = [&](const std::string& why) {
    ctl.stop();
    if (rank == 0) {
      std::cerr << kTool << ": " << why << "\n";
      std::lock_guard<std::timed_mutex> lk(shared.mu);
      ProbeResult p = build_probe(shared.data, Status::kError, why);
      return emit_report(finish_report(shared.skeleton, p), opt.common, exit_code::kError, kTool);
    }
    return exit_code::kError;
  };
  try {
    run_agreed(world, [&] {
      plan = make_plan(opt);
      if (opt.np > 0) throw InputError("--np starts local ranks itself; leave it out under mpirun/srun");
      if (opt.launches > 1 && opt.pool.empty())
        throw InputError("--launches starts the ranks itself: give it with --np, without mpirun/srun");
      if (rank == 0 && !opt.pool.empty()) pool = std::make_unique<SamplePool>(opt.pool);
      if (opt.mesh && nranks < 2) throw InputError("--mesh needs at least 2 ranks (mpirun -np N)");
      if (opt.scaling)
        if (const std::string why = scaling_host_problem(hosts); !why.empty()) throw InputError(why);
      if (rank == 0) {
        const std::string why = check_output_paths(opt.common);
        if (!why.empty()) throw InputError(why);
      }
      std::string why;
      addr = pick_interface(local_ipv4_addrs(), opt.iface, &why);
      if (addr.ip.empty()) throw InputError("on " + process_hostname() + ": " + why);
    });
  } catch (const InputError& e) {
    return input_error(e.what());
  } catch (const AgreedError& e) {
    return input_error(e.what());
  }

  {
    std::lock_guard<std::timed_mutex> lk(shared.mu);
    fill_config(shared.data, opt, plan, hosts, nranks, thread_level, addr.ip, addr.iface);
    shared.data.hosts = hosts;
    shared.data.nranks = nranks;
    shared.data.dtype = plan.dtype;
    shared.data.op = plan.op;
    shared.data.coll = plan.coll;
    shared.data.root = plan.root;
    shared.data.compare = plan.compare;
    shared.data.started_s = t_start;
  }
  CommonOptions provisional = opt.common;
  provisional.quiet = true;
  auto on_fatal = [&](Status s, const std::string& reason, int code, bool ahead) {
    std::unique_lock<std::timed_mutex> lk(shared.mu, std::defer_lock);
    const bool locked = lk.try_lock_for(std::chrono::milliseconds(ahead ? 200 : 2000));
    if (ahead && !locked) return;  // the final write follows in half a second
    RunData data = locked ? shared.data : RunData{};
    emit_report(finish_report(shared.skeleton, build_probe(data, s, reason)), ahead ? provisional : opt.common, code,
                kTool);
  };
  const double deadline = opt.common.timeout_s > 0 ? t_start + opt.common.timeout_s : 0;
  // Rank 0 keeps the run's deadline (the others only a fallback in Control).
  if (rank == 0 && deadline > 0) set_stop_deadline(opt.common.timeout_s, t_start);
  ctl.start(addr.ip, deadline, opt.stall_timeout_s, on_fatal);
  set_emergency_writer([&ctl] { ctl.end_for_stop(); });
  if (rank == 0) {
    std::lock_guard<std::timed_mutex> lk(shared.mu);
    shared.data.unmonitored = ctl.unmonitored();
    shared.data.pids.clear();
    for (int r = 0; r < nranks; ++r) shared.data.pids.push_back(ctl.pid_of(r));
  }
  if (talk) {
    out << "# " << kTool << " " << kVersion << ": " << nranks << " rank(s) on " << hosts.node_count()
        << " host(s), " << (plan.pt2pt ? std::string() : std::string(to_string(plan.coll)) + " ") << to_string(plan.dtype)
        << (coll_reduces(plan.coll) ? " " + std::string(to_string(plan.op)) : std::string())
        << (plan.coll == Coll::kBroadcast || plan.coll == Coll::kReduce ? " root " + std::to_string(plan.root)
                                                                         : std::string())
        << ", interface " << addr.iface
        << " (" << addr.ip << ")\n";
    if (!hosts.oversubscribed.empty())
      out << "# oversubscribed: " << hosts.oversubscribed << " (per-rank times are not compared)\n";
    if (pool)
      out << "# launch " << opt.launch << " of " << opt.launches << ": the table holds the timed samples of "
          << (opt.launch > 1 ? "every launch so far" : "this launch") << ", pooled\n";
    out << "#\n" << std::flush;
  }

  BackendContext ctx;
  ctx.comm = world;
  ctx.opt = &opt;
  ctx.plan = &plan;
  ctx.single_host = hosts.node_count() == 1;
  ctx.local_rank = hosts.local_rank;
  ctx.local_size = hosts.local_size;
  ctx.iface_ip = addr.ip;
  ctx.iface = addr.iface;
  ctx.pool = pool.get();
  try {
    if (opt.mesh) {
      ctl.set_phase("mesh");
      MeshOptions mo{addr.ip, addr.iface, opt.mesh_port, opt.rendezvous_port, opt.mesh_timeout_s};
      MeshResult m = run_mesh(world, mo, hosts.local_rank);
      if (rank == 0) {
        if (talk) out << mesh_text(m, hosts) << "#\n" << std::flush;
        std::lock_guard<std::timed_mutex> lk(shared.mu);
        shared.data.mesh = std::move(m);
      }
    }
    for (const auto& t : plan.targets) {
      if (!plan.sweep) break;
      if (rank == 0) {
        std::lock_guard<std::timed_mutex> lk(shared.mu);
        TargetResult partial;
        partial.target = t;
        partial.status = Status::kError;
        partial.reason = "did not finish";
        shared.data.targets.push_back(partial);
      }
      bool header = false;
      SweepHooks hooks;
      hooks.phase = [&](const std::string& p) { ctl.set_phase(p); };
      hooks.fail = [&](const std::string& what) { ctl.fail(what); };
      hooks.row_done = [&](const SizeRow& row) {
        if (talk && !header) {
          out << "# " << t.label() << "\n" << table_header();
          header = true;
        }
        if (talk) out << table_row(row, plan) << std::flush;
        std::lock_guard<std::timed_mutex> lk(shared.mu);
        shared.data.targets.back().rows.push_back(row);
      };
      TargetResult res = run_target(ctx, t, hooks);
      if (talk) {
        if (!res.rows.empty()) out << table_footer(res.rows);
        if (!res.pt2pt.empty()) out << pt2pt_text(res.pt2pt, t.label());
        if (res.status == Status::kSkip || res.status == Status::kError)
          out << "# " << t.label() << ": " << to_string(res.status) << ": " << res.reason << "\n";
        else
          out << "# " << t.label() << " transport: " << res.transport << ", device: " << res.device << "\n";
        if (opt.common.verbose) out << "# details: " << res.details.dump() << "\n";
        out << "#\n" << std::flush;
      }
      if (rank == 0) {
        std::lock_guard<std::timed_mutex> lk(shared.mu);
        shared.data.targets.back() = std::move(res);
      }
    }
    if (rank == 0 && talk && plan.compare && shared.data.targets.size() == 2)
      out << ratio_table(shared.data.targets[0], shared.data.targets[1]) << "#\n" << std::flush;
    if (opt.scaling) {
      const Target st = plan.targets.front();
      ScalingHooks sh;
      sh.phase = [&](const std::string& p) { ctl.set_phase(p); };
      try {
        ScalingResult s = run_scaling(ctx, st, hosts, thread_level >= MPI_THREAD_SERIALIZED, sh);
        if (rank == 0) {
          if (talk) out << scaling_text(s, st.label()) << "#\n" << std::flush;
          std::lock_guard<std::timed_mutex> lk(shared.mu);
          shared.data.scaling = std::move(s);
          shared.data.scaling_target = st.label();
        }
      } catch (const AgreedError& e) {
        std::lock_guard<std::timed_mutex> lk(shared.mu);
        shared.data.scaling_error = e.what();
      }
    }
  } catch (const InputError& e) {
    return input_error(e.what());
  } catch (const std::exception& e) {
    ctl.fail(e.what());
  }

  ctl.set_phase("writing the report");
  int rc = 0;
  if (rank == 0) {
    // From here neither the monitor nor the stop handlers replace the report.
    begin_final_write();
    std::lock_guard<std::timed_mutex> lk(shared.mu);
    ctl.stop();
    if (pool) {
      try {
        pool->save();
      } catch (const std::exception& e) {
        std::cerr << kTool << ": the next launch cannot pool this one's samples: " << e.what() << "\n";
      }
    }
    const Report r = finish_report(shared.skeleton, build_probe(shared.data));
    rc = emit_report(r, opt.common, report_exit_code(r), kTool);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, world);
  ctl.stop();
  return rc;
}

}  // namespace

int run_ranks(Options& opt, int argc, char** argv) {
  const double t_start = steady_clock().now_s();
  install_stop_handlers({kTool, 0, kRankGrace_s, false});
  // Before MPI_Init: Open MPI's libfabric endpoints create shm regions named with our pid.
  prepare_rank_segments();
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    std::cerr << kTool << ": MPI_Init_thread failed\n";
    return exit_code::kError;
  }
  int rc = exit_code::kError;
  try {
    rc = run_inner(opt, argc, argv, t_start, provided);
  } catch (const std::exception& e) {
    std::cerr << kTool << ": " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, exit_code::kError);  // top level only: the ranks are out of step
  }
  MPI_Finalize();
  return rc;
}

int write_error_report(const Options& opt, int argc, char** argv, Status status, const std::string& reason) {
  std::cerr << kTool << ": " << reason << "\n";
  if (!check_output_paths(opt.common).empty()) return exit_code::kError;
  RunData d;
  const Report r = finish_report(skeleton(opt, argc, argv), build_probe(d, status, reason));
  return emit_report(r, opt.common, status == Status::kSkip ? exit_code::kSkip : exit_code_for(status), kTool);
}

}  // namespace nodeprobe::allreduce
