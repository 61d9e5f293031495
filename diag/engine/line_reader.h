#pragma once
/// Streams a log as blocks of whole lines with constant memory: from a file,
/// stdin ("-") or memory. gzip input (also concatenated members) is detected
/// by its magic bytes and inflated on the fly with zlib. Lines longer than
/// kMaxLine are cut (the rest up to the newline is skipped and counted), so
/// neither a 1 GB log nor a 1 GB line grows the buffer.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "byte_source.h"

namespace nodeprobe::diag {

class LineBlockReader {
 public:
  static constexpr std::size_t kBlock = 1u << 20;    ///< bytes of new text per block
  static constexpr std::size_t kMaxLine = 1u << 20;  ///< longer lines are cut here
  static constexpr std::size_t kHead = 64u << 10;    ///< bytes kept for kind detection

  /// Reads `path` ("-" = stdin) typed and bounded (nodeprobe/input.h). Open
  /// errors show in error(); next() is then false.
  explicit LineBlockReader(const std::string& path, const InputLimits& limits = input_limits(InputKind::kLog));
  /// Reads an input the caller opened (a bundle's file, opened beneath its directory).
  explicit LineBlockReader(InputFile file);
  /// Reads from memory (tests, fuzzing); `name` is used in messages.
  LineBlockReader(std::string_view memory, std::string name);
  LineBlockReader(const LineBlockReader&) = delete;
  LineBlockReader& operator=(const LineBlockReader&) = delete;

  /// The next block of complete lines (the last one may lack its newline).
  /// Valid until the next call. False at the end of input or on error.
  bool next(std::string_view* block);

  /// "" or why reading stopped early (open failure, truncated or corrupt gzip,
  /// read error, the run told to stop).
  const std::string& error() const { return stopped_.empty() ? src_.error() : stopped_; }
  bool gzip() const { return src_.gzip(); }
  /// Decompressed bytes read so far.
  std::uint64_t bytes() const { return src_.bytes(); }
  /// Lines longer than kMaxLine that were cut.
  std::uint64_t long_lines() const { return long_lines_; }
  /// The first kHead bytes of (decompressed) text, available after the first next().
  std::string_view head() const { return head_; }
  const std::string& name() const { return src_.name(); }

 private:
  std::size_t fill(char* dst, std::size_t cap);  // decompressed bytes, 0 at end/error

  ByteSource src_;
  static constexpr std::size_t kBuf = kBlock + kMaxLine;
  // Not value-initialised: a reader of a one-line text touches one page of
  // it, not 2 MiB (the catalogue tests make some 40000 readers).
  std::unique_ptr<char[]> buf_;
  std::size_t len_ = 0;        // valid bytes in buf_
  std::size_t consumed_ = 0;   // bytes of buf_ handed out by the previous next()
  bool eof_ = false;
  bool skipping_ = false;      // inside the tail of a cut line
  std::uint64_t long_lines_ = 0;
  std::string head_;
  std::string stopped_;        // why a stop (stop.h) ended the reading
};

}  // namespace nodeprobe::diag
