#include "fleet_rank.h"

#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include "coordinator.h"
#include "fleet_cmd.h"
#include "fleet_phases.h"
#include "mpi_util.h"
#include "net_util.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/subprocess.h"
#include "worker.h"

namespace nodeprobe::fleet {
namespace {

constexpr double kConnectTimeout = 30;

volatile std::sig_atomic_t g_cancel = 0;
extern "C" void on_signal(int) { g_cancel = 1; }

std::ostream& text_stream(const diag::FleetOptions& opt) { return opt.json_out == "-" ? std::cerr : std::cout; }

Json make_config(const diag::FleetOptions& opt, const std::string& provider, const allreduce::LocalAddr& addr,
                 int ranks) {
  return Json{{"profile", opt.profile},
              {"pairs", opt.pairs},
              {"skip", opt.skip},
              {"target", "fabric:" + provider},
              {"pair_bytes", diag::fleet_pair_bytes(opt)},
              {"min_iters", opt.profile == "full" ? 10 : 3},
              {"min_seconds", opt.profile == "full" ? 2.0 : 0.5},
              {"outlier", {{"share", opt.share}, {"mads", opt.mad_k}, {"min_deviation", OutlierOptions{}.min_deviation}}},
              {"stall_timeout_s", opt.stall_timeout_s},
              {"timeout_s", opt.timeout_s},
              {"ranks", ranks},
              {"interface", {{"name", addr.iface}, {"ip", addr.ip}}},
              {"accept_args", opt.accept_args},
              {"node_json_dir", opt.node_json_dir}};
}

// The same checks on every rank, so every rank reaches the same decision.
std::string local_input_problem(const diag::FleetOptions& opt, const allreduce::HostMap& hosts, int rank, int size,
                                allreduce::LocalAddr* addr) {
  if (auto why = diag::check_fleet_options(opt); !why.empty()) return why;
  if (!opt.hostfile.empty() || !opt.launcher_args.empty())
    return "--hostfile/--launcher-arg start mpirun: give them to `nodeprobe fleet`, not to ranks under a launcher";
  if (hosts.node_count() != size)
    return "nodeprobe fleet runs one rank per node (mpirun --map-by ppr:1:node, srun --ntasks-per-node=1); got " +
           std::to_string(size) + " ranks on " + std::to_string(hosts.node_count()) + " host(s)";
  std::string why;
  *addr = allreduce::pick_interface(allreduce::local_ipv4_addrs(), opt.iface, &why);
  if (addr->ip.empty()) return "on " + process_hostname() + ": " + why;
  if (rank == 0)
    for (const std::string* p : {&opt.json_out, &opt.html_out})
      if (auto w = check_output_path(*p); !w.empty()) return w;
  return {};
}

int run_rank0(const diag::FleetOptions& opt, int argc, char** argv, double t_start, int size,
              const allreduce::HostMap& hosts, const allreduce::LocalAddr& addr, Coordinator& co,
              const WorkerConfig& wcfg) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  WorkerEnd own_end = WorkerEnd::kLost;
  std::thread own([&] { own_end = run_worker(wcfg); });
  co.accept_all(kConnectTimeout);

  FleetReport r = diag::new_fleet_report(argc, argv, opt.label);
  for (int i = 0; i < size; ++i) {
    FleetNode n;
    n.rank = i;
    n.host = hosts.rank_host[static_cast<std::size_t>(i)];
    n.verdict = Status::kPass;  // until its own checks or the fleet say otherwise
    r.nodes.push_back(n);
  }
  FleetContext c;
  c.opt = &opt;
  c.co = &co;
  c.report = &r;
  c.hosts = hosts;
  c.node_reports.resize(static_cast<std::size_t>(size));
  c.have_report.assign(static_cast<std::size_t>(size), false);
  c.deadline_s = opt.timeout_s > 0 ? t_start + opt.timeout_s : 0;
  c.log = opt.quiet ? nullptr : &text_stream(opt);
  mark_lost_nodes(c);
  c.provider = choose_provider(c);
  r.config = make_config(opt, c.provider, addr, size);
  // Decided here from what every node said in its hello, so all agree.
  const PairBackendChoice pb = choose_pair_backend(c);
  c.pair_backend = pb.backend.empty() ? "none" : pb.backend;
  r.config["pair_backend"] = {{"name", c.pair_backend}, {"requested", opt.pair_backend}, {"reason", pb.reason}};
  r.config["pair_target"] = c.pair_backend == "fabric" ? "fabric:" + c.provider : c.pair_backend;
  if (c.log)
    *c.log << "# nodeprobe fleet " << kVersion << ": " << size << " node(s), profile " << opt.profile << ", pairs "
           << opt.pairs << ", fabric:" << c.provider << ", interface " << addr.iface << " (" << addr.ip << ")\n"
           << "# pairs over " << r.config["pair_target"].get<std::string>() << ": " << pb.reason << "\n"
           << std::flush;
  // --pair-backend nccl where a node cannot: the request cannot be met, nothing is measured.
  const bool cannot = pb.backend.empty() && diag::fleet_phase_on(opt, "pairs");
  if (cannot) std::cerr << "nodeprobe fleet: " << pb.reason << "\n";
  c.timings.nodes = size;
  c.timings.startup_s = steady_clock().now_s() - t_start;

  struct Phase {
    const char* name;
    void (*run)(FleetContext&);
  };
  for (const Phase& ph : {Phase{"local", phase_local}, Phase{"mesh", phase_mesh}, Phase{"pairs", phase_pairs},
                          Phase{"ring", phase_ring}}) {
    if (!diag::fleet_phase_on(opt, ph.name)) continue;
    if (c.out_of_time || g_cancel || cannot) {
      FleetPhase p;
      p.name = ph.name;
      p.status = Status::kSkip;
      p.reason = cannot ? "not run: " + pb.reason : g_cancel ? "not run: interrupted" : "not run: --timeout passed";
      r.phases.push_back(p);
      continue;
    }
    ph.run(c);
  }
  mark_lost_nodes(c);
  std::vector<const Report*> reps;
  for (int i = 0; i < size; ++i)
    reps.push_back(c.have_report[static_cast<std::size_t>(i)] ? &c.node_reports[static_cast<std::size_t>(i)] : nullptr);
  judge_fleet(r, reps, outlier_options(opt));
  r.model = fleet_time_model(c.timings);
  if (cannot) {
    r.verdict = Status::kError;
    r.reason = pb.reason;
  } else if (g_cancel) {
    r.verdict = Status::kError;
    r.reason = "interrupted (SIGINT/SIGTERM); the report holds what finished";
  } else if (c.out_of_time) {
    r.verdict = Status::kTimeout;
    r.reason = "--timeout of " + std::to_string(static_cast<int>(opt.timeout_s)) + " s passed; the report holds what finished";
  }
  int rc = diag::emit_fleet_report(opt, r);
  if (g_cancel) rc = exit_code::kInterrupted;
  // After the report: ranks that exit without MPI_Finalize make mpirun end the job.
  const bool finalize = co.lost().empty() && !g_cancel;
  co.goodbye(finalize);
  own.join();
  if (!finalize) {
    std::cout << std::flush;
    std::cerr << std::flush;
    ::_exit(rc);
  }
  static_cast<void>(own_end);
  return rc;
}

}  // namespace

int run_fleet_rank(const diag::FleetOptions& opt, int argc, char** argv) {
  const double t_start = steady_clock().now_s();
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::cerr << "nodeprobe fleet: MPI_Init failed\n";
    return exit_code::kError;
  }
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  int rc = exit_code::kError;
  try {
    const allreduce::HostMap hosts = allreduce::host_map(world);
    allreduce::LocalAddr addr;
    std::string why = local_input_problem(opt, hosts, rank, size, &addr);
    for (const auto& w : allreduce::allgather_strings(world, why))
      if (why.empty() && !w.empty()) why = w;
    if (!why.empty()) {
      if (rank == 0) rc = diag::write_fleet_error(opt, argc, argv, Status::kError, why);
      else rc = exit_code::kError;
      MPI_Finalize();
      return rc;
    }
    WorkerConfig w;
    w.rank = rank;
    w.host = hosts.rank_host[static_cast<std::size_t>(rank)];
    w.ip = addr.ip;
    w.iface = addr.iface;
    w.stall_s = opt.stall_timeout_s;
    w.pair_backend = opt.pair_backend;
    w.pair_gpu = opt.pair_gpu;
    w.bin_dir = self_exe_dir();
    if (const auto c = opt.test_stop.find(':'); c != std::string::npos && std::atoi(opt.test_stop.c_str()) == rank)
      w.stop_phase = opt.test_stop.substr(c + 1);
    std::unique_ptr<Coordinator> co;
    std::string where;
    if (rank == 0) {
      co = std::make_unique<Coordinator>(size, opt.stall_timeout_s, &g_cancel);
      where = addr.ip + " " + std::to_string(co->listen(addr.ip));
    }
    where = allreduce::bcast_string(world, where, 0);
    std::istringstream in(where);
    in >> w.coordinator_ip >> w.coordinator_port;
    if (rank == 0) {
      rc = run_rank0(opt, argc, argv, t_start, size, hosts, addr, *co, w);
      MPI_Finalize();
      return rc;
    }
    const WorkerEnd end = run_worker(w);
    if (end == WorkerEnd::kFinalize) {
      MPI_Finalize();
      return exit_code::kOk;
    }
    std::cerr << std::flush;
    ::_exit(end == WorkerEnd::kNoFinalize ? exit_code::kOk : exit_code::kError);
  } catch (const std::exception& e) {
    std::cerr << "nodeprobe fleet: rank " << rank << ": " << e.what() << "\n";
    MPI_Abort(world, exit_code::kError);  // top level only: the ranks are out of step
  }
  return rc;
}

}  // namespace nodeprobe::fleet
