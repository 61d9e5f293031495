#include "health.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/fleet_analysis.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/safe_remove.h"

namespace nodeprobe::diag {
namespace {

constexpr double kDefaultBudget_s = 10;

// The child's messages to the parent, one per line: "step NAME", "done 0|1 LINE", "exit RC".
void tell(int fd, const std::string& line) {
  const std::string s = line + "\n";
  ssize_t rc = ::write(fd, s.data(), s.size());
  (void)rc;
}

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The report when the checks did not finish: what the parent knows.
Report timeout_report(const AcceptOptions& opt, int argc, char** argv, const std::string& why) {
  Report r = new_report("nodeprobe", argc, argv, opt.common.label);
  ProbeResult p;
  p.name = "health";
  p.status = Status::kTimeout;
  p.reason = why;
  r.probes.push_back(p);
  r.findings = findings_from_probe_status(r.probes);
  r.verdict = compute_verdict(r);
  r.run.finished = utc_now_iso8601();
  return r;
}

}  // namespace

std::string drain_line(const std::string& finding_id, const std::string& title) {
  std::string s = "nodeprobe: " + finding_id + ": " + title;
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > kDrainReasonMax) s = s.substr(0, kDrainReasonMax - 3) + "...";
  return s;
}

std::string drain_reason(const Report& r) {
  const Finding* worst = nullptr;
  std::string action = "none";
  for (const auto& f : r.findings) {
    if (f.severity == Severity::kInfo) continue;
    const std::string a = finding_action(f);
    if (fleet_action_rank(a) > fleet_action_rank(action) ||
        (worst && a == action && f.severity == Severity::kError && worst->severity != Severity::kError)) {
      action = a;
      worst = &f;
    }
  }
  if (!worst || !action_drains(action)) return {};
  return drain_line(worst->id, worst->title);
}

int run_health(const AcceptOptions& opt, int argc, char** argv, const AcceptHooks& hooks) {
  Clock& clock = steady_clock();
  const double t0 = clock.now_s();
  const double budget = opt.budget_s > 0 ? opt.budget_s : kDefaultBudget_s;
  for (const std::string* p : {&opt.common.json_out, &opt.drain_reason_file})
    if (auto why = check_output_path(*p); !why.empty()) {
      std::cerr << "nodeprobe accept: " << why << "\n";
      return exit_code::kError;
    }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::cerr << "nodeprobe accept: cannot make a pipe\n";
    return exit_code::kError;
  }
  // The checks' temporary files go in here (their TMPDIR), so that a check
  // killed at the budget leaves nothing behind: this process removes it.
  std::unique_ptr<OwnedTempDir> work;
  try {
    work = std::make_unique<OwnedTempDir>(temp_parent(), "nodeprobe-health");
  } catch (const std::exception& e) {
    std::cerr << "nodeprobe accept: " << e.what() << "\n";
    return exit_code::kError;
  }
  std::cout << std::flush;
  std::cerr << std::flush;
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::cerr << "nodeprobe accept: cannot fork\n";
    return exit_code::kError;
  }
  if (pid == 0) {
    // The checks. Whatever they do, the parent answers Slurm in time.
    ::close(fds[0]);
    const int out = fds[1];
    ::setenv("TMPDIR", work->path().c_str(), 1);
    work->release();  // the parent removes it
    AcceptOptions o = opt;
    o.common.quiet = true;
    // Leave the parent time to write its files after the child's own end.
    o.budget_s = std::max(1.0, budget - std::min(2.0, 0.2 * budget));
    AcceptHooks h = hooks;
    h.on_step = [out](const std::string& step) { tell(out, "step " + step); };
    if (hooks.diagnose)
      h.diagnose = [out, &hooks](const Report& r, double left) {
        tell(out, "step diag");
        return hooks.diagnose(r, left);
      };
    h.on_report = [out](const Report& r) {
      const std::string line = drain_reason(r);
      tell(out, std::string("verdict ") + std::string(to_string(r.verdict)));
      tell(out, "done " + std::string(line.empty() ? "0 " : "1 ") + line);
    };
    int rc = exit_code::kError;
    try {
      rc = run_accept(o, argc, argv, h);
    } catch (const std::exception& e) {
      std::cerr << "nodeprobe accept: " << e.what() << "\n";
    }
    tell(out, "exit " + std::to_string(rc));
    std::cout << std::flush;
    std::cerr << std::flush;
    ::_exit(rc == exit_code::kFail ? exit_code::kOk : rc);  // the parent decides what 1 means
  }

  ::close(fds[1]);
  // The parent does nothing that can hang: it reads a pipe with a deadline.
  const double deadline = t0 + budget - 0.3;
  std::string buf, step = "start", verdict, line;
  bool done = false, drain = false, child_exit_seen = false;
  int child_rc = -1;
  for (;;) {
    const double left = deadline - clock.now_s();
    if (left <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;  // the child ended (or died)
    buf.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = buf.find('\n')) != std::string::npos;) {
      const std::string msg = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      if (msg.rfind("step ", 0) == 0) step = msg.substr(5);
      else if (msg.rfind("verdict ", 0) == 0) verdict = msg.substr(8);
      else if (msg.rfind("done ", 0) == 0) {
        done = true;
        drain = msg.size() > 5 && msg[5] == '1';
        line = msg.size() > 7 ? msg.substr(7) : "";
      } else if (msg.rfind("exit ", 0) == 0) {
        child_exit_seen = true;
        child_rc = std::atoi(msg.c_str() + 5);
      }
    }
    if (child_exit_seen) break;
  }
  ::close(fds[0]);
  bool timed_out = false;
  int status = 0;
  if (!child_exit_seen) {
    // Still running at the budget (or died): end it; never wait for it to go.
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      timed_out = !done;
      ::kill(pid, SIGKILL);
    }
  }
  for (int i = 0; i < 20 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) ::usleep(10000);

  std::string problem;  // why there is no answer from the checks
  if (!done && child_exit_seen) {
    // Bad input or a report that could not be written: the child said why on
    // stderr; its exit code stands, and that is no reason to drain.
    return child_rc == exit_code::kOk || child_rc == exit_code::kFail ? exit_code::kError : child_rc;
  }
  if (!done) {
    if (timed_out) {
      drain = true;
      line = drain_line("probe.timeout", "health check did not finish in " + secs(budget) + " s (hung in " + step + ")");
      if (!opt.common.json_out.empty()) {
        try {
          write_file_atomic(opt.common.json_out, dump_report(timeout_report(opt, argc, argv, line)));
        } catch (const std::exception& e) {
          std::cerr << "nodeprobe accept: " << e.what() << "\n";
        }
      }
    } else {
      problem = WIFSIGNALED(status) ? "the health check was killed by signal " + std::to_string(WTERMSIG(status))
                                    : "the health check ended without an answer (exit " +
                                          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    }
  }
  int rc = !problem.empty() ? exit_code::kError
           : drain          ? exit_code::kFail
           : child_rc == exit_code::kError || child_rc == exit_code::kUsage || child_rc == exit_code::kInterrupted
               ? child_rc
               : exit_code::kOk;
  if (!opt.drain_reason_file.empty() && problem.empty()) {
    try {
      // Empty when the node may stay, so a reason from an earlier run never lingers.
      write_file_atomic(opt.drain_reason_file, drain ? line + "\n" : std::string());
    } catch (const std::exception& e) {
      std::cerr << "nodeprobe accept: " << e.what() << "\n";
      rc = exit_code::kError;
    }
  }
  if (!opt.common.quiet) {
    std::ostream& out = opt.common.json_out == "-" ? std::cerr : std::cout;
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", clock.now_s() - t0);
    if (!problem.empty()) out << "nodeprobe health: error: " << problem << " (" << took << ")\n";
    else if (drain) out << "nodeprobe health: drain: " << line << " (" << took << ")\n";
    else out << "nodeprobe health: ok, verdict " << (verdict.empty() ? "?" : verdict) << " (" << took << ")\n";
  }
  if (!problem.empty()) std::cerr << "nodeprobe accept: " << problem << "\n";
  return rc;
}

}  // namespace nodeprobe::diag
