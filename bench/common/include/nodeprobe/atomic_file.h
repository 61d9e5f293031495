#pragma once
/// The one way nodeprobe writes a file (reports, exporters, bundles, markers,
/// manifests, HTML pages).
///
/// A document is written to a temporary file created exclusively
/// (O_CREAT|O_EXCL|O_NOFOLLOW, an unpredictable name from getrandom) in the
/// destination's directory, fsynced, renamed over the destination with
/// renameat relative to a descriptor of that directory, and the directory is
/// fsynced. A symlink planted at a temporary name makes the create fail (a
/// fresh name is tried), so nothing is ever written through a link.
///
/// A destination that is itself a symlink is refused with a one-line error:
/// following it would write wherever the link points (a planted link makes
/// root overwrite any file), and silently replacing a link the user made is a
/// surprise too. A destination that is a directory is refused as well.

#include <sys/types.h>

#include <string>
#include <string_view>

namespace nodeprobe {

/// A file being written atomically. Throws ApiError when the temporary
/// cannot be created; the destination is untouched until commit().
class AtomicFile {
 public:
  explicit AtomicFile(std::string path, mode_t mode = 0644);
  /// Removes the temporary unless committed.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Descriptor of the temporary (valid until commit). A writer that wants
  /// its own (gzdopen) takes a dup() and closes it before commit().
  int fd() const { return fd_; }
  /// Appends; throws ApiError (disk full, EIO).
  void write(std::string_view data);
  /// fsync, rename over the destination (refused when it became a symlink
  /// or a directory meanwhile), fsync of the directory.
  void commit();
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return tmp_path_; }

 private:
  void abandon() noexcept;

  std::string path_, base_, tmp_name_, tmp_path_;
  int dir_fd_ = -1, fd_ = -1;
  int cleanup_id_ = -1;
  bool committed_ = false;
};

/// Writes `content` to `path` atomically ("-" writes to stdout). Throws
/// ApiError on failure; the destination is then untouched and no temporary
/// file is left behind.
void write_file_atomic(const std::string& path, std::string_view content, mode_t mode = 0644);

/// Creates a new file relative to `dir_fd` (AT_FDCWD: relative to the
/// working directory) that must not exist yet, never through a symlink
/// (O_CREAT|O_EXCL|O_NOFOLLOW), for files inside a directory this run made
/// (datasets, bundle extraction, collections). Returns the descriptor or -1
/// with errno set.
int create_new_file(int dir_fd, const std::string& rel, mode_t mode = 0644) noexcept;

/// Writes all of `size` bytes to `fd`, again after EINTR and short writes;
/// false with errno set on an error. Only write(2): safe after fork.
bool write_all(int fd, const char* data, std::size_t size) noexcept;

/// `bytes` random bytes from the kernel as hex: names another local user
/// cannot predict (temporaries, shared-memory regions). Throws ApiError.
std::string random_hex(std::size_t bytes);

/// "" when `path` can be written by write_file_atomic (its directory exists
/// and is writable; it is not a directory or a symlink), else a one-line
/// reason. "" and "-" are always fine.
std::string check_output_path(const std::string& path);

}  // namespace nodeprobe
