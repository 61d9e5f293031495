#pragma once
/// The one way nodeprobe deletes what it made (IO datasets, temporary
/// directories of accept, collect, diag and the allreduce launcher).
///
/// A tree is removed only when its root holds an ownership marker (a regular
/// file, not a link). The root is opened O_NOFOLLOW|O_DIRECTORY, every level
/// below with openat(O_NOFOLLOW|O_DIRECTORY) relative to its parent's
/// descriptor, and entries are removed with unlinkat relative to their
/// directory's descriptor: a symlink is never crossed (it is removed as a
/// link or left, as the filter says), and a path swapped for a link while
/// removing cannot redirect the deletion elsewhere.

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nodeprobe {

/// The marker of directories nodeprobe creates for itself.
inline constexpr const char* kOwnedMarker = ".nodeprobe-owned";

/// The tree is not ours (no marker): nothing was removed.
class NotOwnedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class EntryKind { kFile, kDir, kLink, kOther };

/// Decides what may go: `rel` is the path below the root ("samples/0001/00000042.bin").
using RemoveFilter = std::function<bool(const std::string& rel, EntryKind kind)>;

struct RemoveOptions {
  std::string marker = kOwnedMarker;  ///< must be a regular file in the root
  RemoveFilter filter;                ///< nullptr: everything (links as links)
  bool remove_root = true;            ///< rmdir the root when it ends empty
};

struct RemoveResult {
  std::uint64_t files = 0, bytes = 0;  ///< non-directories removed, their bytes
  std::vector<std::string> left;       ///< entries kept (the filter said no, or not empty)
  bool root_removed = false;
};

/// Removes the tree at `dir`. Throws NotOwnedError when `dir` has no marker
/// (or is a link), ApiError when it cannot be opened or an entry cannot be
/// removed. The marker goes last, so an interrupted removal stays recognisable.
RemoveResult remove_tree(const std::string& dir, const RemoveOptions& opt = {});

/// Removes the regular files directly in `dir` (a shared directory such as
/// /dev/shm, no marker) whose name `pick` accepts and whose owner is this
/// process's effective user: links, directories and other users' files stay.
/// Entries are checked and removed relative to `dir`'s descriptor. Returns the
/// names removed; throws ApiError when `dir` cannot be opened.
std::vector<std::string> remove_own_files_in(const std::string& dir, const std::function<bool(const std::string&)>& pick);

/// Creates PARENT/PREFIX-XXXXXX (mode 0700, unpredictable name) holding the
/// ownership marker. Throws ApiError.
std::string make_owned_temp_dir(const std::string& parent, const std::string& prefix);

/// $TMPDIR, else /tmp.
std::string temp_parent();

/// A directory made by make_owned_temp_dir, removed by remove_tree on
/// destruction and, through the stop handlers, on an emergency exit.
class OwnedTempDir {
 public:
  OwnedTempDir(const std::string& parent, const std::string& prefix);
  ~OwnedTempDir();
  OwnedTempDir(const OwnedTempDir&) = delete;
  OwnedTempDir& operator=(const OwnedTempDir&) = delete;
  const std::string& path() const { return path_; }
  /// Removes it now; returns "" or why it (or part of it) stayed.
  std::string remove() noexcept;
  /// Forgets it without removing it (a forked child whose parent removes it).
  void release() noexcept;

 private:
  std::string path_;
  int cleanup_id_ = -1;
};

}  // namespace nodeprobe
