#include "launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "driver.h"
#include "launch_pool.h"
#include "nodeprobe/clock.h"
#include "shm_segments.h"
#include "nodeprobe/emit.h"
#include "nodeprobe/error.h"
#include "nodeprobe/host_activity.h"
#include "nodeprobe/mpirun.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/safe_remove.h"
#include "nodeprobe/stop.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::allreduce {
namespace {

constexpr const char* kTool = "nodeprobe-allreduce";
// Long enough for mpirun to pass SIGTERM on, rank 0 to write what finished
// on a loaded machine and the kill grace (6 s) to run out.
constexpr double kLauncherGrace_s = 10;

std::string tail(const std::string& text, std::size_t lines) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l.find_first_not_of(" -") != std::string::npos) v.push_back(l);
  std::string out;
  for (std::size_t i = v.size() > lines ? v.size() - lines : 0; i < v.size(); ++i)
    out += (out.empty() ? "" : " | ") + v[i];
  return out.size() > 500 ? "..." + out.substr(out.size() - 500) : out;
}

// Flags the launcher keeps for itself: it writes the report and the exports.
const char* const kLauncherFlags[] = {"--np", "--json", "--timeout", "--prometheus", "--cloudwatch-emf", "--junit"};

// The first line a rank wrote with our prefix, without it.
std::string first_rank_line(const std::string& err) {
  const std::string prefix = std::string(kTool) + ": rank ";
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size() - 5);
  return {};
}

// Whether a launch ended at a deadline (ours passed, mpirun was timed out, or
// rank 0 reported a timeout); `why` gets what it said.
bool launch_timed_out(const std::string& json, const SpawnResult& r, std::string* why) {
  *why = stop_cause() == StopCause::kDeadline ? stop_reason() : "mpirun " + r.describe();
  if (stop_cause() == StopCause::kDeadline || r.timed_out) return true;
  try {
    const Report rep = load_report(json);
    if (rep.probes.empty() || rep.probes.front().status != Status::kTimeout) return false;
    *why = rep.probes.front().reason;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Runs launch k (of opt.launches) through mpirun: its rank 0 writes `json_k`
// and, under --launches, adds its samples to the pool in `dir`. `left_s` is
// the time left to the deadline (0: none).
SpawnResult run_launch(const Options& opt, const std::string& mpirun, std::vector<std::string> args,
                       const std::string& dir, const std::string& json_k, int k, double left_s) {
  const int launches = std::max(1, opt.launches);
  args.insert(args.end(), {"--json", json_k});
  if (launches > 1) args.insert(args.end(), {"--pool", dir + "/pool.json", "--launch", std::to_string(k)});
  // Only the last launch prints the (pooled) table.
  if (k < launches && !opt.common.quiet) args.push_back("--quiet");
  if (opt.common.timeout_s > 0) {
    // The ranks stop a little early so that their report is written and
    // handed on before a runner's deadline of exactly --timeout kills us.
    char t[32];
    // A later launch keeps 3 s: should it be cut, the launcher still has
    // time to report the launches before it.
    std::snprintf(t, sizeof t, "%g", std::max(1.0, left_s - (k > 1 ? 3.0 : std::min(3.0, left_s * 0.1))));
    args.insert(args.end(), {"--timeout", t});
  }
  if (opt.common.json_out == "-") args.push_back("--text-to-stderr");

  SpawnOptions so;
  so.argv = local_mpirun_argv(mpirun, opt.np, self_exe_dir() + "nodeprobe-allreduce", args, ::geteuid() == 0);
  so.capture_stderr = true;
  so.capture_limit = 4u << 20;
  // mpirun forwards SIGTERM to the ranks; rank 0 then writes what finished.
  so.kill_grace_s = 6;
  // The ranks note their pids here, so the regions of those that die by SIGKILL can be removed.
  so.env_set.push_back(std::string(kRankPidDirEnv) + "=" + dir);
  // Open MPI kills its ranks 1 s after it passes SIGTERM on; rank 0's report
  // (its write is fsynced) can take longer on a loaded node. The user's own
  // setting wins.
  if (!std::getenv("OMPI_MCA_odls_base_sigkill_timeout"))
    so.env_set.push_back("OMPI_MCA_odls_base_sigkill_timeout=3");
  if (opt.common.verbose) {
    std::string line;
    for (const auto& a : so.argv) line += (line.empty() ? "" : " ") + a;
    std::cerr << kTool << ": " << line << "\n";
  }
  return run_process(so);
}

}  // namespace

std::vector<std::string> strip_launcher_args(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    bool drop = false;
    for (const char* f : kLauncherFlags) {
      const std::string flag = f;
      if (a == flag) {
        ++i;  // and its value
        drop = true;
      } else if (a.rfind(flag + "=", 0) == 0) {
        drop = true;
      }
    }
    if (!drop) out.push_back(a);
  }
  return out;
}

std::string drop_exit_status_banners(const std::string& err) {
  // Open MPI's help blocks sit between lines of dashes.
  const auto is_rule = [](const std::string& l) {
    return l.size() >= 20 && l.find_first_not_of('-') == std::string::npos;
  };
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_rule(lines[i])) {
      std::size_t j = i + 1;
      while (j < lines.size() && !is_rule(lines[j])) ++j;
      std::string block;
      for (std::size_t k = i + 1; k < j; ++k) block += lines[k] + "\n";
      if (j < lines.size() && (block.find("non-zero exit code") != std::string::npos ||
                               block.find("exited with non-zero status") != std::string::npos)) {
        i = j;  // the block and both rules
        continue;
      }
    }
    out += lines[i] + "\n";
  }
  return out;
}

std::vector<std::string> local_mpirun_argv(const std::string& mpirun, int np, const std::string& self,
                                           const std::vector<std::string>& child_args, bool as_root) {
  std::vector<std::string> v = {mpirun, "-np", std::to_string(np), "--oversubscribe", "--bind-to", "none"};
  if (as_root) v.push_back("--allow-run-as-root");
  v.push_back(self);
  v.insert(v.end(), child_args.begin(), child_args.end());
  return v;
}

int run_local_ranks(const Options& opt, int argc, char** argv) {
  if (auto why = check_output_paths(opt.common); !why.empty()) {
    std::cerr << kTool << ": " << why << "\n";
    return exit_code::kError;
  }
  try {
    // Bad flags are told here, in one line, before any rank starts.
    make_plan(opt);
    if (opt.mesh && opt.np < 2) throw InputError("--mesh needs at least 2 ranks (--np 2 or more)");
    if (opt.scaling) throw InputError("--scaling needs ranks on at least 2 hosts: run it under mpirun -H");
  } catch (const InputError& e) {
    return write_error_report(opt, argc, argv, Status::kError, e.what());
  }
  const std::string mpirun = find_mpirun();
  if (mpirun.empty())
    return write_error_report(opt, argc, argv, Status::kSkip,
                              "--np needs mpirun: none in NODEPROBE_MPIRUN, where the build found MPI, or PATH");
  // The deadline and signals end mpirun through run_process (follow_stop).
  install_stop_handlers({kTool, opt.common.timeout_s, kLauncherGrace_s});
  std::unique_ptr<OwnedTempDir> dir;
  try {
    dir = std::make_unique<OwnedTempDir>(temp_parent(), "nodeprobe-allreduce");
  } catch (const std::exception& e) {
    return write_error_report(opt, argc, argv, Status::kError, e.what());
  }
  const auto base_args = strip_launcher_args(argc, argv);
  const int launches = std::max(1, opt.launches);
  const std::string pool_file = dir->path() + "/pool.json";
  const double t_start = steady_clock().now_s();
  // The ranks share this node and each would read the others as a neighbour;
  // here, around mpirun, they are all this process's children.
  const ActivityMeter activity;
  SpawnResult r;
  std::string child_json;
  int pooled = 0;
  double first_launch_s = 0;
  bool fell_back = false;  // a later launch was cut by the deadline: the one before it is the report
  std::string cut;         // what that launch said
  set_emergency_writer([&opt, argc, argv] {
    write_error_report(opt, argc, argv, stop_cause() == StopCause::kDeadline ? Status::kTimeout : Status::kError,
                       stop_reason() + ": mpirun and its ranks did not end in time; no rank reported");
  });
  for (int k = 1; k <= launches; ++k) {
    // Launches apart: a slow state of the host held through about three
    // launches 1 s apart (30 launches of fabric:shm and mpi at 1 MiB in a row,
    // 5 slow ones, three of them consecutive); a second between them breaks
    // such a run up more often.
    if (k > 1) ::usleep(1000 * 1000);
    if (k > 1 && stop_cause() != StopCause::kNone) break;
    double left_s = 0;
    if (opt.common.timeout_s > 0) {
      left_s = opt.common.timeout_s - (steady_clock().now_s() - t_start);
      // A later launch that would not finish before the deadline is not
      // started: the report holds the launches that finished, and says so.
      if (k > 1 && left_s < first_launch_s * 1.5 + 2) {
        std::cerr << kTool << ": the deadline leaves too little time for launch " << k << "; the report holds "
                  << k - 1 << " of " << launches << " launches\n";
        break;
      }
    }
    const std::string json_k = dir->path() + "/report" + std::to_string(k) + ".json";
    const double launch_t0 = steady_clock().now_s();
    r = run_launch(opt, mpirun, base_args, dir->path(), json_k, k, left_s);
    if (k == 1) first_launch_s = steady_clock().now_s() - launch_t0;
    struct stat written {};
    std::cerr << (::stat(json_k.c_str(), &written) == 0 ? drop_exit_status_banners(r.err) : r.err);
    for (const auto& name : remove_dead_rank_segments(dir->path()))
      if (opt.common.verbose) std::cerr << kTool << ": removed " << kShmDir << "/" << name << " of a dead rank\n";
    // A later launch cut by the deadline (its ranks' or ours) adds nothing:
    // the report of the launches before it is whole. One that fails is the
    // report (a wrong result is never hidden).
    if (k > 1 && stop_cause() != StopCause::kSignal && launch_timed_out(json_k, r, &cut)) {
      cut = "launch " + std::to_string(k) + " did not finish before the deadline (" + cut + ")";
      std::cerr << kTool << ": " << cut << "; the report holds " << k - 1 << " of " << launches << " launches\n";
      fell_back = true;
      break;
    }
    child_json = json_k;
    if (stop_cause() != StopCause::kNone || !r.exited_ok() || launches == 1) break;
    // The next launch pools onto this one only when this one's samples are in the pool.
    try {
      pooled = SamplePool(pool_file).launches();
    } catch (const std::exception& e) {
      std::cerr << kTool << ": " << e.what() << "\n";
      break;
    }
    if (pooled != k) {
      std::cerr << kTool << ": launch " << k << " left no samples to pool; the report holds " << pooled
                << " launch(es)\n";
      break;
    }
  }
  const auto host_activity = activity.stop();
  const StopCause stopped = begin_final_write();

  int rc;
  struct stat st {};
  if (::stat(child_json.c_str(), &st) == 0) {
    try {
      Report rep = load_report(child_json);
      if (!rep.probes.empty() && !rep.probes.front().host_activity) rep.probes.front().host_activity = host_activity;
      // The launches whose samples the report holds (fewer than asked when
      // the deadline came first) are an observation, not a setting:
      // config.launches stays what was asked, so that compare does not call
      // two runs of one command different settings when a slow run pooled fewer.
      if (launches > 1 && !rep.probes.empty()) rep.probes.front().data["launches"] = std::max(pooled, 1);
      // Not hidden: a hung rank looks the same as a slow launch from here.
      if (fell_back && !rep.probes.empty()) rep.probes.front().data["launch_cut"] = cut;
      // The probe ran from the first launch's start, not only the last's.
      if (launches > 1 && !rep.probes.empty()) rep.probes.front().duration_s = steady_clock().now_s() - t_start;
      if (stopped == StopCause::kSignal && !rep.probes.empty() && rep.probes.front().status == Status::kError) {
        // The ranks saw mpirun's SIGTERM; say what stopped the run. (At the
        // deadline the ranks' own, earlier one has said it already.)
        ProbeResult& p = rep.probes.front();
        p.reason = stop_reason() + "; mpirun passed it on to the ranks: " + p.reason;
        finalize_report(rep);
      }
      // Rank 0 printed the people's text already (not when its launch ran
      // quiet and a cut later one was dropped).
      CommonOptions files = opt.common;
      files.quiet = opt.common.quiet || !fell_back;
      rc = emit_report(rep, files,
                       stopped != StopCause::kNone && !(fell_back && stopped == StopCause::kDeadline)
                           ? stop_exit_code()
                           : report_exit_code(rep),
                       kTool);
    } catch (const std::exception& e) {
      rc = write_error_report(opt, argc, argv, Status::kError, std::string("rank 0's report: ") + e.what());
    }
  } else {
    const Status s = stopped == StopCause::kDeadline ? Status::kTimeout : Status::kError;
    std::string why = !r.started ? "could not start " + mpirun + ": " + r.start_error
                      : stopped != StopCause::kNone ? stop_reason() + "; rank 0 wrote no report"
                                                    : "mpirun " + r.describe() + " and rank 0 wrote no report";
    // What a rank said (rank 0 silent, an error) tells more than mpirun's boilerplate.
    const std::string said = first_rank_line(r.err);
    const std::string t = tail(r.err, 3);
    if (!said.empty()) why += "; " + said;
    else if (!t.empty()) why += "; stderr: " + t;
    rc = write_error_report(opt, argc, argv, s, why);
    if (stopped != StopCause::kNone) rc = stop_exit_code();
  }
  if (const std::string why = dir->remove(); !why.empty()) std::cerr << kTool << ": " << why << "\n";
  return rc;
}

}  // namespace nodeprobe::allreduce
