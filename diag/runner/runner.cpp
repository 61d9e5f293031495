#include "runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "nodeprobe/emit.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::diag {
namespace {

ProbeResult synthetic(const std::string& name, Status s, std::string reason, double duration) {
  ProbeResult r;
  r.name = name;
  r.status = s;
  r.reason = std::move(reason);
  r.duration_s = duration;
  return r;
}

std::string with_tail(std::string reason, const std::string& tail) {
  if (!tail.empty()) reason += "; stderr: " + tail;
  return reason;
}

}  // namespace

std::string tail_lines(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (!l.empty()) lines.push_back(l);
  }
  std::string out;
  const std::size_t from = lines.size() > max_lines ? lines.size() - max_lines : 0;
  for (std::size_t i = from; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  if (out.size() > 600) out = "..." + out.substr(out.size() - 600);
  return out;
}

void merge_host(HostInfo& into, const HostInfo& from) {
  auto take = [](std::string& a, const std::string& b) {
    if (a.empty() && !b.empty()) a = b;
  };
  take(into.driver, from.driver);
  take(into.cuda_runtime, from.cuda_runtime);
  take(into.nccl, from.nccl);
  take(into.libfabric, from.libfabric);
  take(into.mpi, from.mpi);
  take(into.instance_type, from.instance_type);
  if (into.gpus.empty() && !from.gpus.empty()) into.gpus = from.gpus;
}

ProbeOutcome run_probe_executable(const ProbeSpec& spec, const std::string& bin_dir,
                                  const std::string& work_dir) {
  ProbeOutcome out;
  const std::string exe = bin_dir + spec.executable;
  const std::string json = work_dir + "/" + spec.name + ".json";
  ::unlink(json.c_str());

  SpawnOptions opt;
  opt.argv = spec.launcher;
  opt.argv.push_back(exe);
  opt.argv.insert(opt.argv.end(), spec.args.begin(), spec.args.end());
  // The probe's own deadline comes first so it can write a partial report;
  // the runner's kill is the backstop.
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", spec.deadline_s);
  opt.argv.insert(opt.argv.end(), {"--json", json, "--quiet", "--timeout", secs});
  opt.env_set = spec.env_set;
  opt.stdout_path = "/dev/null";
  opt.capture_stderr = true;
  opt.capture_limit = 256 * 1024;
  opt.timeout_s = spec.deadline_s + 2;
  opt.kill_grace_s = spec.kill_grace_s;

  const SpawnResult r = run_process(opt);
  out.stderr_tail = tail_lines(r.err, 3);
  out.interrupted = r.cancelled;

  if (!r.started) {
    out.probes.push_back(synthetic(spec.name, Status::kError,
                                   "could not start " + spec.executable + ": " + r.start_error, 0));
    return out;
  }
  struct stat st {};
  // Stopped (stop.h) without a report of its own: killed by us, not crashed.
  if (r.cancelled && ::stat(json.c_str(), &st) != 0) {
    out.probes.push_back(stopped_probe(spec.name, true));
    return out;
  }
  if (r.timed_out) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s exceeded its %g s deadline; its process group was killed",
                  spec.executable.c_str(), spec.deadline_s);
    out.probes.push_back(synthetic(spec.name, Status::kTimeout, with_tail(buf, out.stderr_tail),
                                   r.duration_s));
    return out;
  }
  if (r.term_signal != 0) {
    out.probes.push_back(synthetic(
        spec.name, Status::kError,
        with_tail("crashed: " + spec.executable + " " + r.describe(), out.stderr_tail),
        r.duration_s));
    return out;
  }
  if (::stat(json.c_str(), &st) == 0) {
    try {
      Report child = load_report(json);
      out.host = child.host;
      out.have_host = true;
      for (auto& p : child.probes) {
        // The child saw our SIGTERM: say what really stopped the run.
        if (r.cancelled && (p.status == Status::kError || p.status == Status::kTimeout)) {
          p.reason.clear();
          mark_stopped(p);
        }
        out.probes.push_back(std::move(p));
      }
      out.findings = std::move(child.findings);
      if (out.probes.empty())
        out.probes.push_back(synthetic(spec.name, Status::kError,
                                       spec.executable + " wrote a report without probes",
                                       r.duration_s));
      return out;
    } catch (const ReportError& e) {
      out.probes.push_back(synthetic(spec.name, Status::kError,
                                     with_tail(std::string("unreadable report: ") + e.what(),
                                               out.stderr_tail),
                                     r.duration_s));
      return out;
    }
  }
  const Status s = r.exit_code == 0 ? Status::kError : status_for_exit_code(r.exit_code);
  out.probes.push_back(synthetic(
      spec.name, s == Status::kPass ? Status::kError : s,
      with_tail(spec.executable + " exited " + std::to_string(r.exit_code) + " without a report",
                out.stderr_tail),
      r.duration_s));
  return out;
}

}  // namespace nodeprobe::diag
