#include "fleet_cmd.h"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <sstream>

#include "accept.h"
#include "nodeprobe/atomic_file.h"
#include "nodeprobe/fleet_json.h"
#include "nodeprobe/fleet_render.h"
#include "nodeprobe/mpirun.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::diag {
namespace {

volatile std::sig_atomic_t g_cancel = 0;
extern "C" void on_cancel(int) { g_cancel = 1; }

// The arguments after the "fleet" subcommand, less those that only the
// launcher uses (--hostfile, --launcher-arg) or that it writes itself.
std::vector<std::string> rank_args(int argc, char** argv, bool launcher) {
  int at = 1;
  while (at < argc && std::string(argv[at]) != "fleet") ++at;
  std::vector<std::string> out;
  for (int i = at + 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (launcher) {
      bool drop = false;
      for (const char* f : {"--hostfile", "--launcher-arg", "--json", "--html"}) {
        if (a == f) {
          ++i;  // and its value
          drop = true;
        } else if (a.rfind(std::string(f) + "=", 0) == 0) {
          drop = true;
        }
      }
      if (drop) continue;
    }
    out.push_back(a);
  }
  return out;
}

std::string tail_of(const std::string& s, std::size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

}  // namespace

FleetReport new_fleet_report(int argc, char** argv, const std::string& label) {
  const Report r = new_report("nodeprobe fleet", argc, argv, label);
  FleetReport f;
  f.tool = r.tool;
  f.run = r.run;
  return f;
}

int emit_fleet_report(const FleetOptions& opt, FleetReport& r) {
  r.run.finished = utc_now_iso8601();
  int rc = exit_code_for(r.verdict);
  try {
    if (!opt.json_out.empty()) write_file_atomic(opt.json_out, dump_fleet_report(r));
    if (!opt.html_out.empty()) {
      std::ostringstream html;
      render_fleet_html(r, html);
      write_file_atomic(opt.html_out, html.str());
    }
  } catch (const std::exception& e) {
    std::cerr << "nodeprobe fleet: " << e.what() << "\n";
    rc = exit_code::kError;
  }
  if (!opt.quiet) {
    std::ostream& out = opt.json_out == "-" ? std::cerr : std::cout;
    render_fleet_text(r, out);
    if (!r.reason.empty()) out << "reason: " << r.reason << "\n";
    out << std::flush;
  }
  return rc;
}

int write_fleet_error(const FleetOptions& opt, int argc, char** argv, Status status, const std::string& reason) {
  std::cerr << "nodeprobe fleet: " << reason << "\n";
  FleetReport r = new_fleet_report(argc, argv, opt.label);
  r.verdict = status;
  r.reason = reason;
  FleetOptions o = opt;
  o.quiet = true;
  if (!check_output_path(o.json_out).empty()) o.json_out.clear();
  if (!check_output_path(o.html_out).empty()) o.html_out.clear();
  const int rc = emit_fleet_report(o, r);
  return rc == exit_code::kError ? rc : (status == Status::kSkip ? exit_code::kSkip : exit_code_for(status));
}

CLI::App* setup_fleet(CLI::App& app, FleetOptions& opt) {
  CLI::App* sub = app.add_subcommand(
      "fleet",
      "Accept N nodes at once under mpirun/srun (one rank per node): local accept, mesh, pairwise bandwidth, ring; "
      "outliers, node actions, drain list");
  add_fleet_flags(*sub, opt);
  return sub;
}

int run_fleet_cmd(const FleetOptions& opt, int argc, char** argv) {
  if (auto why = check_fleet_options(opt); !why.empty()) return write_fleet_error(opt, argc, argv, Status::kError, why);
  const std::string exe = probe_dir() + "nodeprobe-fleet";
  if (::access(exe.c_str(), X_OK) != 0)
    return write_fleet_error(opt, argc, argv, Status::kSkip,
                             "not available: " + exe + " is not part of this build (it needs MPI at build time)");
  if (launched_by_mpi()) {
    if (!opt.hostfile.empty() || !opt.launcher_args.empty())
      return write_fleet_error(opt, argc, argv, Status::kError,
                               "--hostfile/--launcher-arg start mpirun; under a launcher leave them out");
    // Become the rank program: the launcher's environment (PMIx) stays.
    std::vector<std::string> args = rank_args(argc, argv, false);
    args.insert(args.begin(), exe);
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    ::execv(exe.c_str(), cargs.data());
    return write_fleet_error(opt, argc, argv, Status::kError, "cannot start " + exe + ": " + std::strerror(errno));
  }
  if (opt.hostfile.empty())
    return write_fleet_error(opt, argc, argv, Status::kError,
                             "not started by a launcher: run `mpirun -np N --map-by ppr:1:node nodeprobe fleet ...` "
                             "(or srun --ntasks-per-node=1), or give --hostfile HOSTS");
  for (const std::string* p : {&opt.json_out, &opt.html_out})
    if (auto why = check_output_path(*p); !why.empty()) {
      std::cerr << "nodeprobe fleet: " << why << "\n";
      return exit_code::kError;
    }
  if (::access(opt.hostfile.c_str(), R_OK) != 0)
    return write_fleet_error(opt, argc, argv, Status::kError, "cannot read the hostfile " + opt.hostfile);
  const std::string mpirun = find_mpirun();
  if (mpirun.empty())
    return write_fleet_error(opt, argc, argv, Status::kSkip,
                             "--hostfile needs mpirun: none in NODEPROBE_MPIRUN, where the build found MPI, or PATH");

  SpawnOptions so;
  so.argv = {mpirun, "--hostfile", opt.hostfile, "--map-by", "ppr:1:node", "--bind-to", "none"};
  if (::geteuid() == 0) so.argv.push_back("--allow-run-as-root");
  so.argv.insert(so.argv.end(), opt.launcher_args.begin(), opt.launcher_args.end());
  so.argv.push_back(exe);
  for (auto& a : rank_args(argc, argv, true)) so.argv.push_back(a);
  // Rank 0 hands its report over stdout (it may run on another machine);
  // its people's text goes to stderr, which mpirun forwards as it comes.
  so.argv.insert(so.argv.end(), {"--json", "-"});
  so.capture_stdout = true;
  so.capture_limit = 256u << 20;
  so.stdin_path = "/dev/null";
  // Rank 0 ends the run itself at --timeout; this is the backstop.
  so.timeout_s = opt.timeout_s > 0 ? opt.timeout_s + 30 : 0;
  struct sigaction sa {};
  sa.sa_handler = on_cancel;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  so.cancel = &g_cancel;
  if (opt.verbose) {
    std::string line;
    for (const auto& a : so.argv) line += (line.empty() ? "" : " ") + a;
    std::cerr << "nodeprobe fleet: " << line << "\n";
  }
  const SpawnResult res = run_process(so);
  FleetReport r;
  try {
    r = parse_fleet_report(res.out, "rank 0's report");
  } catch (const ReportError& e) {
    const std::string why = !res.started ? "could not start " + mpirun + ": " + res.start_error
                            : res.cancelled ? std::string("interrupted")
                                            : "mpirun " + res.describe() + " and rank 0 sent no fleet report (" +
                                                  e.what() + "): " + tail_of(res.out, 300);
    const int rc = write_fleet_error(opt, argc, argv, res.timed_out ? Status::kTimeout : Status::kError, why);
    return res.cancelled ? exit_code::kInterrupted : rc;
  }
  FleetOptions o = opt;
  o.quiet = true;  // rank 0 printed the text already
  return emit_fleet_report(o, r);
}

}  // namespace nodeprobe::diag
