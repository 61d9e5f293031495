#include "line_reader.h"

#include <cstring>

#include "nodeprobe/stop.h"

namespace nodeprobe::diag {

LineBlockReader::LineBlockReader(const std::string& path, const InputLimits& limits) : src_(path, limits) {
  eof_ = !src_.error().empty();
}

LineBlockReader::LineBlockReader(InputFile file) : src_(std::move(file)) {}

LineBlockReader::LineBlockReader(std::string_view memory, std::string name) : src_(memory, std::move(name)) {}

std::size_t LineBlockReader::fill(char* dst, std::size_t cap) { return src_.read(dst, cap); }

bool LineBlockReader::next(std::string_view* block) {
  if (!stopped_.empty()) return false;
  if (!buf_) buf_.reset(new char[kBuf]);
  if (consumed_ > 0) {
    std::memmove(buf_.get(), buf_.get() + consumed_, len_ - consumed_);
    len_ -= consumed_;
    consumed_ = 0;
  }
  for (;;) {
    while (!eof_ && len_ < kBlock) {
      // Ctrl-C or --timeout (stop.h): what was read so far is handed out
      // (a slow pipe may never fill a block), then reading ends.
      if (stop_requested()) {
        stopped_ = src_.name() + ": not read to the end: " + stop_reason();
        eof_ = true;
        break;
      }
      const std::size_t n = fill(buf_.get() + len_, kBuf - len_);
      if (n == 0) eof_ = true;
      len_ += n;
    }
    if (!skipping_) break;
    const void* nl = std::memchr(buf_.get(), '\n', len_);
    if (!nl) {  // still inside the cut line: drop it all and read on
      len_ = 0;
      if (eof_) break;
      continue;
    }
    const std::size_t keep_from =
        static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.get()) + 1;
    std::memmove(buf_.get(), buf_.get() + keep_from, len_ - keep_from);
    len_ -= keep_from;
    skipping_ = false;
  }
  if (len_ == 0) return false;
  const void* last = ::memrchr(buf_.get(), '\n', len_);
  std::size_t take;
  if (last) {
    take = static_cast<std::size_t>(static_cast<const char*>(last) - buf_.get()) + 1;
  } else if (eof_) {
    take = len_;  // final line without a newline
  } else {
    // No newline in a full buffer: a line longer than kMaxLine. Hand out its
    // start, skip the rest up to its newline.
    take = std::min(len_, kMaxLine);
    consumed_ = len_;
    skipping_ = true;
    ++long_lines_;
    *block = std::string_view(buf_.get(), take);
    if (head_.size() < kHead) head_.append(buf_.get(), std::min(take, kHead - head_.size()));
    return true;
  }
  consumed_ = take;
  *block = std::string_view(buf_.get(), take);
  if (head_.size() < kHead) head_.append(buf_.get(), std::min(take, kHead - head_.size()));
  return true;
}

}  // namespace nodeprobe::diag
