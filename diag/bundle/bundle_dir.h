#pragma once
/// A support bundle's directory (one `nodeprobe collect` made and someone
/// extracted, or one nodeprobe extracted itself), read as hostile input:
/// every file is opened beneath the bundle's directory without following a
/// symbolic link in any component (openat, O_NOFOLLOW), must be a regular
/// file with one hard link, and is bounded like any input (nodeprobe/input.h).
/// A link planted in a bundle is refused with its reason, never read.

#include <optional>
#include <string>
#include <vector>

#include "collector.h"
#include "nodeprobe/input.h"

namespace nodeprobe::diag {

class BundleDir {
 public:
  /// Opens `path` (a symlink in `path` itself is followed: the user named
  /// it). The root is `path`, or its one subdirectory (not a link) that holds
  /// manifest.json. Throws InputError when `path` is not a readable directory.
  explicit BundleDir(const std::string& path);

  /// True when the root holds manifest.json (as a regular file).
  bool has_manifest() const { return has_manifest_; }
  /// The parsed manifest (bounded, depth-limited JSON). Throws InputError or
  /// std::runtime_error with a one-line reason.
  Manifest manifest(const InputOverrides& o = {}) const;
  /// Opens `rel` beneath the root: no symbolic link followed, one hard link.
  InputFile open(const std::string& rel, const InputLimits& limits) const;
  /// Every entry under the root, links not followed (for bundles without a manifest).
  std::vector<DirEntryInfo> entries() const;
  /// The root as shown in messages.
  const std::string& root_name() const { return root().name(); }

 private:
  const DirHandle& root() const { return sub_ ? *sub_ : top_; }
  DirHandle top_;
  std::optional<DirHandle> sub_;
  bool has_manifest_ = false;
};

}  // namespace nodeprobe::diag
