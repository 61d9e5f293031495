// accept's plan: one entry per probe executable. To add a probe, add a line
// to accept_entries(); an executable missing from the build is reported as
// "not available", never faked.
#include <unistd.h>

#include <algorithm>

#include "accept.h"

namespace nodeprobe::diag {

const std::vector<PlanEntry>& accept_entries() {
  // Argument lists follow the probes' documented flags (docs/accept.md);
  // the runner appends --json FILE --quiet --timeout SECONDS to every step.
  static const std::vector<PlanEntry> e = {
      {"limits", "nodeprobe-limits", {{"", {}, {}}}, 10, 30, 1, 2, false, false},
      // gemm stops starting sections when its deadline is near and reports
      // what it measured (docs/gemm.md), so quick stays inside the budget.
      {"gemm", "nodeprobe-gemm",
       {{"", {"--profile", "quick"}, {"--profile", "full"}}}, 45, 300, 20, 180, false, false},
      // io prepares its own dataset inside {dataset}, reads it warm and cold,
      // and removes it (docs/io.md, "nodeprobe-io accept").
      {"io", "nodeprobe-io",
       {{"", {"accept", "--profile", "quick", "--data-dir", "{dataset}"},
         {"accept", "--profile", "full", "--data-dir", "{dataset}"}}},
       30, 180, 4, 45, false, false},
      // nodeprobe-allreduce starts its local ranks itself (--np, through
      // mpirun) and bounds them with its own control channel, so a killed or
      // stopped rank ends as error/timeout naming the rank (docs/allreduce.md).
      // Samples: quick 3 launches x 4 iterations, full 3 x 10. One launch's
      // samples share its process and vCPU placement; on a 2-vCPU VM two
      // launches of an unchanged node differed up to 5x at 1 MiB, every sample
      // of a launch in one mode, so one launch's spread cannot hold what the
      // next run sees. --spread paces a launch's iterations of each size
      // over 50 ms (200 ms). A/A over 8 runs each (bench/compare/run_to_run.sh,
      // 6 busbw cells, 28 pairs each): pairs whose intervals separate, 19 of
      // 168 with one launch of 8 (--spread 100), 8 with 3 launches back to
      // back, 6 with 2 launches (--spread 50), 0 with 3 launches (--spread 50).
      // Full's 3 launches took 77 s at load 5 (estimate 80 s of its 180).
      {"allreduce", "nodeprobe-allreduce",
       {{"", {"--np", "{ranks}", "--backend", "mpi,fabric:shm,fabric:tcp", "-b", "1M", "-e", "4M",
              "-f", "4", "-n", "4", "--inplace", "0", "--launches", "3", "--spread", "50"},
         {"--np", "{ranks}", "--backend", "mpi,fabric:shm,fabric:tcp", "-b", "64K", "-e", "64M",
          "-f", "4", "-n", "10", "--launches", "3", "--spread", "200"}}},
       30, 180, 7, 80, true, false},
      // One rank per GPU; NCCL over the node's GPUs.
      {"allreduce.nccl", "nodeprobe-allreduce",
       {{"", {"--np", "{ranks}", "--backend", "nccl", "-b", "1M", "-e", "256M", "-f", "4", "-n", "10"},
         {"--np", "{ranks}", "--backend", "nccl", "-b", "8", "-e", "2G", "-f", "2", "-n", "20"}}},
       30, 180, 15, 120, true, true},
  };
  return e;
}

double accept_budget_s(const std::string& profile, bool gpu_present) {
  if (profile == "full") return 600;
  if (profile == "health") return 10;
  return gpu_present ? 60 : 20;
}

std::vector<PlannedProbe> accept_plan(const AcceptOptions& opt, const PlanContext& ctx) {
  const bool full = opt.profile == "full";
  // Slurm's health check runs on every node every few minutes: only what
  // answers in a second or two (limits; the diagnosis and the instance-type
  // judgement run in-process after it).
  const bool health = opt.profile == "health";
  std::vector<PlannedProbe> plan;
  for (const PlanEntry& e : accept_entries()) {
    if (health && e.name != "limits") continue;
    if (!opt.only.empty() &&
        std::none_of(opt.only.begin(), opt.only.end(), [&](const std::string& o) {
          return e.name == o || (e.name.size() > o.size() && e.name.compare(0, o.size(), o) == 0 &&
                                 e.name[o.size()] == '.');
        }))
      continue;
    PlannedProbe p;
    p.entry = &e;
    p.deadline_s = full ? e.full_deadline_s : e.quick_deadline_s;
    p.estimate_s = full ? e.full_estimate_s : e.quick_estimate_s;
    if (::access((ctx.bin_dir + e.executable).c_str(), X_OK) != 0) {
      p.skip_reason = "not available: " + e.executable + " is not part of this build";
    } else if (e.needs_gpu && !ctx.gpu_present) {
      p.skip_reason = "no NVIDIA GPU visible (no /proc/driver/nvidia/gpus entry, no /dev/nvidia0)";
    } else if (e.mpirun && ctx.mpirun.empty()) {
      p.skip_reason = "not available: no mpirun (Open MPI) in NODEPROBE_MPIRUN, where the build found MPI, or PATH";
    }
    if (!p.skip_reason.empty()) p.estimate_s = 0;
    const int ranks = e.needs_gpu ? std::max(1, ctx.gpu_count) : (full ? std::min(4, std::max(2, ctx.cpus)) : 2);
    for (const PlanStep& st : e.steps) {
      ProbeSpec spec;
      spec.name = e.name + (st.suffix.empty() ? "" : "." + st.suffix);
      spec.executable = e.executable;
      for (std::string a : full ? st.full : st.quick) {
        if (a == "{dataset}") p.needs_dataset = true;
        if (a == "{ranks}") a = std::to_string(ranks);
        spec.args.push_back(a);
      }
      if (ctx.sysroot != "/" && !ctx.sysroot.empty()) spec.args.insert(spec.args.end(), {"--sysroot", ctx.sysroot});
      // mpirun entries launch their ranks themselves (--np {ranks}); Open MPI
      // refuses root without its opt-in variables.
      if (e.mpirun && ctx.root) spec.env_set = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
      // The allreduce launcher needs mpirun to pass SIGTERM on and rank 0 to
      // write before it reports and removes its directory (launcher.cpp).
      if (e.mpirun) spec.kill_grace_s = 12;
      p.steps.push_back(std::move(spec));
    }
    plan.push_back(std::move(p));
  }
  return plan;
}

}  // namespace nodeprobe::diag
