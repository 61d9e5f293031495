// The limits probe over fixture trees and a fake system: every item for
// pass / warn / fail / skip.
#include "limits_probe.h"
#include "nodeprobe/metric_descriptor.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <map>
#include <sstream>

namespace nodeprobe::limits {
namespace {

constexpr std::uint64_t kMiB = 1ULL << 20;
constexpr std::uint64_t kGiB = 1ULL << 30;

class FakeSystem : public LimitsSystem {
 public:
  std::map<int, RLimit> rlimits = {{RLIMIT_MEMLOCK, {kUnlimited, kUnlimited}},
                                   {RLIMIT_NOFILE, {65535, 65535}},
                                   {RLIMIT_NPROC, {kUnlimited, kUnlimited}}};
  std::optional<FsSpace> shm = FsSpace{64 * kGiB, 60 * kGiB};
  bool cap_ipc_lock = false;
  Active mlock_result{true, 16 * kMiB, ""};
  Active open_result{true, 8192, ""};
  Active posix_shm_result{true, 32 * kMiB, ""};
  Active sysv_shm_result{true, 32 * kMiB, ""};
  int active_calls = 0;

  std::optional<RLimit> rlimit(int resource) const override {
    auto it = rlimits.find(resource);
    if (it == rlimits.end()) return std::nullopt;
    return it->second;
  }
  std::optional<FsSpace> root_fs, tmp_fs;  ///< the root filesystem and /tmp; unset: as /dev/shm
  std::map<std::string, FsSpace> mount_fs;  ///< other mount points by their path's tail
  std::optional<FsSpace> fs_usage(const std::string& path) const override {
    auto ends = [&](const std::string& tail) {
      return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
    };
    for (const auto& [tail, fs] : mount_fs)
      if (ends(tail)) return fs;
    if (ends("/dev/shm")) return shm;
    if (ends("/tmp")) return tmp_fs ? tmp_fs : shm;
    return root_fs ? root_fs : shm;
  }
  std::vector<std::string> hung;   ///< network mounts (path tails) whose server does not answer
  mutable std::vector<int> limits;  ///< the time limit of every network query, in order
  BoundedFsSpace fs_usage_within(const std::string& path, int limit_ms) const override {
    limits.push_back(limit_ms);
    BoundedFsSpace b;
    for (const auto& tail : hung)
      if (path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0) {
        b.timed_out = true;
        return b;
      }
    b.space = fs_usage(path);
    return b;
  }
  std::uint64_t open_descriptors() const override { return 5; }
  bool has_cap_ipc_lock() const override { return cap_ipc_lock; }
  Active try_mlock(std::uint64_t) override { ++active_calls; return mlock_result; }
  Active try_open_files(std::uint64_t) override { ++active_calls; return open_result; }
  Active try_posix_shm(std::uint64_t) override { ++active_calls; return posix_shm_result; }
  Active try_sysv_shm(std::uint64_t) override { ++active_calls; return sysv_shm_result; }
};

std::string fixture(const std::string& name) {
  return std::string(NODEPROBE_FIXTURES) + "/sysroot/" + name;
}

struct ProbeRun {
  ProbeResult result;
  const Check& check(const std::string& id) const {
    for (const auto& c : result.checks)
      if (c.id == id) return c;
    throw std::runtime_error("no check " + id);
  }
};

ProbeRun run_probe(const std::string& root, FakeSystem& sys, long long mem_bytes = 64LL << 30,
              bool active = true) {
  FsRoot fs(root);
  HostInfo host;
  host.memory_bytes = mem_bytes;
  std::ostringstream log;
  ProbeContext ctx{fs, steady_clock(), log, false, 0, &host};
  LimitsOptions opt;
  opt.active = active;
  LimitsProbe probe(sys, opt);
  ProbeRun r;
  probe.run(ctx, r.result);
  return r;
}

// The probe over a root whose only file is /proc/self/mounts with these lines.
ProbeRun run_with_mounts(const std::string& mounts, FakeSystem& sys) {
  nodeprobe::testing::TempDir root;
  std::filesystem::create_directories(root.path() + "/proc/self");
  nodeprobe::testing::write_file(root.file("proc/self/mounts"), mounts);
  return run_probe(root.path(), sys);
}

TEST(LimitsProbe, TunedNodePassesSysctls) {
  FakeSystem sys;
  const ProbeRun r = run_probe(fixture("tuned"), sys);
  for (const char* id : {"limits.shmmax", "limits.shmall", "limits.max_map_count", "limits.somaxconn",
                         "limits.netdev_max_backlog", "cpu.governor", "mem.thp", "numa.balancing",
                         "limits.memlock.soft", "limits.memlock.hard", "limits.nofile.soft",
                         "limits.nofile.hard", "limits.nproc.soft", "limits.dev_shm.size",
                         "limits.dev_shm.free", "disk.root.free", "disk.tmp.free", "selinux.mode"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(r.check(id).status, Status::kPass) << r.check(id).observed;
    EXPECT_TRUE(r.check(id).fix.empty());
  }
  EXPECT_EQ(r.check("selinux.mode").observed, "disabled");
  EXPECT_EQ(status_from_checks(r.result), Status::kPass);
}

TEST(LimitsProbe, Rhel8DefaultsWarnWithExactFixes) {
  FakeSystem sys;
  const ProbeRun r = run_probe(fixture("rhel8-p4d"), sys);
  const Check& mmc = r.check("limits.max_map_count");
  EXPECT_EQ(mmc.status, Status::kWarn);
  EXPECT_EQ(mmc.observed, "65530");
  EXPECT_EQ(mmc.expected, ">= 262144");
  EXPECT_EQ(mmc.finding, "limits.max_map_count");
  EXPECT_EQ(mmc.fix,
            "echo 'vm.max_map_count = 262144' >> /etc/sysctl.d/99-nodeprobe.conf && sysctl --system");
  const Check& som = r.check("limits.somaxconn");
  EXPECT_EQ(som.status, Status::kWarn);
  EXPECT_NE(som.fix.find("net.core.somaxconn = 65535"), std::string::npos);
  EXPECT_EQ(som.finding, "limits.somaxconn");
  const Check& bl = r.check("limits.netdev_max_backlog");
  EXPECT_EQ(bl.status, Status::kWarn);
  EXPECT_EQ(bl.finding, "limits.netdev_backlog");
  // The kernel default shmmax (2^64 - 2^24 - 1) exceeds the recommendation.
  EXPECT_EQ(r.check("limits.shmmax").status, Status::kPass);
  const Check& gov = r.check("cpu.governor");
  EXPECT_EQ(gov.status, Status::kWarn);
  EXPECT_EQ(gov.observed, "powersave on 4 CPUs");
  EXPECT_NE(gov.fix.find("cpupower frequency-set -g performance"), std::string::npos);
  EXPECT_EQ(r.check("mem.thp").status, Status::kWarn);
  EXPECT_EQ(r.check("mem.thp").observed, "never");
  EXPECT_EQ(r.check("selinux.mode").observed, "enforcing");
  EXPECT_EQ(r.check("selinux.mode").status, Status::kPass);
  const Check& numa = r.check("numa.balancing");
  EXPECT_EQ(numa.status, Status::kWarn);
  EXPECT_NE(numa.fix.find("kernel.numa_balancing = 0"), std::string::npos);
  EXPECT_EQ(status_from_checks(r.result), Status::kWarn);
}

TEST(LimitsProbe, MixedGovernorsSmallShmAndPermissive) {
  FakeSystem sys;
  const ProbeRun r = run_probe(fixture("mixed"), sys);
  EXPECT_EQ(r.check("cpu.governor").status, Status::kWarn);
  EXPECT_EQ(r.check("cpu.governor").observed, "ondemand on 1 CPUs, performance on 1 CPUs");
  EXPECT_EQ(r.check("limits.shmmax").status, Status::kWarn);
  EXPECT_EQ(r.check("limits.shmmax").finding, "limits.shm");
  EXPECT_EQ(r.check("limits.shmall").status, Status::kWarn);
  EXPECT_EQ(r.check("selinux.mode").observed, "permissive");
  // One NUMA node: balancing on is harmless.
  EXPECT_EQ(r.check("numa.balancing").status, Status::kPass);
  EXPECT_EQ(r.check("mem.thp").observed, "always");
}

TEST(LimitsProbe, UnreadableItemsAreSkippedWithReason) {
  FakeSystem sys;
  sys.rlimits.clear();
  sys.shm.reset();
  const ProbeRun r = run_probe(fixture("empty"), sys);
  for (const char* id : {"limits.shmmax", "limits.shmall", "limits.max_map_count",
                         "limits.somaxconn", "limits.netdev_max_backlog", "cpu.governor", "mem.thp",
                         "numa.balancing", "limits.memlock.soft", "limits.nofile.soft",
                         "limits.nproc.soft"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(r.check(id).status, Status::kSkip);
    EXPECT_FALSE(r.check(id).detail.empty());
  }
  EXPECT_NE(r.check("limits.shmmax").detail.find("No such file"), std::string::npos);
  EXPECT_EQ(r.check("limits.dev_shm.size").status, Status::kSkip);
  EXPECT_EQ(r.check("selinux.mode").observed, "disabled");
  // Fixture roots never trigger active verification.
  EXPECT_EQ(sys.active_calls, 0);
}

TEST(LimitsProbe, MissingDevShmOnTheLiveSystemFails) {
  FakeSystem sys;
  sys.shm.reset();
  const ProbeRun r = run_probe("/", sys);
  EXPECT_EQ(r.check("limits.dev_shm.size").status, Status::kFail);
  EXPECT_EQ(r.check("limits.dev_shm.size").observed, "missing");
}

TEST(LimitsProbe, DevShmContainerDefaultFails) {
  FakeSystem sys;
  sys.shm = FsSpace{64 * kMiB, 64 * kMiB};
  const ProbeRun r = run_probe(fixture("tuned"), sys);
  const Check& c = r.check("limits.dev_shm.size");
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_EQ(c.observed, "64 MiB");
  EXPECT_NE(c.fix.find("--shm-size=32g"), std::string::npos);
  EXPECT_EQ(c.finding, "limits.shm");
}

TEST(LimitsProbe, DevShmSmallButUsableWarns) {
  FakeSystem sys;
  sys.shm = FsSpace{2 * kGiB, 2 * kGiB};
  EXPECT_EQ(run_probe(fixture("tuned"), sys).check("limits.dev_shm.size").status, Status::kWarn);
  sys.shm = FsSpace{64 * kGiB, 100 * kMiB};
  EXPECT_EQ(run_probe(fixture("tuned"), sys).check("limits.dev_shm.free").status, Status::kWarn);
}

TEST(LimitsProbe, AFullRootOrTmpFilesystemIsStorageFullAndOneFilesystemIsOneCheck) {
  FakeSystem sys;
  sys.root_fs = FsSpace{100 * kGiB, 512 * kMiB, 2049, false};
  sys.tmp_fs = FsSpace{100 * kGiB, 512 * kMiB, 2049, false};  // /tmp on the root filesystem
  ProbeRun r = run_probe(fixture("tuned"), sys);
  const Check& root = r.check("disk.root.free");
  EXPECT_EQ(root.status, Status::kFail);
  EXPECT_EQ(root.finding, "storage.full");
  EXPECT_EQ(root.observed, "512 MiB free of 100 GiB");
  EXPECT_NE(root.detail.find("99% used"), std::string::npos) << root.detail;
  EXPECT_NE(root.fix.find("du -xh"), std::string::npos);
  EXPECT_THROW(r.check("disk.tmp.free"), std::runtime_error) << "the same filesystem is checked once";
  EXPECT_EQ(r.result.environment.count("disk.root.free"), 0u) << "free space is state, not a setting";
  // A separate /tmp with 5 GiB left warns; the root with room passes.
  sys.root_fs = FsSpace{100 * kGiB, 60 * kGiB, 2049, false};
  sys.tmp_fs = FsSpace{8 * kGiB, 5 * kGiB, 31, false};
  r = run_probe(fixture("tuned"), sys);
  EXPECT_EQ(r.check("disk.root.free").status, Status::kPass);
  EXPECT_TRUE(r.check("disk.root.free").fix.empty());
  EXPECT_EQ(r.check("disk.tmp.free").status, Status::kWarn);
  // A read-only root (an immutable OS image) is full by design: not judged.
  sys.root_fs = FsSpace{2 * kGiB, 0, 2049, true};
  EXPECT_EQ(run_probe(fixture("tuned"), sys).check("disk.root.free").status, Status::kSkip);
  // No answer at all is a skip with the reason, never a pass.
  sys.root_fs.reset();
  sys.shm.reset();
  sys.tmp_fs.reset();
  EXPECT_EQ(run_probe(fixture("tuned"), sys).check("disk.root.free").status, Status::kSkip);
}

TEST(LimitsProbe, EveryWritableLocalDataVolumeIsCheckedForFreeSpaceOnce) {
  const std::string mounts =
      "/dev/nvme0n1p1 / ext4 rw,relatime 0 0\n"
      "/dev/nvme1n1 /opt/dlami/nvme ext4 rw,noatime 0 0\n"
      "198.18.0.10@tcp:/abcd /fsx lustre rw,flock 0 0\n"
      "/dev/nvme2n1 /datasets xfs ro,relatime 0 0\n"
      "/dev/nvme0n1p1 /data ext4 rw,relatime 0 0\n"
      "overlay /var/lib/docker/overlay2/abc/merged overlay rw 0 0\n"
      "tmpfs /run/user/1000 tmpfs rw 0 0\n"
      "s3fs /mnt/s3 fuse.s3fs rw 0 0\n"
      "/dev/nvme0n1p15 /boot/efi vfat rw 0 0\n";
  FakeSystem sys;
  sys.root_fs = FsSpace{100 * kGiB, 60 * kGiB, 2049, false};
  sys.tmp_fs = sys.root_fs;
  sys.mount_fs["/opt/dlami/nvme"] = FsSpace{3500 * kGiB, 5 * kGiB, 66305, false};
  sys.mount_fs["/fsx"] = FsSpace{1200 * kGiB, 512 * kMiB, 51, false};  // full: checkpoints fail there
  sys.mount_fs["/data"] = FsSpace{100 * kGiB, 60 * kGiB, 2049, false};  // the root filesystem again
  ProbeRun r = run_with_mounts(mounts, sys);
  EXPECT_EQ(r.check("disk.root.free").status, Status::kPass);
  const Check& nvme = r.check("disk.mount.opt-dlami-nvme.free");
  EXPECT_EQ(nvme.status, Status::kWarn);
  EXPECT_EQ(nvme.finding, "storage.full");
  EXPECT_NE(nvme.fix.find("du -xh --max-depth=2 /opt/dlami/nvme"), std::string::npos) << nvme.fix;
  std::vector<std::string> disks;
  for (const auto& c : r.result.checks)
    if (c.id.rfind("disk.", 0) == 0) disks.push_back(c.id);
  // Read-only, container layers, memory, FUSE object stores and /boot are not judged; /data is the root
  // again; Lustre is a network filesystem, asked with a time limit (its server may not answer).
  EXPECT_EQ(disks, (std::vector<std::string>{"disk.root.free", "disk.mount.opt-dlami-nvme.free",
                                             "disk.mount.fsx.free"}));
  const Check& fsx = r.check("disk.mount.fsx.free");
  EXPECT_EQ(fsx.status, Status::kFail);
  EXPECT_EQ(fsx.finding, "storage.full");
  EXPECT_NE(fsx.detail.find("/fsx (lustre from 198.18.0.10@tcp:/abcd) is 99% used"), std::string::npos) << fsx.detail;
  EXPECT_NE(fsx.fix.find("aws fsx update-file-system"), std::string::npos) << fsx.fix;
  EXPECT_EQ(sys.limits, (std::vector<int>{kNetFsAnswerMs}));
}

// A network volume whose server does not answer costs the probe its time limit, not a hang, and is a
// finding of its own; once the time for network volumes is spent, the rest are not asked.
TEST(LimitsProbe, NetworkVolumesAreAskedWithATimeLimitAndAHungServerIsNamed) {
  FakeSystem sys;
  sys.root_fs = FsSpace{100 * kGiB, 60 * kGiB, 2049, false};
  sys.mount_fs["/home"] = FsSpace{4000 * kGiB, 900 * kGiB, 71, false};
  sys.mount_fs["/projects"] = FsSpace{4000 * kGiB, 900 * kGiB, 74, false};
  sys.hung = {"/ckpt", "/scratch"};
  const ProbeRun r = run_with_mounts(
      "/dev/nvme0n1p1 / ext4 rw,relatime 0 0\n"
      "198.18.0.20:/export/home /home nfs4 rw,vers=4.1,hard 0 0\n"
      "198.18.0.21:/ckpt /ckpt nfs rw,hard 0 0\n"
      "198.18.0.22:/scratch /scratch nfs rw,hard 0 0\n"
      "198.18.0.23:/ro /reference nfs ro 0 0\n"
      "198.18.0.24:/projects /projects nfs rw,hard 0 0\n",
      sys);
  EXPECT_EQ(r.check("disk.mount.home.free").status, Status::kPass);
  const Check& ckpt = r.check("disk.mount.ckpt.free");
  EXPECT_EQ(ckpt.status, Status::kWarn);
  EXPECT_EQ(ckpt.finding, "storage.slow");
  EXPECT_EQ(ckpt.observed, "no answer in 2 s");
  EXPECT_NE(ckpt.detail.find("/ckpt (nfs from 198.18.0.21:/ckpt) did not answer statfs within 2 s"),
            std::string::npos)
      << ckpt.detail;
  EXPECT_NE(ckpt.fix.find("umount -l /ckpt"), std::string::npos) << ckpt.fix;
  EXPECT_EQ(r.check("disk.mount.scratch.free").status, Status::kWarn);
  EXPECT_THROW(r.check("disk.mount.reference.free"), std::runtime_error);  // read-only: nothing writes there
  // Two servers that did not answer spent the time for network volumes: the last one is not asked.
  const Check& projects = r.check("disk.mount.projects.free");
  EXPECT_EQ(projects.status, Status::kSkip);
  EXPECT_NE(projects.detail.find("was not asked"), std::string::npos) << projects.detail;
  ASSERT_EQ(sys.limits.size(), 3u);
  EXPECT_EQ(sys.limits[0], kNetFsAnswerMs);
  EXPECT_LE(sys.limits[2], kNetFsBudgetMs - kNetFsAnswerMs);
}

TEST(LimitsProbe, MemlockAndNofileBelowRecommendation) {
  FakeSystem sys;
  sys.rlimits[RLIMIT_MEMLOCK] = {64 * 1024, 64 * 1024};
  sys.rlimits[RLIMIT_NOFILE] = {1024, 4096};
  sys.rlimits[RLIMIT_NPROC] = {4096, 4096};
  const ProbeRun r = run_probe(fixture("tuned"), sys, 64LL << 30, /*active=*/false);
  EXPECT_EQ(r.check("limits.memlock.soft").status, Status::kWarn);
  EXPECT_EQ(r.check("limits.memlock.soft").observed, "64 KiB");
  EXPECT_NE(r.check("limits.memlock.soft").fix.find("* soft memlock unlimited"), std::string::npos);
  EXPECT_EQ(r.check("limits.nofile.soft").observed, "1024");
  EXPECT_EQ(r.check("limits.nofile.soft").status, Status::kWarn);
  EXPECT_NE(r.check("limits.nofile.soft").fix.find("LimitNOFILE=65535"), std::string::npos);
  EXPECT_EQ(r.check("limits.nofile.hard").observed, "4096");
  EXPECT_EQ(r.check("limits.nproc.soft").status, Status::kWarn);
  EXPECT_EQ(r.check("limits.nproc.soft").finding, "limits.nproc");
}

TEST(LimitsProbe, ActiveContradictionsFail) {
  // Live root so the active checks run (they go to the fake, never the kernel).
  FakeSystem sys;
  sys.mlock_result = {false, 0, "ENOMEM (Cannot allocate memory)"};
  sys.open_result = {false, 1000, "EMFILE (Too many open files)"};
  sys.posix_shm_result = {false, 0, "posix_fallocate: ENOSPC (No space left on device)"};
  sys.sysv_shm_result = {false, 0, "shmget: EINVAL (Invalid argument)"};
  const ProbeRun r = run_probe("/", sys);
  EXPECT_EQ(r.check("limits.memlock.soft").status, Status::kFail);
  EXPECT_NE(r.check("limits.memlock.soft").detail.find("contradiction"), std::string::npos);
  EXPECT_EQ(r.check("limits.nofile.soft").status, Status::kFail);
  EXPECT_NE(r.check("limits.nofile.soft").detail.find("EMFILE"), std::string::npos);
  EXPECT_EQ(r.check("limits.dev_shm.free").status, Status::kFail);
  EXPECT_NE(r.check("limits.dev_shm.free").detail.find("cgroup"), std::string::npos);
}

TEST(LimitsProbe, ActiveVerificationConfirms) {
  FakeSystem sys;
  const ProbeRun r = run_probe("/", sys);
  EXPECT_EQ(r.check("limits.memlock.soft").detail, "verified: locked 16 MiB");
  EXPECT_EQ(r.check("limits.nofile.soft").detail, "verified: opened 8192 descriptors");
  EXPECT_NE(r.check("limits.dev_shm.free").detail.find("verified"), std::string::npos);
}

TEST(LimitsProbe, TimedActiveChecksCarryTheSpreadOfTheirRepeats) {
  FakeSystem sys;
  sys.posix_shm_result.seconds = 0.010;
  sys.mlock_result.seconds = 0.020;
  const ProbeRun r = run_probe("/", sys);
  EXPECT_TRUE(descriptor_problems(r.result).empty());
  std::map<std::string, const Metric*> by_name;
  for (const auto& m : r.result.metrics) by_name[m.name] = &m;
  ASSERT_TRUE(by_name.count("dev_shm_fill") && by_name.count("mlock_rate"));
  EXPECT_EQ(by_name["dev_shm_fill"]->stats->n, 7u);
  EXPECT_NEAR(by_name["dev_shm_fill"]->value, 32.0 * 1048576 / 0.010 / 1e9, 1e-9);
  EXPECT_EQ(by_name["mlock_rate"]->unit, "GB/s");
  // The node's settings are the environment compare shows; free space is state, not a setting.
  EXPECT_EQ(r.result.environment.count("limits.dev_shm.free"), 0u);
  EXPECT_EQ(r.result.environment.count("limits.nofile.soft"), 1u);
  // Untimed verifications (a fake without seconds) add no metric.
  FakeSystem untimed;
  EXPECT_TRUE(run_probe("/", untimed).result.metrics.empty());
}

TEST(LimitsProbe, CapIpcLockExplainsLockingBeyondTheLimit) {
  FakeSystem sys;
  sys.rlimits[RLIMIT_MEMLOCK] = {64 * 1024, 64 * 1024};
  sys.cap_ipc_lock = true;
  const ProbeRun r = run_probe("/", sys);
  const Check& c = r.check("limits.memlock.soft");
  EXPECT_EQ(c.status, Status::kWarn);
  EXPECT_NE(c.detail.find("CAP_IPC_LOCK"), std::string::npos);
}

TEST(LimitsFormat, BytesAndCounts) {
  EXPECT_EQ(format_bytes(64 * 1024), "64 KiB");
  EXPECT_EQ(format_bytes(kUnlimited), "unlimited");
  EXPECT_EQ(format_bytes(1536 * kMiB), "1.5 GiB");
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_count(65535), "65535");
  EXPECT_EQ(format_count(kUnlimited), "unlimited");
}

}  // namespace
}  // namespace nodeprobe::limits
