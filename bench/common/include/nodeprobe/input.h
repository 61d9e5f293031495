#pragma once
/// Bounded, typed input: the one way every command reads a file it was given
/// (reports, expectations, playbook data, bundle manifests, logs, archives).
///
/// - Typed: a named path must be a regular file (a FIFO, a device such as
///   /dev/zero, a socket or a directory is refused with the reason); "-"
///   reads stdin, which may be a regular file or a pipe, never a terminal or
///   a device. Opening never blocks (a FIFO without a writer is refused at
///   once, not waited on).
/// - Bounded: each kind of input has a size cap (--max-input-size overrides
///   it); reading past it stops with an InputError naming the cap.
/// - Deadlines: a pipe (or a pseudo file such as /proc/kmsg) that sends
///   nothing for read_timeout_s ends the read with an InputError
///   (--read-timeout overrides it).
/// - Contained: open_beneath() opens a path inside a directory without
///   following any symbolic link (bundles from other machines).
///
/// Every error is an InputError whose what() is one line naming the input.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nodeprobe/error.h"

namespace nodeprobe {

/// What an input is; decides its default size cap.
enum class InputKind {
  kReport,    ///< a nodeprobe report (JSON)
  kConfig,    ///< expectations, playbook or rules data (JSON)
  kManifest,  ///< a bundle's manifest.json
  kLog,       ///< a log (decompressed bytes when gzip)
  kArchive,   ///< a support bundle (.tar.gz)
};

/// Per-command overrides (--max-input-size, --read-timeout); 0 keeps the default.
struct InputOverrides {
  std::uint64_t max_bytes = 0;
  double read_timeout_s = 0;
};

struct InputLimits {
  std::uint64_t max_bytes = 0;   ///< bytes read at most (decompressed for logs)
  double read_timeout_s = 30;    ///< longest wait for data from a pipe
  const char* kind = "inputs";   ///< for messages ("reports", "logs"...)
};

/// Default cap of each kind, in bytes (reports 64 MiB, config 16 MiB,
/// manifests 16 MiB, logs 8 GiB, archives 8 GiB).
std::uint64_t default_input_cap(InputKind kind);
/// The limits of `kind` with the command's overrides applied.
InputLimits input_limits(InputKind kind, const InputOverrides& o = {});

/// An open, typed input. Move-only; closes its descriptor.
class InputFile {
 public:
  /// Opens `path` ("-": stdin) for reading. Throws InputError when it cannot
  /// be opened or is not a regular file (stdin: not a file or pipe).
  static InputFile open(const std::string& path, const InputLimits& limits);
  /// Opens `rel` (a relative path without "..") inside the directory `dir_fd`
  /// without following a symbolic link in any component, and refuses files
  /// with more than one hard link. `shown` names it in messages.
  static InputFile open_beneath(int dir_fd, const std::string& rel, const InputLimits& limits,
                                const std::string& shown);

  InputFile(InputFile&& o) noexcept;
  InputFile& operator=(InputFile&& o) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  /// Up to `n` bytes into dst; 0 at the end. Throws InputError on a read
  /// error, past the size cap, or when a pipe sends nothing for the read timeout.
  std::size_t read(char* dst, std::size_t n);
  /// Whole rest of the input (bounded by the cap).
  std::string read_all();
  /// Continues reading at byte `offset` of a regular file (the tail of a
  /// log); bytes skipped do not count against the cap. Throws InputError
  /// for a pipe.
  void seek(std::uint64_t offset);

  const std::string& name() const { return name_; }
  std::uint64_t bytes_read() const { return read_; }
  std::uint64_t max_bytes() const { return limits_.max_bytes; }
  /// Size of a regular file when opened (0 for pipes).
  std::uint64_t size() const { return size_; }
  bool is_pipe() const { return pipe_; }

 private:
  InputFile(int fd, bool own, std::string name, const InputLimits& limits);
  void check_type();
  int fd_ = -1;
  bool own_ = false;
  bool pipe_ = false;
  bool wait_ = false;  // reads wait with the read deadline (pipes, size-0 pseudo files)
  std::string name_;
  InputLimits limits_;
  std::uint64_t read_ = 0, size_ = 0;
};

/// The whole input `path` ("-": stdin) as text, typed and bounded.
std::string read_input(const std::string& path, const InputLimits& limits);

/// A directory opened for contained reading (O_DIRECTORY, closes on destruction).
class DirHandle {
 public:
  /// Opens `path` as a directory (following a symlink in `path` itself: the
  /// user named it). Throws InputError when it is not a readable directory.
  explicit DirHandle(const std::string& path);
  /// Opens `rel` inside `parent` without following symbolic links.
  DirHandle(const DirHandle& parent, const std::string& rel);
  DirHandle(DirHandle&& o) noexcept : fd_(o.fd_), name_(std::move(o.name_)) { o.fd_ = -1; }
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  ~DirHandle();
  int fd() const { return fd_; }
  const std::string& name() const { return name_; }

 private:
  int fd_ = -1;
  std::string name_;
};

/// One entry found by walk_dir().
struct DirEntryInfo {
  std::string rel;     ///< path relative to the walked directory
  bool regular = false;  ///< a regular file (readable with open_beneath / open)
  std::string reason;  ///< when not regular: why it is not read ("symbolic link loop", ...)
};

/// Walks `dir` recursively (depth <= max_depth, at most max_entries entries),
/// sorted by path. follow_links: a symbolic link to a regular file counts as
/// that file (a link to a directory is not descended, a loop or dangling
/// link comes back with its reason); otherwise every link comes back with
/// the reason "symbolic link (not followed)". Unreadable subdirectories come
/// back with their reason too; the walk never stops at one bad entry.
std::vector<DirEntryInfo> walk_dir(const DirHandle& dir, bool follow_links, int max_depth = 8,
                                   std::size_t max_entries = 100000);

}  // namespace nodeprobe
