#pragma once
/// The seam between the limits probe and the machine: resource limits, file
/// system usage, capabilities and the active verifications. The live
/// implementation calls the kernel; tests substitute a fake.

#include <cstdint>
#include <optional>
#include <string>

#include "nodeprobe/fs_root.h"

namespace nodeprobe::limits {

inline constexpr std::uint64_t kUnlimited = ~std::uint64_t{0};

struct RLimit {
  std::uint64_t soft = 0, hard = 0;  ///< kUnlimited for RLIM_INFINITY
};

/// Outcome of an active verification.
struct Active {
  bool ok = false;
  std::uint64_t achieved = 0;  ///< e.g. descriptors actually opened
  std::string error;           ///< errno name and text when it failed
  double seconds = 0;          ///< how long the verification took (0: not timed)
};

class LimitsSystem {
 public:
  virtual ~LimitsSystem() = default;
  /// RLIMIT_MEMLOCK, RLIMIT_NOFILE, RLIMIT_NPROC...
  virtual std::optional<RLimit> rlimit(int resource) const = 0;
  virtual std::optional<FsSpace> fs_usage(const std::string& path) const = 0;
  /// The same for a network filesystem, waited for at most `limit_ms` (fs_space_within).
  virtual BoundedFsSpace fs_usage_within(const std::string& path, int limit_ms) const = 0;
  /// Descriptors this process has open now.
  virtual std::uint64_t open_descriptors() const = 0;
  /// True when the process may lock memory beyond RLIMIT_MEMLOCK.
  virtual bool has_cap_ipc_lock() const = 0;
  /// Locks `bytes` of anonymous memory, then releases it.
  virtual Active try_mlock(std::uint64_t bytes) = 0;
  /// Opens up to `n` more descriptors, then closes them.
  virtual Active try_open_files(std::uint64_t n) = 0;
  /// Creates a POSIX shm segment of `bytes` (pages really allocated), then removes it.
  virtual Active try_posix_shm(std::uint64_t bytes) = 0;
  /// Creates a SysV shm segment of `bytes` (bounded by kernel.shmmax), then removes it.
  virtual Active try_sysv_shm(std::uint64_t bytes) = 0;
};

/// The live machine.
class LiveSystem final : public LimitsSystem {
 public:
  std::optional<RLimit> rlimit(int resource) const override;
  std::optional<FsSpace> fs_usage(const std::string& path) const override;
  BoundedFsSpace fs_usage_within(const std::string& path, int limit_ms) const override;
  std::uint64_t open_descriptors() const override;
  bool has_cap_ipc_lock() const override;
  Active try_mlock(std::uint64_t bytes) override;
  Active try_open_files(std::uint64_t n) override;
  Active try_posix_shm(std::uint64_t bytes) override;
  Active try_sysv_shm(std::uint64_t bytes) override;
};

}  // namespace nodeprobe::limits
