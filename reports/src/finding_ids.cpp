#include "nodeprobe/finding_ids.h"

#include <algorithm>
#include <map>
#include <utility>

namespace nodeprobe {

const std::vector<FindingKind>& finding_vocabulary() {
  static const std::vector<FindingKind> v = {
      {"gpu.not_found", "No usable GPU", Severity::kError},
      {"gpu.driver_kernel_mismatch", "NVIDIA driver does not match the running kernel or library", Severity::kError},
      {"gpu.cuda_driver_insufficient", "CUDA driver is older than the CUDA runtime", Severity::kError},
      {"gpu.xid", "GPU Xid error reported by the driver", Severity::kError},
      {"gpu.oom", "Out of GPU memory", Severity::kWarn},
      {"gpu.count_mismatch", "GPU count or model differs from the instance type", Severity::kError},
      {"gpu.pcie_degraded", "GPU PCIe link below its maximum generation or width", Severity::kWarn},
      {"gpu.compute_wrong", "GPU computed wrong results", Severity::kError},
      {"gpu.compute_slow", "GPU compute below the expected share of peak", Severity::kWarn},
      {"nccl.timeout", "NCCL operation timed out or hung", Severity::kError},
      {"nccl.network_config", "NCCL network configuration problem", Severity::kError},
      {"nccl.shm", "NCCL shared-memory transport failed", Severity::kError},
      {"efa.missing", "EFA provider or device not available", Severity::kError},
      {"efa.fallback_tcp", "Traffic fell back from EFA to TCP", Severity::kWarn},
      {"net.unreachable", "Peer not reachable on a required port", Severity::kError},
      {"selinux.avc", "SELinux denied an access (AVC)", Severity::kWarn},
      {"limits.memlock", "Locked-memory limit (memlock) below recommendation", Severity::kWarn},
      {"limits.nofile", "Open-files limit (nofile) below recommendation", Severity::kWarn},
      {"limits.shm", "Shared memory (shmmax/shmall, /dev/shm) below recommendation", Severity::kWarn},
      {"limits.max_map_count", "vm.max_map_count below recommendation", Severity::kWarn},
      {"limits.somaxconn", "net.core.somaxconn below recommendation", Severity::kWarn},
      {"limits.netdev_backlog", "net.core.netdev_max_backlog below recommendation", Severity::kWarn},
      {"cpu.governor", "CPU frequency governor is not 'performance'", Severity::kWarn},
      {"io.starved", "Input pipeline starves the accelerator", Severity::kWarn},
      {"storage.mount_options", "Data volume mount options not recommended", Severity::kWarn},
      {"storage.slow", "Storage slower than expected", Severity::kWarn},
      {"probe.timeout", "A probe exceeded its deadline", Severity::kError},
      {"probe.crash", "A probe crashed", Severity::kError},
      // Added after the first vocabulary (add, never rename).
      {"limits.nproc", "Process/thread limit (nproc) below recommendation", Severity::kWarn},
      // Added by nodeprobe diag: look-alikes of "Cannot allocate memory" and
      // GPU memory health that none of the ids above name.
      {"host.oom", "Host ran out of memory (kernel OOM killer)", Severity::kError},
      {"efa.mr_registration", "EFA memory registration failed", Severity::kError},
      {"gpu.ecc", "GPU memory ECC errors or pending page retirement", Severity::kWarn},
      // Added by issue 13: NVSwitch systems, NVLink, EFA queue resources.
      {"gpu.fabric_manager", "NVIDIA Fabric Manager not running or not matching the driver", Severity::kError},
      {"gpu.nvlink", "NVLink links down or NVLink errors", Severity::kError},
      {"efa.queue_allocation", "EFA queue (CQ/QP/AV/endpoint) allocation failed", Severity::kError},
      // Added by nodeprobe fleet (issue 16): a node, GPU or link far below the fleet's median.
      {"fleet.outlier", "Node, GPU or link far below the rest of the fleet", Severity::kWarn},
      // Added by issue 13: a job's failure (crash, error exit, uncaught exception,
      // restart loop) that no node-level finding of the same logs explains. Info:
      // the node's verdict stays its own, and the log no longer reads as clean.
      {"job.unexplained_failure", "A job failed and these logs show no node-level cause", Severity::kInfo},
      // Added by issue 13: the kernel's lockup and RCU stall detectors (kernel/watchdog.c,
      // kernel/rcu/tree_stall.h, kernel/workqueue.c): a CPU that stopped scheduling.
      {"host.cpu_stall", "A CPU stalled in the kernel (soft or hard lockup, RCU stall)", Severity::kWarn},
      // Added by issue 13: host memory and CPU hardware errors through the machine-check
      // architecture (drivers/edac, arch/x86/kernel/cpu/mce, mm/memory-failure.c, APEI GHES).
      {"host.machine_check", "Host memory or CPU reported hardware errors (machine check, EDAC)", Severity::kWarn},
      // Added by issue 13: a full filesystem (ENOSPC, EDQUOT, Kubernetes disk pressure) outside
      // /dev/shm, which limits.shm names; nodeprobe-limits also checks the root and /tmp filesystems.
      {"storage.full", "A filesystem is full", Severity::kError},
      // Added by issue 13: profilers refused the GPU's performance counters (ERR_NVGPUCTRPERM,
      // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): NVreg_RestrictProfilingToAdminUsers.
      {"gpu.profiling_restricted", "GPU performance counters restricted to administrators", Severity::kInfo},
      // Added by issue 13: a bare "unhandled cuda error" (ncclUnhandledCudaError) is a CUDA call that
      // failed inside NCCL, not its network: it had been a cause of nccl.network_config.
      {"nccl.cuda_error", "A CUDA call inside NCCL failed", Severity::kError},
  };
  return v;
}

const FindingKind* find_finding_kind(std::string_view id) {
  const auto& v = finding_vocabulary();
  auto it = std::find_if(v.begin(), v.end(), [&](const FindingKind& k) { return k.id == id; });
  return it == v.end() ? nullptr : &*it;
}

const std::vector<std::string_view>& node_actions() {
  static const std::vector<std::string_view> v = {"none", "tune", "restart-job", "reset-gpu",
                                                  "reboot", "replace", "contact-support"};
  return v;
}

int action_rank(std::string_view action) {
  const auto& v = node_actions();
  auto it = std::find(v.begin(), v.end(), action);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}

std::string node_action(const std::vector<Finding>& findings) {
  std::string_view best = "none";
  for (const auto& f : findings)
    if (f.severity != Severity::kInfo && action_rank(f.action) > action_rank(best)) best = f.action;
  return std::string(best);
}

std::vector<Finding> findings_from_checks(const std::vector<ProbeResult>& probes) {
  std::vector<Finding> out;
  for (const auto& p : probes) {
    std::map<std::string, std::size_t> index;  // finding id -> position in out
    for (const auto& c : p.checks) {
      if (c.finding.empty() || (c.status != Status::kWarn && c.status != Status::kFail)) continue;
      auto [it, fresh] = index.emplace(c.finding, out.size());
      if (fresh) {
        Finding f;
        f.id = c.finding;
        const FindingKind* kind = find_finding_kind(c.finding);
        f.title = kind ? std::string(kind->title) : c.finding;
        f.severity = Severity::kWarn;
        f.probe = p.name;
        out.push_back(std::move(f));
      }
      Finding& f = out[it->second];
      if (c.status == Status::kFail) f.severity = Severity::kError;
      f.evidence.push_back({p.name, 0, c.id + ": observed " + c.observed + ", expected " + c.expected});
      if (!c.fix.empty() && std::find(f.remedy.begin(), f.remedy.end(), c.fix) == f.remedy.end())
        f.remedy.push_back(c.fix);
    }
  }
  return out;
}

std::vector<Finding> findings_from_probe_status(const std::vector<ProbeResult>& probes) {
  std::vector<Finding> out;
  for (const auto& p : probes) {
    const bool crashed = p.status == Status::kError && p.reason.rfind("crashed", 0) == 0;
    if (p.status != Status::kTimeout && !crashed) continue;
    Finding f;
    f.id = crashed ? "probe.crash" : "probe.timeout";
    f.title = std::string(find_finding_kind(f.id)->title) + ": " + p.name;
    f.severity = Severity::kError;
    f.probe = p.name;
    f.evidence.push_back({p.name, 0, p.reason});
    if (crashed) {
      f.remedy = {"Run it alone to reproduce: " + p.name + " --verbose",
                  "Check the kernel log for the crash: journalctl -k --since -10min | tail -50"};
    } else {
      f.remedy = {"Run it alone with a longer deadline: " + p.name + " --verbose --timeout 600",
                  "A GPU or NCCL hang also shows in the kernel log: journalctl -k | grep -i -e xid -e nvrm"};
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace nodeprobe
