#pragma once
/// A stream of bytes from a file, stdin ("-") or memory, gunzipped on the fly
/// when it starts with the gzip magic (concatenated members too). Errors
/// (open failure, not a regular file, truncated or corrupt gzip, a read
/// error, more than the size cap, no data from a pipe before the read
/// deadline) end the stream and show in error(); the bytes before them are
/// still delivered. Files are opened through nodeprobe/input.h (typed,
/// bounded); the cap applies to the decompressed bytes too (gzip bombs).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "nodeprobe/input.h"

namespace nodeprobe::diag {

class ByteSource {
 public:
  /// Reads `path` ("-" = stdin) within `limits`.
  explicit ByteSource(const std::string& path, const InputLimits& limits = input_limits(InputKind::kLog));
  /// Reads an input opened by the caller (InputFile::open_beneath for bundles).
  explicit ByteSource(InputFile file);
  /// Reads from memory (tests, fuzzing); `name` is used in messages.
  ByteSource(std::string_view memory, std::string name);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// Up to `cap` (decompressed) bytes into dst; 0 at the end or on error.
  std::size_t read(char* dst, std::size_t cap);

  const std::string& error() const { return error_; }
  bool gzip() const { return gzip_; }
  std::uint64_t bytes() const { return bytes_out_; }
  const std::string& name() const { return name_; }

 private:
  struct Raw;
  std::string name_;
  std::unique_ptr<Raw> raw_;
  bool gzip_ = false;
  bool failed_open_ = false;
  std::uint64_t max_out_ = 0;  // cap on decompressed bytes (0: none)
  std::string error_;
  std::uint64_t bytes_out_ = 0;
};

}  // namespace nodeprobe::diag
