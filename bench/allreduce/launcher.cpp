#include "launcher.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "driver.h"
#include "nodeprobe/atomic_file.h"
#include "nodeprobe/error.h"
#include "nodeprobe/mpirun.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::allreduce {
namespace {

volatile std::sig_atomic_t g_cancel = 0;
extern "C" void on_cancel(int) { g_cancel = 1; }

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

}  // namespace

std::vector<std::string> strip_launcher_args(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--np" || a == "--json" || a == "--timeout") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("--np=", 0) == 0 || a.rfind("--json=", 0) == 0 || a.rfind("--timeout=", 0) == 0) continue;
    out.push_back(a);
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
  if (auto why = check_output_path(opt.common.json_out); !why.empty()) {
    std::cerr << "nodeprobe-allreduce: " << why << "\n";
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
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/nodeprobe-allreduce-XXXXXX";
  if (!::mkdtemp(dir.data()))
    return write_error_report(opt, argc, argv, Status::kError, "cannot create a temporary directory under " +
                                                                   std::string(tmp && *tmp ? tmp : "/tmp"));
  const std::string child_json = dir + "/report.json";
  auto args = strip_launcher_args(argc, argv);
  args.insert(args.end(), {"--json", child_json});
  if (opt.common.timeout_s > 0) {
    // The ranks stop a little early so that their report is written and
    // handed on before a runner's deadline of exactly --timeout kills us.
    char t[32];
    std::snprintf(t, sizeof t, "%g", std::max(1.0, opt.common.timeout_s - std::min(3.0, opt.common.timeout_s * 0.1)));
    args.insert(args.end(), {"--timeout", t});
  }
  if (opt.common.json_out == "-") args.push_back("--text-to-stderr");

  struct sigaction sa {};
  sa.sa_handler = on_cancel;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  SpawnOptions so;
  so.argv = local_mpirun_argv(mpirun, opt.np, self_exe_dir() + "nodeprobe-allreduce", args, ::geteuid() == 0);
  so.capture_stderr = true;
  so.capture_limit = 4u << 20;
  // The ranks end themselves at --timeout; this is the backstop.
  so.timeout_s = opt.common.timeout_s > 0 ? opt.common.timeout_s + 15 : 0;
  so.cancel = &g_cancel;
  if (opt.common.verbose) {
    std::string line;
    for (const auto& a : so.argv) line += (line.empty() ? "" : " ") + a;
    std::cerr << "nodeprobe-allreduce: " << line << "\n";
  }
  const SpawnResult r = run_process(so);
  std::cerr << r.err;

  int rc;
  struct stat st {};
  if (::stat(child_json.c_str(), &st) == 0) {
    try {
      const Report rep = load_report(child_json);
      if (!opt.common.json_out.empty()) write_file_atomic(opt.common.json_out, dump_report(rep));
      rc = exit_code_for(rep.verdict);
    } catch (const std::exception& e) {
      rc = write_error_report(opt, argc, argv, Status::kError, std::string("rank 0's report: ") + e.what());
    }
  } else {
    Status s = r.timed_out ? Status::kTimeout : Status::kError;
    std::string why = !r.started ? "could not start " + mpirun + ": " + r.start_error
                      : r.cancelled ? std::string("interrupted")
                                    : "mpirun " + r.describe() + " and rank 0 wrote no report";
    const std::string t = tail(r.err, 3);
    if (!t.empty()) why += "; stderr: " + t;
    rc = write_error_report(opt, argc, argv, s, why);
    if (s == Status::kTimeout) rc = exit_code::kTimeout;
  }
  ::unlink(child_json.c_str());
  ::rmdir(dir.c_str());
  return rc;
}

}  // namespace nodeprobe::allreduce
