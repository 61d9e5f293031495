#pragma once
/// What accept can see of the hardware without any vendor library: GPUs from
/// the probes' host block or /proc/driver/nvidia/gpus, EFA devices from
/// /sys/class/infiniband, local filesystems for the IO dataset. All read
/// under an FsRoot so tests run them on fixture trees.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nodeprobe/fs_root.h"
#include "nodeprobe/report.h"

namespace nodeprobe::diag {

struct GpuInventory {
  int count = 0;
  std::vector<std::string> models;  ///< one per GPU
  std::string source;               ///< "host.gpus (probe)", "/proc/driver/nvidia/gpus" or "none"
};

/// GPUs as a probe reported them (objects with "name"/"model"), else from the
/// driver's /proc tree (needs the nvidia module loaded).
GpuInventory gpu_inventory(const FsRoot& fs, const Json& host_gpus);

/// True when an NVIDIA GPU is visible (/proc/driver/nvidia/gpus or /dev/nvidia0).
bool nvidia_gpu_present(const FsRoot& fs);

struct EfaInventory {
  int count = 0;
  std::vector<std::string> devices;
  std::string source;
};

/// RDMA devices bound to the "efa" driver (/sys/class/infiniband/*/device/driver).
EfaInventory efa_inventory(const FsRoot& fs);

using nodeprobe::MountEntry;  // nodeprobe/fs_root.h: /proc/self/mounts, parsed once for every reader
using nodeprobe::parse_mounts;

/// Free bytes of a writable directory, or nullopt (not a directory, not writable).
using FreeBytesFn = std::function<std::optional<double>(const std::string& dir)>;

/// Where accept's IO dataset goes, and why there (for the report and the text).
struct DataDirChoice {
  std::string dir;
  std::string why;
};

/// A real data filesystem for accept's IO dataset: the writable local
/// (block-device) filesystem with the most free space, never "/" (the
/// system volume), /boot, /etc (Docker bind-mounts files there), /usr, nor
/// anything under /proc, /sys, /dev or /run (/run/netns is a bind mount of
/// the root volume in containers), never a mount point that is a file, never
/// a memory-backed one (tmpfs, ramfs). Without one: `tmp` when it is on
/// disk, else /var/tmp, else `tmp` with a reason saying it is in memory.
DataDirChoice choose_data_dir(const std::vector<MountEntry>& mounts, const FreeBytesFn& free_bytes,
                              const std::string& tmp = "/tmp");

/// The filesystem type of the mount holding `dir` (longest mount-point prefix), or "".
std::string fs_type_of(const std::vector<MountEntry>& mounts, const std::string& dir);

/// statvfs + access(W_OK) of a directory (nullopt for anything else) on the live system.
std::optional<double> live_free_bytes(const std::string& dir);

}  // namespace nodeprobe::diag
