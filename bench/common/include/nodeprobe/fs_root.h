#pragma once
/// Reads /proc, /sys and /etc under a configurable root, so unit tests run
/// the same code over fixture trees (tests/fixtures/...).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nodeprobe {

class FsRoot {
 public:
  /// root "/" (or "") reads the live system; anything else is prefixed to every path.
  explicit FsRoot(std::string root = "/");

  /// Whole file, or nullopt when it cannot be read (missing, EACCES, ...).
  std::optional<std::string> read(const std::string& path) const;
  /// First line without surrounding white space.
  std::optional<std::string> read_line(const std::string& path) const;
  /// First token parsed as a signed integer.
  std::optional<long long> read_int(const std::string& path) const;
  bool exists(const std::string& path) const;
  /// Entry names of a directory (no "." or ".."), sorted; empty when unreadable.
  std::vector<std::string> list_dir(const std::string& path) const;
  /// The real path of `path` under the root.
  std::string resolve(const std::string& path) const;
  bool is_live() const { return root_.empty(); }
  const std::string& root() const { return root_; }

  /// Why the last read of `path` failed ("No such file or directory"), for skip reasons.
  static std::string why_unreadable(const std::string& real_path);

 private:
  std::string root_;  // empty for the live system
};

/// Size and room of the filesystem holding a path (statvfs(3)).
struct FsSpace {
  std::uint64_t size_bytes = 0, free_bytes = 0;  ///< free: what an unprivileged writer may use (f_bavail)
  std::uint64_t device = 0;                      ///< st_dev of the path (0: unknown): two paths on one filesystem
  bool read_only = false;                        ///< mounted read-only (ST_RDONLY): nothing writes there
  std::uint64_t block_size = 0;                  ///< f_frsize: the unit files are allocated in
  std::uint64_t inodes = 0, free_inodes = 0;     ///< f_files, f_favail (inodes = 0: the filesystem has no fixed count)
};
/// The filesystem facts of `path` (a live path, not under an FsRoot); nullopt
/// with errno set when statvfs fails. The one statvfs wrapper: the limits
/// probe's free-space checks, accept's data-directory choice and the IO
/// probe's space check all read it here.
std::optional<FsSpace> fs_space(const std::string& path);

/// fs_space asked from a child process and waited for at most `limit`: a
/// network filesystem whose server does not answer blocks statfs, and here
/// that costs the limit instead of the caller. The child makes no other call
/// (statfs, stat, write, _exit: safe after fork in a threaded process) and
/// closes every descriptor but its reply pipe. One still blocked at the limit
/// is sent SIGKILL and not waited for: it ends when the kernel lets it (a
/// FUSE or hard NFS wait may hold it until the server goes) and stays a
/// zombie until this process exits, so call this from short-lived probes.
struct BoundedFsSpace {
  std::optional<FsSpace> space;  ///< the answer, when one came in time
  bool timed_out = false;        ///< no answer within the limit
  int error = 0;                 ///< errno of a failed statfs, fork or pipe
};
BoundedFsSpace fs_space_within(const std::string& path, int limit_ms);

/// What the child of fs_space_within does, replaceable in tests (a query
/// that never returns): fills `out` the way statfs(2) would and returns 0,
/// or returns an errno. Runs after fork: async-signal-safe calls only.
struct RawFsAnswer {
  unsigned long long frsize = 0, blocks = 0, bavail = 0, files = 0, ffree = 0, flags = 0, device = 0;
  int have_device = 0;
};
using ChildFsQuery = int (*)(const char* path, RawFsAnswer* out);
BoundedFsSpace fs_space_within(const std::string& path, int limit_ms, ChildFsQuery query);

/// One line of /proc/self/mounts.
struct MountEntry {
  std::string device, dir, type, options;
  bool read_only() const;  ///< "ro" among the options
};

/// Parses /proc/self/mounts text (octal escapes such as \040 decoded).
std::vector<MountEntry> parse_mounts(const std::string& text);

/// A local block-device filesystem (ext2/3/4, xfs, btrfs, f2fs, zfs, jfs):
/// statvfs answers from the kernel. Network filesystems (NFS, Lustre, ...)
/// are not: a hung server blocks statvfs, so probes that must not hang
/// leave them out.
bool local_block_fs(const std::string& type);

/// A network or cluster filesystem (NFS, Lustre, BeeGFS, GPFS, CephFS,
/// GlusterFS, SMB, WekaFS): its statfs asks a server, which may not answer.
bool network_fs(const std::string& type);

/// A system place no job's data lives in: /boot, /efi, /etc (Docker
/// bind-mounts files there), /usr, /proc, /sys, /dev, /run (/run/netns is a
/// bind mount of the root volume in containers), /var/run, /snap, and
/// anything under them.
bool system_mount_dir(const std::string& dir);

/// A volume a job's data may live on: a writable local block-device
/// filesystem mounted outside the root and the system places. Accept's
/// data-directory choice and the limits probe's free-space checks pick
/// their volumes with it.
bool data_volume(const MountEntry& m);

/// A network volume a job's data may live on (FSx for Lustre at /fsx, EFS
/// or a home directory over NFS): writable, outside the root and the system
/// places. Ask it only through fs_space_within.
bool network_data_volume(const MountEntry& m);

/// Trims ASCII white space on both ends.
std::string trim(const std::string& s);
/// Splits on any run of white space.
std::vector<std::string> split_ws(const std::string& s);
/// The active choice of a sysfs selector: "always [madvise] never" -> "madvise";
/// the whole (trimmed) text when nothing is bracketed.
std::string selected_word(const std::string& s);

}  // namespace nodeprobe
