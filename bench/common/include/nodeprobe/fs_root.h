#pragma once
/// Reads /proc, /sys and /etc under a configurable root, so unit tests run
/// the same code over fixture trees (tests/fixtures/...).

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

/// Trims ASCII white space on both ends.
std::string trim(const std::string& s);
/// Splits on any run of white space.
std::vector<std::string> split_ws(const std::string& s);
/// The active choice of a sysfs selector: "always [madvise] never" -> "madvise";
/// the whole (trimmed) text when nothing is bracketed.
std::string selected_word(const std::string& s);

}  // namespace nodeprobe
