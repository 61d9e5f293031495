#pragma once
/// Page-cache state of a dataset: evict (posix_fadvise DONTNEED; drop_caches
/// only as root and only when asked), warm (read everything once), and
/// observe (mincore on a sample of files), plus which mount holds the data.

#include <cstdint>
#include <string>

#include "dataset.h"
#include "nodeprobe/fs_root.h"

namespace nodeprobe::io {

enum class CacheMode { kWarm, kCold, kAsIs };
const char* to_string(CacheMode m);

/// posix_fadvise(DONTNEED) on every file of the dataset.
void evict(const Dataset& ds);
/// echo 1 > /proc/sys/vm/drop_caches (after sync). Throws InputError unless root.
void drop_caches();
/// Reads every file once (sequentially, 1 MiB at a time), so reads hit the page cache.
void prewarm(const Dataset& ds);
/// Share of the dataset's pages in the page cache, from mincore() on up to
/// `max_files` files spread over the dataset (all shards up to that many).
double resident_fraction(const Dataset& ds, std::size_t max_files = 64);

struct MountInfo {
  std::string mount_point, fs_type, source, options;  ///< options: per-mount + superblock
};
/// The mount holding `path` (longest mount-point prefix of its real path),
/// from <fs>/proc/self/mountinfo. Empty fields when it cannot be told.
MountInfo mount_of(const FsRoot& fs, const std::string& path);
/// Parses mountinfo text; `real_path` must be absolute and resolved.
MountInfo mount_from_text(const std::string& mountinfo, const std::string& real_path);
/// tmpfs, ramfs and friends: the page cache is the storage, nothing to evict.
bool memory_backed(const std::string& fs_type);

}  // namespace nodeprobe::io
