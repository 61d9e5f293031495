#include "byte_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "nodeprobe/size.h"

#if NODEPROBE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace nodeprobe::diag {
namespace {

constexpr std::size_t kRawChunk = 256u << 10;

}  // namespace

struct ByteSource::Raw {
  std::optional<InputFile> file;
  std::string_view memory;
  bool from_memory = false;
  std::size_t mem_pos = 0;
  std::string in;             // raw bytes not yet consumed (gzip input, or the sniffed start)
  std::size_t in_pos = 0;
  bool raw_eof = false;
  bool gzip = false;
  bool in_member = false;     // inside a gzip member (EOF here means truncation)
#if NODEPROBE_HAVE_ZLIB
  z_stream z{};
  bool z_init = false;
#endif

  ~Raw() {
#if NODEPROBE_HAVE_ZLIB
    if (z_init) inflateEnd(&z);
#endif
  }

  // Raw bytes into dst; 0 at end. Sets *err on a read error.
  std::size_t read_raw(char* dst, std::size_t cap, std::string* err) {
    if (raw_eof) return 0;
    if (from_memory) {
      const std::size_t n = std::min(cap, memory.size() - mem_pos);
      std::memcpy(dst, memory.data() + mem_pos, n);
      mem_pos += n;
      if (n == 0) raw_eof = true;
      return n;
    }
    if (!file) {
      raw_eof = true;
      return 0;
    }
    try {
      const std::size_t n = file->read(dst, cap);
      if (n == 0) raw_eof = true;
      return n;
    } catch (const InputError& e) {  // read error, size cap, read deadline
      *err = e.what();
      raw_eof = true;
      return 0;
    }
  }
};

ByteSource::ByteSource(const std::string& path, const InputLimits& limits)
    : name_(path == "-" ? "stdin" : path), raw_(std::make_unique<Raw>()), max_out_(limits.max_bytes) {
  try {
    raw_->file.emplace(InputFile::open(path, limits));
  } catch (const InputError& e) {
    error_ = e.what();
    failed_open_ = true;
    raw_->raw_eof = true;
  }
}

ByteSource::ByteSource(InputFile file)
    : name_(file.name()), raw_(std::make_unique<Raw>()), max_out_(file.max_bytes()) {
  raw_->file.emplace(std::move(file));
}

ByteSource::ByteSource(std::string_view memory, std::string name)
    : name_(std::move(name)), raw_(std::make_unique<Raw>()) {
  raw_->memory = memory;
  raw_->from_memory = true;
}

ByteSource::~ByteSource() = default;

std::size_t ByteSource::read(char* dst, std::size_t cap) {
  Raw& r = *raw_;
  if (failed_open_) return 0;
  if (bytes_out_ == 0 && r.in.empty() && !r.raw_eof) {
    // Sniff the first bytes for the gzip magic.
    r.in.resize(kRawChunk);
    r.in.resize(r.read_raw(r.in.data(), r.in.size(), &error_));
    r.in_pos = 0;
    if (r.in.size() >= 2 && static_cast<unsigned char>(r.in[0]) == 0x1f &&
        static_cast<unsigned char>(r.in[1]) == 0x8b) {
#if NODEPROBE_HAVE_ZLIB
      r.gzip = gzip_ = true;
      if (inflateInit2(&r.z, 15 + 16) != Z_OK) {
        error_ = "cannot initialise zlib";
        r.raw_eof = true;
        r.in.clear();
        return 0;
      }
      r.z_init = true;
#else
      error_ = name_ + " is gzip-compressed but this build has no zlib; gunzip it first";
      r.raw_eof = true;
      r.in.clear();
      return 0;
#endif
    }
  }
  if (!r.gzip) {
    if (r.in_pos < r.in.size()) {  // sniffed bytes first
      const std::size_t n = std::min(cap, r.in.size() - r.in_pos);
      std::memcpy(dst, r.in.data() + r.in_pos, n);
      r.in_pos += n;
      bytes_out_ += n;
      return n;
    }
    const std::size_t n = r.read_raw(dst, cap, &error_);
    bytes_out_ += n;
    return n;
  }
#if NODEPROBE_HAVE_ZLIB
  std::size_t produced = 0;
  while (produced < cap) {
    if (r.in_pos >= r.in.size()) {
      if (r.raw_eof) break;
      r.in.resize(kRawChunk);
      r.in.resize(r.read_raw(r.in.data(), r.in.size(), &error_));
      r.in_pos = 0;
      if (r.in.empty()) break;
    }
    if (!r.in_member) {
      // A new member must start with the magic; anything else is trailing padding.
      if (r.in.size() - r.in_pos < 2 && !r.raw_eof) {  // need one more byte to tell
        std::string rest = r.in.substr(r.in_pos);
        r.in.resize(kRawChunk);
        const std::size_t n = r.read_raw(r.in.data(), r.in.size(), &error_);
        r.in.resize(n);
        r.in.insert(0, rest);
        r.in_pos = 0;
      }
      if (r.in.size() - r.in_pos < 2 || static_cast<unsigned char>(r.in[r.in_pos]) != 0x1f ||
          static_cast<unsigned char>(r.in[r.in_pos + 1]) != 0x8b) {
        r.raw_eof = true;
        r.in.clear();
        r.in_pos = 0;
        break;
      }
      r.in_member = true;
    }
    r.z.next_in = reinterpret_cast<Bytef*>(r.in.data() + r.in_pos);
    r.z.avail_in = static_cast<uInt>(r.in.size() - r.in_pos);
    r.z.next_out = reinterpret_cast<Bytef*>(dst + produced);
    r.z.avail_out = static_cast<uInt>(cap - produced);
    const int rc = inflate(&r.z, Z_NO_FLUSH);
    r.in_pos = r.in.size() - r.z.avail_in;
    produced = cap - r.z.avail_out;
    if (rc == Z_STREAM_END) {
      r.in_member = false;
      inflateReset(&r.z);
      continue;
    }
    if (rc == Z_BUF_ERROR || rc == Z_OK) continue;  // needs input or output room
    error_ = std::string("corrupt gzip data in ") + name_ + ": " +
             (r.z.msg ? r.z.msg : "inflate error " + std::to_string(rc));
    r.raw_eof = true;
    r.in.clear();
    r.in_pos = 0;
    break;
  }
  if (r.raw_eof && r.in_pos >= r.in.size() && r.in_member && produced < cap && error_.empty())
    error_ = "truncated gzip stream in " + name_ + " after " +
             std::to_string(bytes_out_ + produced) + " bytes";
  bytes_out_ += produced;
  if (max_out_ > 0 && bytes_out_ > max_out_ && error_.empty()) {
    // A gzip bomb or a log past its cap: what came before is still delivered.
    error_ = name_ + ": more than the " + format_size(max_out_) +
             " cap when decompressed (raise it with --max-input-size)";
    produced -= static_cast<std::size_t>(bytes_out_ - max_out_);
    bytes_out_ = max_out_;
    r.raw_eof = true;
    r.in.clear();
    r.in_pos = 0;
    r.in_member = false;
  }
  return produced;
#else
  return 0;
#endif
}

}  // namespace nodeprobe::diag
