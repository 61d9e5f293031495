#pragma once
/// A prepared dataset opened for reading, plus what a directory holds
/// (used by prepare and clean to refuse foreign directories).

#include <cstdint>
#include <string>
#include <vector>

#include "io_format.h"

namespace nodeprobe::io {

enum class DirState { kMissing, kNotDir, kEmpty, kOurs, kForeign };

/// What `dir` is: missing, not a directory, empty, ours (has our marker) or
/// foreign (non-empty without our marker). Throws ApiError when unreadable.
DirState dir_state(const std::string& dir);

/// Reads the marker of `dir`; throws DatasetError when absent or not ours.
Marker read_marker(const std::string& dir);

/// An opened, validated dataset. Holds descriptors for the shards (and the
/// directory, for openat on sample files); closes them on destruction.
class Dataset {
 public:
  /// Validates: the directory exists and is ours, the marker says complete,
  /// the index decodes and agrees with the marker, every shard exists with the
  /// size the index records. Throws DatasetError with a one-line reason.
  explicit Dataset(const std::string& dir);
  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  const std::string& dir() const { return dir_; }
  const Marker& marker() const { return marker_; }
  const Index& index() const { return index_; }
  Layout layout() const { return index_.layout; }
  std::uint32_t samples() const { return static_cast<std::uint32_t>(index_.entries.size()); }
  std::uint64_t max_length() const { return max_length_; }
  std::uint64_t total_bytes() const { return total_bytes_; }
  int dir_fd() const { return dir_fd_; }

  /// Shard descriptor, buffered or O_DIRECT. The O_DIRECT set is opened by
  /// open_direct() (before workers start); throws ApiError when the
  /// filesystem refuses O_DIRECT.
  int shard_fd(std::uint32_t k, bool direct) const { return direct ? direct_fds_[k] : shard_fds_[k]; }
  void open_direct();

  /// Path of sample `id` relative to dir() (files) or of its shard (shards), for messages.
  std::string where(std::uint32_t id) const;

 private:
  std::string dir_;
  Marker marker_;
  Index index_;
  int dir_fd_ = -1;
  std::vector<int> shard_fds_, direct_fds_;
  std::uint64_t max_length_ = 0, total_bytes_ = 0;
};

}  // namespace nodeprobe::io
