#include "log_rules.h"

#include <cctype>

namespace nodeprobe::diag {
namespace {

using S = Severity;

// Keep patterns specific: a rule that fires on a healthy log is worse than a
// rule that misses (the healthy corpus in tests/diag/corpus proves both ways).
std::vector<LogRule> make_rules() {
  std::vector<LogRule> r;
  // ---- GPU driver (NVRM) ---------------------------------------------------
  r.push_back({"nvrm.xid", "gpu.xid", "", {R"(NVRM: Xid \()"}, S::kUnknown,
               {R"(Xid \((?:PCI:)?(?P<pci>[0-9A-Fa-f:.]+)\): (?P<code>[0-9]+))",
                R"(pid=(?P<pid>'?[^,\s']+'?))", R"(name=(?P<proc>[^,\s]+))"},
               {}, 0, "code"});
  r.push_back({"nvrm.fallen_off_bus", "gpu.xid", "", {"(?i)fallen off the bus"}, S::kError,
               {R"((?P<pci>[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?))"},
               {"nvrm.xid"}, 0, "code"});
  r.push_back({"nvrm.api_mismatch", "gpu.driver_kernel_mismatch", "library_mismatch",
               {"NVRM: API mismatch"}, S::kUnknown,
               {R"(has the version (?P<client_version>[0-9][0-9.]*[0-9]).{1,80}?kernel module has(?:\s|#012|NVRM:)*the version (?P<module_version>[0-9][0-9.]*[0-9]))"},
               {}, 3, ""});
  r.push_back({"nvml.mismatch", "gpu.driver_kernel_mismatch", "library_mismatch",
               {"(?i)driver/library version mismatch"}, S::kUnknown, {}, {}, 1, ""});
  r.push_back({"nvml.lib_version", "", "", {"NVML library version: [0-9]"}, S::kUnknown,
               {R"(NVML library version: (?P<nvml_version>[0-9][0-9.]*[0-9]))"}, {}, 0, ""});
  r.push_back({"module.vermagic", "gpu.driver_kernel_mismatch", "module_kernel_mismatch",
               {"nvidia[a-z_-]*: version magic"}, S::kUnknown,
               {R"(version magic '(?P<module_kernel>[^ ']+)[^']*' should be '(?P<running_kernel>[^ ']+))"},
               {}, 0, ""});
  r.push_back({"module.symbol", "gpu.driver_kernel_mismatch", "module_kernel_mismatch",
               {"(nvidia[a-z_-]*|nv_peer_mem): (disagrees about version of symbol|Unknown symbol)"},
               S::kUnknown,
               {R"((?P<module>nvidia[a-z_-]*|nv_peer_mem): (?:disagrees about version of symbol|Unknown symbol) (?P<symbol>\S+))"},
               {}, 0, ""});
  r.push_back({"module.missing", "gpu.driver_kernel_mismatch", "module_missing",
               {"(?i)module nvidia[a-z_-]* not found"}, S::kUnknown,
               {R"(directory (?P<module_dir>\S+))"}, {}, 0, ""});
  r.push_back({"module.insert_failed", "gpu.driver_kernel_mismatch", "module_kernel_mismatch",
               {"could not insert 'nvidia[a-z_-]*'"}, S::kUnknown,
               {R"(insert '(?P<module>[^']+)': (?P<error>.+))"}, {}, 0, ""});
  r.push_back({"dkms.nvidia_failed", "gpu.driver_kernel_mismatch", "dkms_build_failed",
               {"Consult /var/lib/dkms/nvidia", "DKMS make\\.log for nvidia",
                "(?i)dkms autoinstall .* failed for nvidia",
                "nvidia-(kmod|dkms|driver)[^ ]* .*(returned error|failed)",
                "NV_EXCLUDE_BUILD_MODULES.*\\(bad exit status: [1-9]"},
               S::kUnknown,
               {R"(/var/lib/dkms/nvidia[^/]*/(?P<driver_version>[0-9][0-9.]*[0-9]))",
                R"(nvidia-(?P<driver_version>[0-9][0-9.]*[0-9]) for kernel (?P<kernel>\S+))",
                R"(on (?P<kernel>[0-9][^ /]*)/)"},
               {}, 0, ""});
  // A DKMS build failure names its module only in other lines: signals, tied
  // together by resolve_source.
  r.push_back({"dkms.bad_status", "", "",
               {"Bad return status for module build on kernel", "(?i)Your kernel headers for kernel [^ ]+ cannot be found"},
               S::kUnknown, {R"(on kernel:? (?P<kernel>[0-9][^ ()]*))", R"(for kernel (?P<kernel>[0-9]\S*) cannot)"}, {}, 0, ""});
  r.push_back({"dkms.nvidia_context", "", "",
               {"(?i)dkms (install|build|autoinstall).* (-m )?nvidia", "/var/lib/dkms/nvidia",
                "(?i)nvidia[a-z-]*-dkms", "NV_EXCLUDE_BUILD_MODULES", "(?i)Building (initial )?module:? nvidia"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nvrm.init_failed", "gpu.not_found", "init_failed",
               {"RmInitAdapter failed", "rm_init_adapter failed", "NVIDIA probe routine failed"},
               S::kUnknown,
               {R"(GPU (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]))"}, {}, 0, ""});
  r.push_back({"nvrm.nouveau", "gpu.not_found", "nouveau_conflict",
               {"NVIDIA probe routine was not called"}, S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nvrm.no_adapter", "gpu.not_found", "no_device",
               {"NVRM: No NVIDIA (graphics adapter|GPU) (probed|found)"}, S::kUnknown, {}, {}, 0, ""});
  r.push_back({"gpu.no_driver", "gpu.not_found", "no_driver",
               {"(?i)couldn't communicate with the NVIDIA driver",
                "(?i)Found no NVIDIA driver on your system", "(?i)NVML: Driver Not Loaded"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"gpu.no_device", "gpu.not_found", "no_device",
               {"No devices were found", "(?i)no CUDA-capable device is detected",
                "cudaErrorNoDevice", "(?i)No CUDA GPUs are available"},
               S::kUnknown, {}, {"gpu.no_driver"}, 0, ""});
  // ---- CUDA ------------------------------------------------------------------
  r.push_back({"cuda.insufficient", "gpu.cuda_driver_insufficient", "",
               {"(?i)CUDA driver version is insufficient for CUDA runtime version",
                "cudaErrorInsufficientDriver", "(?i)NVIDIA driver on your system is too old",
                "(?i)forward compatibility was attempted on non supported HW",
                "(?i)unsupported display driver / cuda driver combination",
                "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
               S::kUnknown,
               {R"(found version (?P<driver_cuda>[0-9]+))",
                R"(Driver Version / Runtime Version\s+(?P<driver_cuda>[0-9.]+) / (?P<runtime_cuda>[0-9.]+))"},
               {}, 0, ""});
  r.push_back({"cuda.oom", "gpu.oom", "",
               {"(?i)CUDA out of memory", "(?i)CUDA error: out of memory",
                "cudaErrorMemoryAllocation", "OOM when allocating tensor",
                "(?i)RESOURCE_EXHAUSTED: Out of memory", "CUBLAS_STATUS_ALLOC_FAILED",
                "CUDNN_STATUS_ALLOC_FAILED", "Cuda failure 'out of memory'",
                "(?i)torch\\.(cuda\\.)?OutOfMemoryError"},
               S::kUnknown,
               {R"(Tried to allocate (?P<requested>[0-9.]+ ?[KMGT]i?B))",
                R"(GPU (?P<gpu>[0-9]+)(?:;| has a total capac[a-z]* of) (?P<gpu_total>[0-9.]+ ?[KMGT]i?B))"},
               {}, 0, ""});
  r.push_back({"cuda.ecc", "gpu.ecc", "uncorrectable",
               {"(?i)uncorrectable ECC error encountered", "cudaErrorECCUncorrectable",
                "CUDA_ERROR_ECC_UNCORRECTABLE"},
               S::kError, {}, {}, 0, ""});
  // ---- PCIe --------------------------------------------------------------------
  r.push_back({"pcie.limited", "gpu.pcie_degraded", "link_limited",
               {"nvidia [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]: .*PCIe bandwidth, limited by"},
               S::kUnknown,
               {R"(nvidia (?P<pci>[0-9a-f:.]+):)",
                R"(limited by (?P<current_link>[0-9.]+ GT/s (?:PCIe )?x[0-9]+) link)",
                R"(capable of [0-9.]+ Gb/s with (?P<max_link>[0-9.]+ GT/s (?:PCIe )?x[0-9]+) link)"},
               {}, 0, ""});
  r.push_back({"pcie.aer", "gpu.pcie_degraded", "aer_errors",
               {"nvidia [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]: (PCIe Bus Error|AER: )"},
               S::kUnknown,
               {R"(nvidia (?P<pci>[0-9a-f:.]+):)", R"(severity=(?P<aer_severity>[A-Za-z() -]+?),)"},
               {}, 0, ""});
  // ---- NCCL ----------------------------------------------------------------------
  r.push_back({"nccl.watchdog", "nccl.timeout", "",
               {"(?i)Watchdog caught collective operation timeout",
                "(?i)watchdog thread terminated with exception", "NCCL communicator was aborted",
                "Timeout at NCCL work", "(?i)Some NCCL operations have failed or timed out",
                "(?i)ProcessGroupNCCL's watchdog got stuck",
                "(?i)NCCL (operation|collective) timed out"},
               S::kUnknown,
               {R"(OpType=(?P<op>[A-Z_]+))", R"(Timeout\(ms\)=(?P<timeout_ms>[0-9]+))",
                R"(ran for (?P<ran_ms>[0-9]+) milliseconds)", R"(\[Rank (?P<rank>[0-9]+)\])"},
               {}, 0, ""});
  r.push_back({"nccl.socket", "nccl.network_config", "socket_error",
               // A WARN about sockets counts when it says something failed: plugins
               // (fastsocket) also WARN about retries that then succeed.
               {"NCCL WARN.*([Ss]ocket|[Cc]onnect|[Bb]ootstrap).*([Ff]ail|[Ee]rror|refused|closed|reset|abort|"
                "[Uu]nreachable|[Tt]imed? ?out|[Tt]runcated|mismatch|wrong type|No route)",
                "(?i)NET/Socket ?: .*failed",
                "(^|[ /])socket\\.(cc|cu|h):[0-9]+ (NCCL )?WARN", "(^|[ /])bootstrap\\.(cc|cu|h):[0-9]+ (NCCL )?WARN"},
               S::kUnknown,
               {R"((?:to|peer|from) (?P<peer>[0-9A-Za-z_.:\[\]-]+)<(?P<port>[0-9]+)>)",
                R"((?P<error>Connection (?:reset by peer|refused|timed out|closed by remote peer)|No route to host|Software caused connection abort|Network is unreachable))"},
               {"nccl.socket_peer"}, 0, ""});
  // The other end went away: usually a rank that failed first (resolvers
  // demote it when this log holds that failure).
  r.push_back({"nccl.socket_peer", "nccl.network_config", "peer_closed",
               {"NCCL WARN.*(Connection closed by remote peer|Connection reset by peer|Socket recv failed|"
                "[Rr]emote process exited)"},
               S::kUnknown,
               {R"((?:to|peer|from) (?P<peer>[0-9A-Za-z_.:\[\]-]+)<(?P<port>[0-9]+)>)",
                R"((?P<error>Connection (?:reset by peer|closed by remote peer)|Socket recv failed|[Rr]emote process exited))"},
               {}, 0, ""});
  r.push_back({"nccl.no_interface", "nccl.network_config", "no_interface",
               {"(?i)Bootstrap ?: no socket interface found",
                "(?i)no NCCL_SOCKET_IFNAME interface found", "(?i)NET/Socket ?: no interface found",
                "(?i)is neither AF_INET", "(?i)Socket creation failed ?: Address family not supported"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nccl.ifname", "", "", {"NCCL_SOCKET_IFNAME set (by environment )?to"},
               S::kUnknown, {R"(NCCL_SOCKET_IFNAME set (?:by environment )?to (?P<ifname>\S+))"},
               {}, 0, ""});
  r.push_back({"nccl.generic", "", "",
               {"ncclSystemError", "ncclInternalError", "ncclRemoteError",
                "(?i)unhandled system error", "(?i)internal error - please report this issue",
                "(?i)remote process exited or there was a network error"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nccl.shm", "nccl.shm", "",
               {"Error while creating shared memory segment", "failed to extend /dev/shm",
                "(?i)unable to allocate shared memory", "NCCL WARN.*(shm_open|posix_fallocate)"},
               S::kUnknown,
               {R"((?P<segment>/dev/shm/nccl-[A-Za-z0-9]+) (?:\(size |to )(?P<size_bytes>[0-9]+))",
                R"(error: (?P<error>[A-Za-z][A-Za-z ]+[a-z]) \((?P<errno>[0-9]+)\))"},
               {}, 0, ""});
  // Attaching fails when the creating rank's segment is gone or not visible:
  // another IPC namespace (containers), RemoveIPC, or that rank died first.
  r.push_back({"nccl.shm_attach", "nccl.shm", "attach_failed",
               {"Error while attaching to shared memory segment"},
               S::kUnknown,
               {R"((?P<segment>/dev/shm/nccl-[A-Za-z0-9]+) \(size (?P<size_bytes>[0-9]+))",
                R"(error: (?P<error>[A-Za-z][A-Za-z ]+[a-z]) \((?P<errno>[0-9]+)\))"},
               {}, 0, ""});
  r.push_back({"nccl.ib_none", "", "", {"NET/IB ?: No device found"}, S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nccl.socket_used", "", "",
               {"Using network Socket", "NET/Socket ?: Using \\[", "via NET/Socket"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nccl.ofi_ok", "", "",
               {"(?i)Selected Provider is efa", "(?i)Using network (AWS )?Libfabric",
                "(?i)via NET/(AWS )?Libfabric", "(?i)Using network OFI"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nccl.efa_intent", "", "",
               {"NCCL_NET set by environment to",
                "(?i)NET/OFI Running on (p3dn|p4d|p4de|p5|p5e|p5en|trn1|trn1n|trn2)",
                "(?i)NET/OFI .*instance type (p3dn|p4d|p4de|p5|p5e|p5en|trn1|trn1n|trn2)\\.",
                "(?i)FI_PROVIDER.{0,20}efa"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nccl.ofi_failed", "", "",
               {"(?i)NET/OFI (Couldn't|Could not|Unable to) find (any optimal|a) provider",
                "(?i)NET/OFI No eligible providers", "(?i)NET/OFI .*fi_getinfo.*failed",
                "(?i)fi_getinfo: provider efa output empty list",
                "(?i)Failed to initialize any NET plugin", "(?i)NET/OFI .*Failed to initiali[sz]e",
                "(?i)NET/OFI aws-ofi-nccl initiali[sz]ation failed"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"efa.absent", "", "", {"fi_getinfo: -61"}, S::kUnknown, {}, {}, 0, ""});
  r.push_back({"efa.mr", "efa.mr_registration", "",
               {"(?i)Unable to register memory", "(?i)Failed to register mr",
                "(?i)Unable to register MR", "(?i)fi_mr_reg failed", "REG_MR \\(opcode",
                "(?i)Libfabric error: \\(-12\\) Cannot allocate memory", "EFA internal error: \\(4112\\)",
                "(?i)cannot allocate memory for EFA"},
               S::kUnknown,
               {R"(RC: (?P<rc>-?[0-9]+))",
                R"((?P<error>Cannot allocate memory|Invalid argument|Bad address))",
                R"(infiniband (?P<device>efa_[0-9]+|rdmap[0-9a-z]+))"},
               {}, 0, ""});
  // ---- OS limits ---------------------------------------------------------------
  r.push_back({"memlock", "limits.memlock", "",
               {"RLIMIT_MEMLOCK is [0-9]+ bytes", "(?i)memlock limit", "(?i)locked memory (limit|ulimit)",
                "(?i)ibv_reg_mr.*Cannot allocate memory", "(?i)ibv_create_cq.*Cannot allocate memory",
                "(?i)(cannot|couldn't|could not|can't|unable to) lock memory", "RLIMIT_MEMLOCK is too low",
                "(?i)failed to lock memory", "(?i)mlock\\(\\).*(Cannot allocate memory|Operation not permitted)",
                "(?i)mlockall\\(\\).*(Cannot allocate memory|Operation not permitted)"},
               S::kUnknown, {R"(RLIMIT_MEMLOCK is (?P<memlock_bytes>[0-9]+) bytes)"}, {}, 0, ""});
  r.push_back({"nofile", "limits.nofile", "",
               {"Too many open files", "received 0 items of ancdata", "\\[Errno 24\\]"},
               S::kUnknown, {}, {}, 0, ""});
  r.push_back({"nproc", "limits.nproc", "",
               {"(?i)pthread_create failed.*Resource temporarily unavailable",
                "(?i)can't start new thread", "(?i)fork: retry: (Resource temporarily unavailable|No child processes)",
                "(?i)fork: Resource temporarily unavailable",
                "(?i)Thread creation failed: Resource temporarily unavailable",
                "(?i)failed to create new (OS )?thread", "(?i)fork rejected by pids controller"},
               S::kUnknown,
               {R"(RLIMIT_NPROC (?P<nproc_soft>-?[0-9]+) current, (?P<nproc_hard>-?[0-9]+) max)"},
               {}, 1, ""});
  r.push_back({"shm.dataloader", "limits.shm", "dataloader",
               {"(?i)insufficient shared memory \\(shm\\)", "(?i)out of shared memory",
                "(?i)unable to open shared memory object", "(?i)unable to write to file </torch_",
                "(?i)is killed by signal: Bus error", "No space left on device.*/dev/shm",
                "/dev/shm.*No space left on device"},
               S::kUnknown, {}, {"nccl.shm"}, 0, ""});
  r.push_back({"max_map_count", "limits.max_map_count", "",
               {"max_map_count.*too low", "unable to mmap [0-9]+ bytes", "(?i)max virtual memory areas"},
               S::kUnknown, {R"(max_map_count \[?(?P<max_map_count>[0-9]+)\]?)"}, {}, 0, ""});
  r.push_back({"host.oom", "host.oom", "",
               {"Out of memory: Kill", "oom-kill:", "invoked oom-killer", "Memory cgroup out of memory",
                "Killed process [0-9]+ \\([^)]*\\),? total-vm",
                "is killed by signal: Killed", "DefaultCPUAllocator: can't allocate memory"},
               S::kUnknown,
               {R"(Killed process (?P<pid>[0-9]+) \((?P<proc>[^)]+)\))", R"(anon-rss:(?P<anon_rss>[0-9]+kB))",
                R"(task=(?P<proc>[^,]+),pid=(?P<pid>[0-9]+))", R"(\((?P<proc>[^)]+)\) invoked)"},
               {}, 0, ""});
  r.push_back({"syn_flood", "limits.somaxconn", "syn_flood", {"Possible SYN flooding on port"},
               S::kUnknown, {R"(on port (?P<port>[0-9]+))"}, {}, 0, ""});
  r.push_back({"listen_overflow", "limits.somaxconn", "listen_overflow",
               {"[1-9][0-9]* times the listen queue of a socket overflowed"}, S::kUnknown,
               {R"((?P<overflows>[0-9]+) times the listen queue)"}, {}, 0, ""});
  // ---- SELinux -----------------------------------------------------------------
  r.push_back({"selinux.avc", "selinux.avc", "", {"avc:  denied", "avc: denied"}, S::kUnknown,
               {R"(\{ (?P<perms>[^}]+) \})", R"~(comm="?(?P<comm>[^" ]+)"?)~",
                R"(scontext=(?P<scontext>\S+))", R"(tcontext=(?P<tcontext>\S+))",
                R"(tclass=(?P<tclass>\S+))", R"(permissive=(?P<permissive>[01]))",
                R"~( (?:path|name)="?(?P<target>[^" ]+)"?)~"},
               {}, 0, ""});
  // ---- storage -----------------------------------------------------------------
  r.push_back({"io.hung_task", "storage.slow", "hung_task", {"blocked for more than [0-9]+ seconds"},
               S::kUnknown,
               {R"(task (?P<proc>[^ :]+):(?P<pid>[0-9]+) blocked for more than (?P<seconds>[0-9]+) seconds)"},
               {}, 0, ""});
  r.push_back({"io.nvme_timeout", "storage.slow", "io_timeout",
               {"nvme[0-9]+: I/O [0-9]+ QID [0-9]+ timeout, aborting", "nvme[0-9]+: (queue [0-9]+: )?timeout request"},
               S::kUnknown, {R"((?P<device>nvme[0-9]+))"}, {}, 0, ""});
  r.push_back({"io.error", "storage.slow", "io_error",
               {"blk_update_request: I/O error", "Buffer I/O error on dev",
                "I/O error, dev [a-z0-9]+, sector", "(?i)critical medium error"},
               S::kError, {R"(dev (?P<device>[a-z0-9]+))"}, {}, 0, ""});
  // ---- compute, input pipeline, CPU ----------------------------------------------
  r.push_back({"nccltests.oob", "gpu.compute_wrong", "collective_wrong",
               {"Out of bounds values ?: [1-9][0-9]* FAILED"}, S::kUnknown,
               {R"(Out of bounds values ?: (?P<wrong_values>[0-9]+))"}, {}, 0, ""});
  r.push_back({"tf.input_bound", "io.starved", "input_bound",
               {"(?i)is (highly |moderately )?input-bound",
                "(?i)input pipeline is (likely )?the bottleneck",
                "(?i)does not have many workers which may be a bottleneck"},
               S::kUnknown, {R"((?P<wait_percent>[0-9.]+)% of the total step time)"}, {}, 0, ""});
  r.push_back({"cpupower.governor", "cpu.governor", "", {"The governor \"[a-z]+\" may decide"},
               S::kUnknown, {R"~(The governor "(?P<governor>[a-z]+)")~"}, {}, 0, ""});
  // ---- rendezvous / reachability ----------------------------------------------------
  r.push_back({"net.rendezvous", "net.unreachable", "rendezvous",
               {"(?i)client socket has timed out after .* while trying to connect to",
                "DistNetworkError", "RendezvousConnectionError", "RendezvousTimeoutError",
                "(?i)waiting for clients\\. [0-9]+/[0-9]+ clients joined",
                "(?i)TCPStore.*(Connection refused|timed out|failed to connect)",
                "(?i)No route to host", "(?i)c10d.*Connection refused",
                "(?i)nc: connect to .* failed", "(?i)Ncat: (Connection refused|TIMEOUT)"},
               S::kUnknown,
               {R"(connect to \((?P<peer>[^,]+), (?P<port>[0-9]+)\))",
                R"(host (?P<peer>[0-9A-Za-z_.-]+):(?P<port>[0-9]+))",
                R"(connect to (?P<peer>[^ ]+) port (?P<port>[0-9]+))"},
               {"nccl.socket"}, 0, ""});
  return r;
}

}  // namespace

const std::vector<LogRule>& log_rules() {
  static const std::vector<LogRule> rules = make_rules();
  return rules;
}

const LogRule* find_log_rule(const std::string& key) {
  for (const auto& r : log_rules())
    if (r.key == key) return &r;
  return nullptr;
}

std::string to_posix_ere(const std::string& pattern) {
  if (pattern.rfind("(?i)", 0) != 0) return pattern;
  const std::string p = pattern.substr(4);
  auto other = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return static_cast<char>(std::islower(u) ? std::toupper(u) : std::tolower(u));
  };
  auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {  // escapes (\s, \., ...) stay as they are
      out += c;
      out += p[++i];
    } else if (c == '[') {
      // A bracket expression: keep it, then add the other case of its
      // letters and letter ranges ([a-f] -> [a-fA-F]).
      std::size_t j = i + 1;
      std::string head = "[";
      if (j < p.size() && p[j] == '^') head += p[j++];
      std::string body, extra;
      bool first = true;
      while (j < p.size() && (p[j] != ']' || first)) {
        first = false;
        if (p[j] == '\\' && j + 1 < p.size()) {
          body += p.substr(j, 2);
          j += 2;
        } else if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
          body += p.substr(j, 3);
          if (letter(p[j]) && letter(p[j + 2])) extra += std::string(1, other(p[j])) + "-" + other(p[j + 2]);
          j += 3;
        } else {
          body += p[j];
          if (letter(p[j])) extra += other(p[j]);
          ++j;
        }
      }
      // A trailing '-' is a literal only in last place: keep it there.
      const bool dash = body.size() > 1 && body.back() == '-' && body[body.size() - 2] != '\\';
      if (dash) body.pop_back();
      out += head + body + extra + (dash ? "-" : "") + "]";
      i = j;
    } else if (letter(c)) {
      out += '[';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace nodeprobe::diag
