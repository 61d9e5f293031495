#pragma once
/// Minimal POSIX ustar archives, gzip-compressed with zlib: the writer makes
/// support bundles, the reader opens them with bounds on every size and a
/// check of every name (no absolute paths, no "..", no links), so a hostile
/// or truncated bundle ends with a one-line error, never a crash.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "byte_source.h"
#include "nodeprobe/atomic_file.h"

namespace nodeprobe::diag {

/// Writes FILE.tar.gz through the safe file writer (nodeprobe/atomic_file.h:
/// an exclusive temporary renamed by finish(), never through a link).
class TarGzWriter {
 public:
  /// Throws std::runtime_error when the file cannot be created.
  explicit TarGzWriter(const std::string& path);
  ~TarGzWriter();
  TarGzWriter(const TarGzWriter&) = delete;
  TarGzWriter& operator=(const TarGzWriter&) = delete;

  void add_directory(const std::string& name);
  void add_bytes(const std::string& name, std::string_view data);
  /// Adds the regular file at `src_path`; throws std::runtime_error on read errors.
  void add_file(const std::string& name, const std::string& src_path);
  /// Writes the end-of-archive blocks and renames into place.
  void finish();

 private:
  void write(const void* data, std::size_t n);
  void header(const std::string& name, std::uint64_t size, char type);

  std::string path_;
  std::unique_ptr<AtomicFile> out_;  // exclusive temporary, renamed by finish()
  void* gz_ = nullptr;  // gzFile
  bool finished_ = false;
  double mtime_ = 0;
};

struct TarEntry {
  std::string name;
  std::uint64_t size = 0;
  char type = '0';  ///< '0' file, '5' directory
};

/// Reads tar entries from a byte source (gzip handled by the source).
class TarReader {
 public:
  explicit TarReader(ByteSource& src) : src_(src) {}
  /// The next file or directory; false at the end of the archive or on
  /// error. At the end it reads the source to its end, so a compressed
  /// archive's trailer (CRC, length) is checked: a bad one is an error().
  bool next(TarEntry* e);
  /// Reads up to `n` bytes of the current entry.
  std::size_t read(char* dst, std::size_t n);
  /// "" or why reading stopped (bad header, truncated archive, source error).
  std::string error() const;

 private:
  bool read_exact(char* dst, std::size_t n);
  bool skip(std::uint64_t n);

  ByteSource& src_;
  std::uint64_t remaining_ = 0, padding_ = 0;
  std::string error_;
  std::string long_name_;
  int entries_ = 0;
};

/// A safe relative path (letters, digits, . _ - + @ components, no "..",
/// at most 8 levels and 200 bytes), or "" when `name` is not one.
std::string safe_relative_path(std::string_view name);

/// Limits applied while extracting a bundle.
struct ExtractLimits {
  std::uint64_t max_file = 1ULL << 30;   ///< bytes per file
  std::uint64_t max_total = 4ULL << 30;  ///< bytes in all
  int max_entries = 10000;
  InputLimits input = input_limits(InputKind::kArchive);  ///< the archive file itself
};

/// Extracts the regular files of the archive at `archive` into `dir` (which
/// must exist). Returns "" or a one-line reason; files extracted before an
/// error stay in `dir`.
std::string extract_archive(const std::string& archive, const std::string& dir,
                            const ExtractLimits& limits = {});

}  // namespace nodeprobe::diag
