#pragma once
/// nodeprobe-limits: OS limits and tunables that break or slow GPU training,
/// each observed vs recommended (../shared/FIELD-NOTES.md) with the exact fix,
/// verified actively where that is cheap and safe.

#include <cstdint>
#include <string>

#include "limits_system.h"
#include "nodeprobe/probe.h"

namespace nodeprobe::limits {

/// Recommended values (FIELD-NOTES.md "Tuning knobs").
inline constexpr std::uint64_t kShmmax = 137438953472ULL;
inline constexpr std::uint64_t kShmall = 33554432ULL;
inline constexpr std::uint64_t kMaxMapCount = 262144;
inline constexpr std::uint64_t kSomaxconn = 65535;
inline constexpr std::uint64_t kNetdevBacklog = 65535;
inline constexpr std::uint64_t kNofile = 65535;
inline constexpr std::uint64_t kNproc = 65535;
/// /dev/shm below this fails: NCCL's SHM transport and DataLoader workers run out.
inline constexpr std::uint64_t kDevShmMin = 1ULL << 30;
/// /dev/shm free space below this is a warning (stale segments of dead jobs).
inline constexpr std::uint64_t kDevShmFreeMin = 1ULL << 30;
/// Free space on the root filesystem and /tmp: below the warning level one
/// container image layer or one checkpoint of a multi-billion-parameter model
/// no longer fits; below the failure level pip, logs and caches fail too.
inline constexpr std::uint64_t kDiskFreeWarn = 10ULL << 30;
inline constexpr std::uint64_t kDiskFreeFail = 1ULL << 30;
/// A network volume (FSx for Lustre, EFS, NFS) is asked with a time limit,
/// each at most kNetFsAnswerMs and all of them together kNetFsBudgetMs: the
/// probe's budget in accept's quick profile is 10 s. A server that does not
/// answer within the limit is a finding of its own (storage.slow).
inline constexpr int kNetFsAnswerMs = 2000;
inline constexpr int kNetFsBudgetMs = 4000;

struct LimitsOptions {
  bool active = true;                       ///< run the active verifications
  std::uint64_t mlock_bytes = 16ULL << 20;  ///< memory to lock
  std::uint64_t shm_bytes = 32ULL << 20;    ///< shm segment to create
  std::uint64_t open_files = 8192;          ///< descriptors to open at most
};

class LimitsProbe final : public Probe {
 public:
  LimitsProbe(LimitsSystem& sys, LimitsOptions opt) : sys_(sys), opt_(opt) {}
  std::string key() const override { return "limits"; }
  std::string description() const override {
    return "shm, memlock, nofile, nproc, max_map_count, somaxconn, backlog, governor, THP, "
           "SELinux, NUMA balancing: observed vs recommended, with fixes";
  }
  void run(ProbeContext& ctx, ProbeResult& r) override;

 private:
  void check_sysctls(ProbeContext& ctx, ProbeResult& r);
  void check_dev_shm(ProbeContext& ctx, ProbeResult& r);
  void check_disk_free(ProbeContext& ctx, ProbeResult& r);
  void check_memlock(ProbeContext& ctx, ProbeResult& r);
  void check_nofile(ProbeContext& ctx, ProbeResult& r);
  void check_nproc(ProbeContext& ctx, ProbeResult& r);
  void check_governor(ProbeContext& ctx, ProbeResult& r);
  void check_thp(ProbeContext& ctx, ProbeResult& r);
  void check_selinux(ProbeContext& ctx, ProbeResult& r);
  void check_numa_balancing(ProbeContext& ctx, ProbeResult& r);

  LimitsSystem& sys_;
  LimitsOptions opt_;
};

/// format_size() (nodeprobe/size.h), or "unlimited" for RLIM_INFINITY.
std::string format_bytes(std::uint64_t bytes);
/// "65535", "unlimited".
std::string format_count(std::uint64_t n);

}  // namespace nodeprobe::limits
