#pragma once
/// Writing and removing datasets. prepare checks free space first, refuses
/// directories it did not make, marks the dataset "writing" before the first
/// byte and "complete" after the last one is on disk, and removes its partial
/// output when it fails (ENOSPC, EIO). clean removes only what prepare made.

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "io_format.h"
#include "nodeprobe/clock.h"

namespace nodeprobe::io {

struct PrepareOptions {
  std::string dir;
  std::uint64_t samples = 0;
  std::uint64_t size = 110000;     ///< mean record bytes (ImageNet JPEGs average ~110 kB)
  double spread_pct = 50;          ///< sizes uniform in size x (1 +- spread)
  std::uint32_t shards = 0;        ///< 0: one file per sample; K: K shard files plus the index
  std::uint32_t align = 1;         ///< record alignment in shards (4096 suits O_DIRECT)
  std::uint64_t seed = 1;
  bool overwrite = false;          ///< replace a dataset of ours that is already there
  bool space_check = true;         ///< refuse up front when free space or inodes are short
};

struct PrepareResult {
  Marker marker;
  double seconds = 0;          ///< writing and syncing
  std::vector<double> window_mb_per_s;  ///< per window of samples, each written and synced (1e6 B/s)
  std::uint64_t bytes = 0;     ///< record bytes written
  std::uint64_t need_bytes = 0, free_bytes = 0;  ///< space check inputs
};

/// Writes the dataset. Throws InputError for refusals (foreign directory,
/// not enough space, bad options) and ApiError for IO failures, after
/// removing what it wrote. `cancelled` is polled between samples; when it
/// says so, DeadlineError (after removing what it wrote).
PrepareResult prepare_dataset(const PrepareOptions& opt, Clock& clock, std::ostream& log,
                              const std::function<bool()>& cancelled = {});

/// Bytes and inodes the dataset needs on a filesystem with `block` byte blocks.
struct SpaceNeed {
  std::uint64_t bytes = 0, inodes = 0;
};
SpaceNeed space_needed(const std::vector<std::uint64_t>& lengths, bool files_layout,
                       std::uint32_t shards, std::uint64_t block);

struct CleanResult {
  std::uint64_t files = 0, bytes = 0;
  bool dir_removed = false;
  std::vector<std::string> left;  ///< entries that are not ours, left in place
};

/// Removes a dataset of ours (complete or not). Throws DatasetError when the
/// directory is missing or not ours; nothing is removed then.
CleanResult clean_dataset(const std::string& dir);

}  // namespace nodeprobe::io
