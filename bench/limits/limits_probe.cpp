#include "limits_probe.h"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "nodeprobe/fs_root.h"
#include "nodeprobe/size.h"

namespace nodeprobe::limits {
namespace {

constexpr const char* kSysctlFile = "/etc/sysctl.d/99-nodeprobe.conf";
constexpr const char* kLimitsFile = "/etc/security/limits.d/99-nodeprobe.conf";

std::string sysctl_fix(const std::string& name, std::uint64_t value) {
  return "echo '" + name + " = " + std::to_string(value) + "' >> " + kSysctlFile +
         " && sysctl --system";
}

std::optional<std::uint64_t> parse_u64(const std::string& s) {
  const auto tok = split_ws(s);
  if (tok.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(tok[0].c_str(), &end, 10);
  if (end == tok[0].c_str() || *end != '\0' || tok[0][0] == '-') return std::nullopt;
  if (errno == ERANGE) return kUnlimited;
  return static_cast<std::uint64_t>(v);
}

void unreadable(ProbeResult& r, const std::string& id, const std::string& expected,
                const FsRoot& fs, const std::string& path) {
  Check& c = add_check(r, id, Status::kSkip, "unavailable", expected);
  c.detail = "cannot read " + path + ": " + FsRoot::why_unreadable(fs.resolve(path));
}

struct SysctlSpec {
  const char* id;
  const char* name;  // sysctl name
  const char* path;
  std::uint64_t recommended;
  const char* finding;
  const char* unit;  // appended to numbers in observed/expected
};

constexpr SysctlSpec kSysctls[] = {
    {"limits.shmmax", "kernel.shmmax", "/proc/sys/kernel/shmmax", kShmmax, "limits.shm", " bytes"},
    {"limits.shmall", "kernel.shmall", "/proc/sys/kernel/shmall", kShmall, "limits.shm", " pages"},
    {"limits.max_map_count", "vm.max_map_count", "/proc/sys/vm/max_map_count", kMaxMapCount,
     "limits.max_map_count", ""},
    {"limits.somaxconn", "net.core.somaxconn", "/proc/sys/net/core/somaxconn", kSomaxconn,
     "limits.somaxconn", ""},
    {"limits.netdev_max_backlog", "net.core.netdev_max_backlog",
     "/proc/sys/net/core/netdev_max_backlog", kNetdevBacklog, "limits.netdev_backlog", ""},
};

// Status of a soft/hard resource limit against a recommended minimum.
Status limit_status(std::uint64_t value, std::uint64_t recommended) {
  return value == kUnlimited || value >= recommended ? Status::kPass : Status::kWarn;
}

/// Timed active verifications run this often: their spread is the metric's
/// (7: compare judges a separation of fewer samples as chance).
constexpr int kActiveRepeats = 7;

// Runs an active verification kActiveRepeats times (stopping at the first
// failure) and, when it was timed, adds its rate in GB/s with the spread of
// the repeats. Returns the failure, else the last outcome.
template <typename Fn>
Active timed_repeats(ProbeResult& r, const std::string& metric, std::uint64_t bytes, Fn fn) {
  Active last;
  std::vector<double> gbs;
  for (int i = 0; i < kActiveRepeats; ++i) {
    last = fn();
    if (!last.ok) return last;
    if (last.seconds > 0) gbs.push_back(static_cast<double>(bytes) / last.seconds / 1e9);
  }
  if (!gbs.empty()) add_sampled_metric(r, metric, gbs);
  return last;
}

// Both rates' 7 samples repeat back to back in one run and share its memory
// state (free and host-backed pages), so two runs of an unchanged node differ
// far beyond one run's spread. Measured on the 2-core CI VM with
// bench/compare/run_to_run.sh --runs 8 -- nodeprobe-limits -q: quiet, 8 runs
// dev_shm_fill 1.45x and mlock_rate 1.62x apart, with 15 and 12 of the 28
// pairs of runs separating (a within-run spread of 1.14x and 1.23x); at load
// 2-3.5 over 10 runs 2.56x and 3.04x; at load 6 over 8 runs 1.44x and 3.28x.
// compare calls neither worse within 3.5x.
constexpr double kMemoryRunToRun = 3.5;

const std::vector<MetricDescriptor>& limits_metrics() {
  static const std::vector<MetricDescriptor> t = {
      measured("dev_shm_fill", "GB/s", Better::kHigher,
               "POSIX shared memory allocated in /dev/shm per second (posix_fallocate of --shm-bytes); "
               "spread over 7 repeats")
          .titled("/dev/shm fill")
          .run_to_run(kMemoryRunToRun),
      measured("mlock_rate", "GB/s", Better::kHigher,
               "anonymous memory faulted in and locked per second (mlock of --mlock-bytes); spread over 7 repeats")
          .titled("mlock")
          .run_to_run(kMemoryRunToRun),
  };
  return t;
}

/// Checks that observe the node's state rather than its settings (free
/// space changes run to run): left out of the probe's environment.
bool is_state(const std::string& check_id) {
  return check_id == "limits.dev_shm.free" || check_id.rfind("disk.", 0) == 0;
}

}  // namespace

std::string format_bytes(std::uint64_t b) { return b == kUnlimited ? "unlimited" : format_size(b); }

std::string format_count(std::uint64_t n) {
  return n == kUnlimited ? "unlimited" : std::to_string(n);
}

void LimitsProbe::run(ProbeContext& ctx, ProbeResult& r) {
  r.config = Json{{"active", opt_.active},
                  {"mlock_bytes", opt_.mlock_bytes},
                  {"shm_bytes", opt_.shm_bytes},
                  {"open_files", opt_.open_files},
                  {"sysroot", ctx.fs.is_live() ? "/" : ctx.fs.root()}};
  declare_metrics(r, limits_metrics());
  check_sysctls(ctx, r);
  check_dev_shm(ctx, r);
  check_disk_free(ctx, r);
  check_memlock(ctx, r);
  check_nofile(ctx, r);
  check_nproc(ctx, r);
  check_governor(ctx, r);
  check_thp(ctx, r);
  check_selinux(ctx, r);
  check_numa_balancing(ctx, r);
  // The settings observed are the environment compare shows next to the numbers.
  for (const auto& c : r.checks)
    if (!is_state(c.id) && c.status != Status::kSkip) r.environment[c.id] = c.observed;
}

void LimitsProbe::check_sysctls(ProbeContext& ctx, ProbeResult& r) {
  for (const auto& s : kSysctls) {
    const std::string expected = ">= " + std::to_string(s.recommended) + s.unit;
    const auto raw = ctx.fs.read_line(s.path);
    const auto value = raw ? parse_u64(*raw) : std::nullopt;
    if (!value) {
      unreadable(r, s.id, expected, ctx.fs, s.path);
      continue;
    }
    const bool ok = *value >= s.recommended;
    Check& c = add_check(r, s.id, ok ? Status::kPass : Status::kWarn, *raw + s.unit, expected,
                         ok ? "" : sysctl_fix(s.name, s.recommended), s.finding);
    // shmmax is what a SysV segment may reach: verify it when the number says
    // a large one is allowed (containers without IPC namespacing can disagree).
    if (std::string(s.id) == "limits.shmmax" && opt_.active && ctx.fs.is_live() &&
        *value >= opt_.shm_bytes) {
      const Active a = sys_.try_sysv_shm(opt_.shm_bytes);
      if (a.ok) {
        c.detail = "verified: created and removed a " + format_bytes(opt_.shm_bytes) + " SysV segment";
      } else {
        c.status = Status::kFail;
        c.detail = "contradiction: shmmax allows it but a " + format_bytes(opt_.shm_bytes) +
                   " SysV segment failed: " + a.error;
        c.fix = "check the container or IPC namespace limits (docker --ipc=host), then " +
                sysctl_fix(s.name, s.recommended);
      }
    }
  }
}

void LimitsProbe::check_dev_shm(ProbeContext& ctx, ProbeResult& r) {
  const std::string path = ctx.fs.resolve("/dev/shm");
  const auto usage = sys_.fs_usage(path);
  const std::uint64_t mem = ctx.host ? static_cast<std::uint64_t>(ctx.host->memory_bytes) : 0;
  // Recommended: half of RAM (the tmpfs default on a full OS), at most 64 GiB;
  // anything from a quarter of RAM up passes.
  const std::uint64_t want = mem ? std::min<std::uint64_t>(mem / 2, 64ULL << 30) : (8ULL << 30);
  const std::uint64_t warn_below = std::max<std::uint64_t>(kDevShmMin, want / 2);
  const std::string gib = std::to_string(std::max<std::uint64_t>(1, want >> 30));
  const std::string fix = "mount -o remount,size=" + gib +
                          "G /dev/shm; persist with the /etc/fstab line 'tmpfs /dev/shm tmpfs "
                          "defaults,size=" + gib + "G 0 0'; in a container: docker run --shm-size=" +
                          gib + "g (or --ipc=host)";
  const std::string expected = ">= " + format_bytes(warn_below);
  if (!usage && !ctx.fs.is_live()) {
    add_check(r, "limits.dev_shm.size", Status::kSkip, "unavailable", expected).detail =
        "no /dev/shm under " + ctx.fs.root();
    return;
  }
  if (!usage) {
    Check& c = add_check(r, "limits.dev_shm.size", Status::kFail, "missing", expected, fix,
                         "limits.shm");
    c.detail = "statfs(" + path + "): " + FsRoot::why_unreadable(path) +
               "; POSIX shared memory (NCCL SHM, DataLoader workers) needs it";
    return;
  }
  Status size_status = Status::kPass;
  if (usage->size_bytes < kDevShmMin) size_status = Status::kFail;
  else if (usage->size_bytes < warn_below) size_status = Status::kWarn;
  Check& size = add_check(r, "limits.dev_shm.size", size_status, format_bytes(usage->size_bytes),
                          expected, size_status == Status::kPass ? "" : fix, "limits.shm");
  if (size_status == Status::kFail)  // before the next add_check invalidates `size`
    size.detail = "NCCL's SHM transport and DataLoader workers fail with a /dev/shm this small "
                  "(64 MiB is the container default)";

  const bool free_ok = usage->free_bytes >= std::min(kDevShmFreeMin, usage->size_bytes / 2);
  Check& free = add_check(r, "limits.dev_shm.free", free_ok ? Status::kPass : Status::kWarn,
                          format_bytes(usage->free_bytes) + " free",
                          ">= " + format_bytes(std::min(kDevShmFreeMin, usage->size_bytes / 2)) + " free",
                          free_ok ? "" : "ls -la /dev/shm; remove segments left by dead jobs "
                                         "(e.g. rm /dev/shm/nccl-* /dev/shm/torch_*)",
                          "limits.shm");
  if (opt_.active && ctx.fs.is_live()) {
    const Active a = timed_repeats(r, "dev_shm_fill", opt_.shm_bytes, [&] { return sys_.try_posix_shm(opt_.shm_bytes); });
    if (a.ok) {
      free.detail = "verified: allocated and removed a " + format_bytes(opt_.shm_bytes) +
                    " POSIX shm segment";
    } else if (usage->free_bytes >= opt_.shm_bytes) {
      free.status = Status::kFail;
      free.detail = "contradiction: " + format_bytes(usage->free_bytes) + " free but a " +
                    format_bytes(opt_.shm_bytes) + " segment failed: " + a.error +
                    " (a cgroup memory limit?)";
      free.fix = "check the container's memory limit and --shm-size; " + fix;
    } else {
      free.detail = "a " + format_bytes(opt_.shm_bytes) + " segment failed as expected: " + a.error;
    }
  }
}

// The filesystems a training job writes to without being told where: the
// root (container layers, pip, conda and Hugging Face caches under /root or
// /home, default checkpoint and log paths) and /tmp; then the data volumes
// it is told to use: every other writable local filesystem mounted outside
// the system places (an instance store at /opt/dlami/nvme, an EBS volume at
// /data); then the network volumes checkpoints go to (FSx for Lustre at
// /fsx, EFS or an NFS home), each asked from a child process with a time
// limit (fs_space_within), because statfs on one whose server hangs blocks
// and this probe must answer within its deadline: a server that does not
// answer is reported as such. A full one fails writes with ENOSPC, which
// diag names storage.full from the logs; /dev/shm is checked above. One
// filesystem is one check, under the first path that reaches it.
namespace {

// "/opt/dlami/nvme" -> "opt-dlami-nvme": a check id part (^[a-z][a-z0-9_.-]*$ as a whole).
std::string mount_id_part(const std::string& dir) {
  std::string out;
  const std::size_t from = dir.find_first_not_of('/');
  if (from == std::string::npos) return out;
  for (const char ch : dir.substr(from)) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out += c == '/' ? '-' : (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '_';
  }
  return out;
}

}  // namespace

void LimitsProbe::check_disk_free(ProbeContext& ctx, ProbeResult& r) {
  const std::string expected = ">= " + format_bytes(kDiskFreeWarn) + " free";
  struct Place {
    std::string id, path;
    const MountEntry* net = nullptr;  ///< a network volume: asked with a time limit
  };
  std::vector<Place> places = {{"disk.root.free", "/"}, {"disk.tmp.free", "/tmp"}};
  constexpr std::size_t kMaxDataMounts = 16;  // a report, not an inventory of every volume
  const std::vector<MountEntry> mounts = parse_mounts(ctx.fs.read("/proc/self/mounts").value_or(""));
  for (const MountEntry& m : mounts) {
    if (places.size() >= 2 + kMaxDataMounts) break;
    const bool net = network_data_volume(m);
    if ((!data_volume(m) && !net) || m.dir == "/tmp" || m.dir.empty() || m.dir[0] != '/' ||
        m.dir.rfind("/var/lib/", 0) == 0)
      continue;  // /var/lib/{docker,containerd,kubelet}: container layers and pod volumes, one per container
    const std::string part = mount_id_part(m.dir);
    const std::string id = "disk.mount." + part + ".free";
    if (!part.empty() && std::none_of(places.begin(), places.end(), [&](const Place& p) { return p.id == id; }))
      places.push_back({id, m.dir, net ? &m : nullptr});
  }
  std::vector<std::uint64_t> seen;
  int net_budget_ms = kNetFsBudgetMs;
  for (const Place& place : places) {
    const std::string& id = place.id;
    const std::string& path = place.path;
    const bool data_mount = id.rfind("disk.mount.", 0) == 0;
    const std::string where = ctx.fs.resolve(path);
    std::optional<FsSpace> usage;
    // A network volume is named with its type and server in what it says.
    const std::string named = place.net ? path + " (" + place.net->type + " from " + place.net->device + ")" : path;
    if (place.net) {
      if (net_budget_ms <= 0) {
        add_check(r, id, Status::kSkip, "not asked", expected).detail =
            named + " was not asked: the time for network filesystems was spent on the ones before";
        continue;
      }
      const int limit = std::min(kNetFsAnswerMs, net_budget_ms);
      const auto t0 = std::chrono::steady_clock::now();
      const BoundedFsSpace b = sys_.fs_usage_within(where, limit);
      // A volume that did not answer spent its whole limit; one that did, the time it took.
      net_budget_ms -= b.timed_out ? limit
                                   : static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                          std::chrono::steady_clock::now() - t0)
                                                          .count());
      if (b.timed_out) {
        const std::string waited = limit % 1000 ? std::to_string(limit) + " ms" : std::to_string(limit / 1000) + " s";
        Check& c = add_check(r, id, Status::kWarn, "no answer in " + waited, "an answer",
                             "mount | grep ' " + path + " '  # the server; then check it (FSx: aws fsx "
                             "describe-file-systems; NFS: rpcinfo -p SERVER, showmount -e SERVER) and, once it "
                             "answers, remount: umount -l " + path + " && mount " + path,
                             "storage.slow");
        c.detail = named + " did not answer statfs within " + waited +
                   ": its server is not responding, and every job that reads or writes there blocks";
        continue;
      }
      usage = b.space;
    } else {
      usage = sys_.fs_usage(where);
    }
    if (!usage) {
      if (data_mount) continue;  // listed in the mount table but not reachable from here (another namespace)
      add_check(r, id, Status::kSkip, "unavailable", expected).detail =
          "statvfs(" + where + "): " + FsRoot::why_unreadable(where);
      continue;
    }
    if (usage->device != 0 && std::find(seen.begin(), seen.end(), usage->device) != seen.end()) continue;
    seen.push_back(usage->device);
    const std::string observed = format_bytes(usage->free_bytes) + " free of " + format_bytes(usage->size_bytes);
    if (usage->read_only) {
      add_check(r, id, Status::kSkip, observed, expected).detail = path + " is mounted read-only: nothing writes there";
      continue;
    }
    const Status s = usage->free_bytes < kDiskFreeFail   ? Status::kFail
                     : usage->free_bytes < kDiskFreeWarn ? Status::kWarn
                                                         : Status::kPass;
    std::string fix;
    if (s != Status::kPass)
      fix = std::string("sudo du ") + (place.net ? "-h" : "-xh") + " --max-depth=2 " + path +
            " 2>/dev/null | sort -h | tail -20  # what fills it" +
            (place.net ? " (slow on a big network volume: start with the checkpoint directories); then remove old "
                         "checkpoints, or grow the volume (FSx for Lustre: aws fsx update-file-system "
                         "--storage-capacity; EFS grows by itself, so a full EFS is a quota or a throughput limit)"
                       : "; then remove old checkpoints, docker system prune -a, pip cache purge, conda clean -a, or "
                         "grow the volume (EBS: aws ec2 modify-volume, growpart, resize2fs / xfs_growfs)");
    Check& c = add_check(r, id, s, observed, expected, fix, "storage.full");
    if (s != Status::kPass) {
      // Rounded down: "100% used" only when it is.
      const double used = usage->size_bytes ? 100.0 * (1.0 - static_cast<double>(usage->free_bytes) /
                                                                 static_cast<double>(usage->size_bytes))
                                            : 100.0;
      c.detail = named + " is " + std::to_string(static_cast<int>(used)) +
                 "% used: writes there (checkpoints, caches, container layers, logs) fail with ENOSPC once it fills";
    }
  }
}

void LimitsProbe::check_memlock(ProbeContext& ctx, ProbeResult& r) {
  const auto lim = sys_.rlimit(RLIMIT_MEMLOCK);
  const std::string fix =
      "add to " + std::string(kLimitsFile) +
      ": '* soft memlock unlimited' and '* hard memlock unlimited' (log in again); "
      "systemd units: LimitMEMLOCK=infinity; containers: docker run --ulimit memlock=-1:-1";
  if (!lim) {
    add_check(r, "limits.memlock.soft", Status::kSkip, "unavailable", "unlimited").detail =
        "getrlimit(RLIMIT_MEMLOCK) failed";
    return;
  }
  const Status soft_s = limit_status(lim->soft, kUnlimited);
  const std::size_t soft_i = r.checks.size();
  add_check(r, "limits.memlock.soft", soft_s, format_bytes(lim->soft), "unlimited",
            soft_s == Status::kPass ? "" : fix, "limits.memlock");
  const Status hard_s = limit_status(lim->hard, kUnlimited);
  add_check(r, "limits.memlock.hard", hard_s, format_bytes(lim->hard), "unlimited",
            hard_s == Status::kPass ? "" : fix, "limits.memlock");
  if (!opt_.active || !ctx.fs.is_live()) return;
  const Active a = timed_repeats(r, "mlock_rate", opt_.mlock_bytes, [&] { return sys_.try_mlock(opt_.mlock_bytes); });
  Check& soft = r.checks[soft_i];  // taken after the last add_check: no reallocation since
  const bool cap = sys_.has_cap_ipc_lock();
  const std::string amount = format_bytes(opt_.mlock_bytes);
  const bool allowed = lim->soft == kUnlimited || lim->soft >= opt_.mlock_bytes;
  if (a.ok && allowed) {
    soft.detail = "verified: locked " + amount;
  } else if (a.ok) {
    soft.detail = "locked " + amount + " beyond the limit" +
                  (cap ? std::string(" because this process has CAP_IPC_LOCK (root)") : "") +
                  "; unprivileged training jobs still get " + format_bytes(lim->soft);
  } else if (allowed) {
    soft.status = Status::kFail;
    soft.detail = "contradiction: the limit allows it but locking " + amount + " failed: " +
                  a.error + " (container or cgroup limit?)";
  } else {
    soft.detail = "locking " + amount + " failed as the limit says: " + a.error +
                  "; EFA and pinned-memory registration (ibverbs) need more";
  }
}

void LimitsProbe::check_nofile(ProbeContext& ctx, ProbeResult& r) {
  const auto lim = sys_.rlimit(RLIMIT_NOFILE);
  const std::string fix = "add to " + std::string(kLimitsFile) +
                          ": '* soft nofile 65535' and '* hard nofile 65535' (log in again); "
                          "systemd units: LimitNOFILE=65535; check a running job in /proc/PID/limits";
  if (!lim) {
    add_check(r, "limits.nofile.soft", Status::kSkip, "unavailable", ">= 65535").detail =
        "getrlimit(RLIMIT_NOFILE) failed";
    return;
  }
  const std::string expected = ">= " + std::to_string(kNofile);
  const Status soft_s = limit_status(lim->soft, kNofile);
  const std::size_t soft_i = r.checks.size();
  add_check(r, "limits.nofile.soft", soft_s, format_count(lim->soft), expected,
            soft_s == Status::kPass ? "" : fix, "limits.nofile");
  const Status hard_s = limit_status(lim->hard, kNofile);
  add_check(r, "limits.nofile.hard", hard_s, format_count(lim->hard), expected,
            hard_s == Status::kPass ? "" : fix, "limits.nofile");
  if (!opt_.active || !ctx.fs.is_live()) return;
  Check& soft = r.checks[soft_i];
  // Open as many as the soft limit promises (bounded), minus what is open now.
  const std::uint64_t in_use = sys_.open_descriptors();
  const std::uint64_t cap = lim->soft == kUnlimited ? opt_.open_files : lim->soft;
  const std::uint64_t target = std::min(opt_.open_files, cap > in_use + 8 ? cap - in_use - 8 : 0);
  if (target == 0) return;
  const Active a = sys_.try_open_files(target);
  if (a.ok) {
    soft.detail = "verified: opened " + std::to_string(a.achieved) + " descriptors";
  } else {
    soft.status = Status::kFail;
    soft.detail = "contradiction: the limit is " + format_count(lim->soft) + " but only " +
                  std::to_string(a.achieved + in_use) + " descriptors could be open: " + a.error +
                  " (fs.file-max or a container limit?)";
  }
}

void LimitsProbe::check_nproc(ProbeContext& /*ctx*/, ProbeResult& r) {
  const auto lim = sys_.rlimit(RLIMIT_NPROC);
  if (!lim) {
    add_check(r, "limits.nproc.soft", Status::kSkip, "unavailable", ">= 65535").detail =
        "getrlimit(RLIMIT_NPROC) failed";
    return;
  }
  const Status s = limit_status(lim->soft, kNproc);
  Check& c = add_check(r, "limits.nproc.soft", s, format_count(lim->soft),
                       ">= " + std::to_string(kNproc) + " or unlimited",
                       s == Status::kPass ? "" :
                       "add to " + std::string(kLimitsFile) +
                       ": '* soft nproc unlimited' and '* hard nproc unlimited' (RHEL's "
                       "limits.d/20-nproc.conf caps users at 4096); systemd units: LimitNPROC=infinity",
                       "limits.nproc");
  c.detail = "counts threads: DataLoader workers, NCCL and OpenMP threads of every process of the user";
}

void LimitsProbe::check_governor(ProbeContext& ctx, ProbeResult& r) {
  std::map<std::string, int> by_governor;
  int cpus = 0;
  for (const auto& e : ctx.fs.list_dir("/sys/devices/system/cpu")) {
    if (e.rfind("cpu", 0) != 0 || e.size() < 4 ||
        !std::all_of(e.begin() + 3, e.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    ++cpus;
    if (auto g = ctx.fs.read_line("/sys/devices/system/cpu/" + e + "/cpufreq/scaling_governor"))
      ++by_governor[*g];
  }
  if (by_governor.empty()) {
    Check& c = add_check(r, "cpu.governor", Status::kSkip, "no cpufreq", "performance");
    c.detail = cpus ? "no CPU exposes cpufreq (a virtual machine whose hypervisor sets the "
                      "frequency, or the cpufreq driver is not loaded)"
                    : "cannot list /sys/devices/system/cpu";
    return;
  }
  std::string observed;
  int performance = 0;
  for (const auto& [g, n] : by_governor) {
    observed += (observed.empty() ? "" : ", ") + g + " on " + std::to_string(n) + " CPUs";
    if (g == "performance") performance = n;
  }
  const int with_cpufreq = [&] {
    int n = 0;
    for (const auto& kv : by_governor) n += kv.second;
    return n;
  }();
  const bool ok = performance == with_cpufreq;
  add_check(r, "cpu.governor", ok ? Status::kPass : Status::kWarn, observed, "performance on all CPUs",
            ok ? "" : "cpupower frequency-set -g performance (package kernel-tools); persist with "
                      "tuned-adm profile throughput-performance",
            "cpu.governor");
}

void LimitsProbe::check_thp(ProbeContext& ctx, ProbeResult& r) {
  const std::string path = "/sys/kernel/mm/transparent_hugepage/enabled";
  const auto v = ctx.fs.read_line(path);
  if (!v) {
    unreadable(r, "mem.thp", "always or madvise", ctx.fs, path);
    return;
  }
  const std::string mode = selected_word(*v);  // "always [madvise] never"
  const bool ok = mode == "always" || mode == "madvise";
  Check& c = add_check(r, "mem.thp", ok ? Status::kPass : Status::kWarn, mode, "always or madvise",
                       ok ? "" : "echo madvise > " + path +
                                     " (persist: kernel command line transparent_hugepage=madvise)");
  c.detail = "large host buffers (pinned staging, NCCL) lose huge-page backing when THP is never";
}

void LimitsProbe::check_selinux(ProbeContext& ctx, ProbeResult& r) {
  // Informational: enforcing is a valid configuration; what matters are the
  // denials, which `nodeprobe diag` reads from the audit log.
  std::string mode;
  if (!ctx.fs.exists("/sys/fs/selinux")) {
    mode = "disabled";
  } else if (auto e = ctx.fs.read_line("/sys/fs/selinux/enforce")) {
    mode = *e == "1" ? "enforcing" : "permissive";
  } else {
    unreadable(r, "selinux.mode", "enforcing, permissive or disabled", ctx.fs,
               "/sys/fs/selinux/enforce");
    return;
  }
  Check& c = add_check(r, "selinux.mode", Status::kPass, mode, "enforcing, permissive or disabled");
  c.detail = mode == "enforcing"
                 ? "denials ('avc: denied' in /var/log/audit/audit.log) are checked by nodeprobe diag; "
                   "fix them with audit2allow, never with setenforce 0"
                 : "no SELinux denials can block training in this mode";
}

void LimitsProbe::check_numa_balancing(ProbeContext& ctx, ProbeResult& r) {
  const std::string path = "/proc/sys/kernel/numa_balancing";
  const auto v = ctx.fs.read_line(path);
  int nodes = 0;
  for (const auto& e : ctx.fs.list_dir("/sys/devices/system/node"))
    if (e.rfind("node", 0) == 0 && e.size() > 4) ++nodes;
  if (!v) {
    Check& c = add_check(r, "numa.balancing", Status::kSkip, "unavailable", "0 on multi-socket nodes");
    c.detail = "cannot read " + path + " (kernel built without NUMA balancing)";
    return;
  }
  const bool on = *v != "0";
  const bool multi = nodes > 1;
  Check& c = add_check(r, "numa.balancing", on && multi ? Status::kWarn : Status::kPass,
                       std::string(on ? "enabled" : "disabled") + " (" + std::to_string(nodes) +
                           " NUMA node" + (nodes == 1 ? "" : "s") + ")",
                       "disabled on multi-socket nodes",
                       on && multi ? sysctl_fix("kernel.numa_balancing", 0) : "");
  c.detail = multi ? "automatic page migration fights pinned buffers and GPU/NIC affinity"
                   : "single NUMA node: balancing has nothing to move";
}

}  // namespace nodeprobe::limits
