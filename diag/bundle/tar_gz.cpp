#include "tar_gz.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/stop.h"

#if NODEPROBE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace nodeprobe::diag {
namespace {

constexpr std::size_t kBlock = 512;

[[maybe_unused]] void octal(char* field, std::size_t width, std::uint64_t v) {
  // width-1 digits and a NUL, like GNU tar.
  std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1), static_cast<unsigned long long>(v));
}

std::uint64_t parse_octal(const char* f, std::size_t n, bool* ok) {
  std::uint64_t v = 0;
  std::size_t i = 0;
  while (i < n && (f[i] == ' ' || f[i] == '\0')) ++i;
  bool any = false;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; ++i) {
    if (v > (UINT64_MAX >> 3)) {
      *ok = false;
      return 0;
    }
    v = (v << 3) | static_cast<std::uint64_t>(f[i] - '0');
    any = true;
  }
  for (; i < n; ++i)
    if (f[i] != ' ' && f[i] != '\0') *ok = false;
  if (!any && n > 0 && f[0] != '\0' && f[0] != ' ') *ok = false;
  return v;
}

bool mkdirs(const std::string& path) {
  std::string cur;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace

std::string safe_relative_path(std::string_view name) {
  while (name.size() > 2 && name.substr(0, 2) == "./") name.remove_prefix(2);
  while (!name.empty() && name.back() == '/') name.remove_suffix(1);
  if (name.empty() || name.size() > 200 || name.front() == '/') return {};
  int depth = 0;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t e = name.find('/', start);
    const std::string_view comp = name.substr(start, e == std::string_view::npos ? std::string_view::npos : e - start);
    if (comp.empty() || comp == "." || comp == ".." || ++depth > 8) return {};
    for (char c : comp)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' || c == '@'))
        return {};
    if (e == std::string_view::npos) break;
    start = e + 1;
  }
  return std::string(name);
}

// ---- writer -------------------------------------------------------------------------------

#if NODEPROBE_HAVE_ZLIB

TarGzWriter::TarGzWriter(const std::string& path) : path_(path), out_(std::make_unique<AtomicFile>(path, 0600)) {
  // zlib gets its own descriptor and closes it; the AtomicFile keeps the
  // temporary's for fsync and the rename.
  const int fd = ::fcntl(out_->fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  gz_ = gzdopen(fd, "wb6");
  if (!gz_) {
    ::close(fd);
    throw std::runtime_error("cannot start gzip stream for " + path);
  }
  mtime_ = static_cast<double>(std::time(nullptr));
}

TarGzWriter::~TarGzWriter() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
  // An unfinished archive's temporary goes with out_.
}

void TarGzWriter::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n, 1u << 20));
    const int w = gzwrite(static_cast<gzFile>(gz_), p, chunk);
    if (w <= 0) throw std::runtime_error("cannot write " + out_->temp_path() + " (disk full?)");
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void TarGzWriter::header(const std::string& name, std::uint64_t size, char type) {
  char h[kBlock];
  std::memset(h, 0, sizeof h);
  std::string n = name, prefix;
  if (n.size() > 99) {  // ustar prefix/name split at a '/'
    const std::size_t cut = n.rfind('/', 154);
    if (cut == std::string::npos || n.size() - cut - 1 > 99) throw std::runtime_error("name too long for tar: " + name);
    prefix = n.substr(0, cut);
    n = n.substr(cut + 1);
  }
  std::memcpy(h, n.data(), n.size());
  octal(h + 100, 8, type == '5' ? 0700 : 0600);
  octal(h + 108, 8, 0);
  octal(h + 116, 8, 0);
  octal(h + 124, 12, size);
  octal(h + 136, 12, static_cast<std::uint64_t>(mtime_));
  std::memset(h + 148, ' ', 8);
  h[156] = type;
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 265, "root", 4);
  std::memcpy(h + 297, "root", 4);
  std::memcpy(h + 345, prefix.data(), prefix.size());
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h + 148, 8, "%06o", sum);
  h[155] = ' ';
  write(h, sizeof h);
}

void TarGzWriter::add_directory(const std::string& name) { header(name + "/", 0, '5'); }

void TarGzWriter::add_bytes(const std::string& name, std::string_view data) {
  header(name, data.size(), '0');
  write(data.data(), data.size());
  static const char zeros[kBlock] = {};
  if (data.size() % kBlock) write(zeros, kBlock - data.size() % kBlock);
}

void TarGzWriter::add_file(const std::string& name, const std::string& src_path) {
  const int fd = ::open(src_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot read " + src_path + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  header(name, size, '0');
  std::vector<char> buf(1u << 20);
  std::uint64_t left = size;
  while (left > 0) {
    const ssize_t n = ::read(fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size())));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // shrank while reading: pad so the archive stays well-formed
      std::fill(buf.begin(), buf.end(), '\n');
      while (left > 0) {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size()));
        write(buf.data(), k);
        left -= k;
      }
      break;
    }
    write(buf.data(), static_cast<std::size_t>(n));
    left -= static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  static const char zeros[kBlock] = {};
  if (size % kBlock) write(zeros, kBlock - size % kBlock);
}

void TarGzWriter::finish() {
  static const char zeros[2 * kBlock] = {};
  write(zeros, sizeof zeros);
  const int rc = gzclose(static_cast<gzFile>(gz_));
  gz_ = nullptr;
  if (rc != Z_OK) throw std::runtime_error("cannot finish " + out_->temp_path());
  out_->commit();
  finished_ = true;
}

#else

TarGzWriter::TarGzWriter(const std::string& path) : path_(path) {
  throw std::runtime_error("writing " + path + " needs zlib, which this build lacks");
}
TarGzWriter::~TarGzWriter() = default;
void TarGzWriter::write(const void*, std::size_t) {}
void TarGzWriter::header(const std::string&, std::uint64_t, char) {}
void TarGzWriter::add_directory(const std::string&) {}
void TarGzWriter::add_bytes(const std::string&, std::string_view) {}
void TarGzWriter::add_file(const std::string&, const std::string&) {}
void TarGzWriter::finish() {}

#endif

// ---- reader -------------------------------------------------------------------------------

bool TarReader::read_exact(char* dst, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const std::size_t k = src_.read(dst + got, n - got);
    if (k == 0) return false;
    got += k;
  }
  return true;
}

bool TarReader::skip(std::uint64_t n) {
  char buf[8192];
  while (n > 0) {
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, sizeof buf));
    if (!read_exact(buf, k)) return false;
    n -= k;
  }
  return true;
}

std::string TarReader::error() const {
  if (!error_.empty()) return error_;
  return src_.error();
}

bool TarReader::next(TarEntry* e) {
  if (!error_.empty()) return false;
  if (!skip(remaining_ + padding_)) {
    error_ = "truncated archive: entry data ends early";
    return false;
  }
  remaining_ = padding_ = 0;
  for (;;) {
    char h[kBlock];
    std::size_t got = 0;
    while (got < kBlock) {
      const std::size_t k = src_.read(h + got, kBlock - got);
      if (k == 0) break;
      got += k;
    }
    if (got == 0) {
      if (entries_ == 0) error_ = "empty archive";
      else if (src_.error().empty()) error_ = "truncated archive: no end-of-archive marker";
      return false;
    }
    if (got < kBlock) {
      error_ = "truncated archive: partial header";
      return false;
    }
    if (std::all_of(h, h + kBlock, [](char c) { return c == 0; })) {  // end marker
      // Read to the end of the source: a gzip stream is checked (CRC and
      // length) only at its trailer, which follows the tar's end blocks.
      char rest[8192];
      while (src_.read(rest, sizeof rest) > 0) {
      }
      if (!src_.error().empty()) error_ = src_.error();
      return false;
    }
    bool ok = true;
    const std::uint64_t stored = parse_octal(h + 148, 8, &ok);
    unsigned sum = 0;
    int ssum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) {
      const char c = (i >= 148 && i < 156) ? ' ' : h[i];
      sum += static_cast<unsigned char>(c);
      ssum += static_cast<signed char>(c);
    }
    if (!ok || (stored != sum && static_cast<long long>(stored) != ssum)) {
      error_ = entries_ == 0 ? "not a tar archive (bad header checksum)"
                             : "corrupt archive: bad header checksum after " + std::to_string(entries_) + " entries";
      return false;
    }
    const std::uint64_t size = parse_octal(h + 124, 12, &ok);
    if (!ok) {
      error_ = "corrupt archive: bad size field";
      return false;
    }
    ++entries_;
    const char type = h[156] == '\0' ? '0' : h[156];
    padding_ = (kBlock - size % kBlock) % kBlock;
    remaining_ = size;
    if (type == 'L') {  // GNU long name: the data is the next entry's name
      if (size > 4096) {
        error_ = "corrupt archive: long name of " + std::to_string(size) + " bytes";
        return false;
      }
      long_name_.assign(static_cast<std::size_t>(size), '\0');
      if (!read_exact(long_name_.data(), long_name_.size()) || !skip(padding_)) {
        error_ = "truncated archive";
        return false;
      }
      remaining_ = padding_ = 0;
      long_name_ = long_name_.c_str();
      continue;
    }
    if (type != '0' && type != '5') {  // links, devices, pax headers: skip
      if (!skip(remaining_ + padding_)) {
        error_ = "truncated archive";
        return false;
      }
      remaining_ = padding_ = 0;
      long_name_.clear();
      continue;
    }
    std::string name;
    if (!long_name_.empty()) {
      name = long_name_;
      long_name_.clear();
    } else {
      const std::string prefix(h + 345, strnlen(h + 345, 155));
      name.assign(h, strnlen(h, 100));
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    e->name = name;
    e->size = type == '5' ? 0 : size;
    e->type = type;
    return true;
  }
}

std::size_t TarReader::read(char* dst, std::size_t n) {
  const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, remaining_));
  if (k == 0) return 0;
  const std::size_t got = src_.read(dst, k);
  remaining_ -= got;
  if (got < k && error_.empty()) error_ = "truncated archive: entry data ends early";
  return got;
}

std::string extract_archive(const std::string& archive, const std::string& dir, const ExtractLimits& limits) {
  ByteSource src(archive, limits.input);
  if (!src.error().empty()) return src.error();
  TarReader tar(src);
  TarEntry e;
  std::uint64_t total = 0;
  int n = 0;
  std::vector<char> buf(1u << 16);
  while (tar.next(&e)) {
    if (stop_requested()) return "not unpacked to the end: " + stop_reason();
    if (++n > limits.max_entries) return "archive has more than " + std::to_string(limits.max_entries) + " entries";
    const std::string rel = safe_relative_path(e.name);
    if (rel.empty()) return "unsafe name in archive: '" + e.name.substr(0, 100) + "'";
    const std::string path = dir + "/" + rel;
    if (e.type == '5') {
      if (!mkdirs(path)) return "cannot create " + path + ": " + std::strerror(errno);
      continue;
    }
    if (e.size > limits.max_file) return "entry " + rel + " is larger than " + std::to_string(limits.max_file) + " bytes";
    total += e.size;
    if (total > limits.max_total) return "archive expands to more than " + std::to_string(limits.max_total) + " bytes";
    const std::size_t slash = path.rfind('/');
    if (slash != std::string::npos && !mkdirs(path.substr(0, slash)))
      return "cannot create " + path.substr(0, slash) + ": " + std::strerror(errno);
    // A name given twice, or a link planted meanwhile, is refused: never written through.
    const int fd = create_new_file(AT_FDCWD, path, 0600);
    if (fd < 0) return "cannot write " + path + ": " + std::strerror(errno);
    for (;;) {
      if (stop_requested()) {
        ::close(fd);
        return "not unpacked to the end: " + stop_reason();
      }
      const std::size_t k = tar.read(buf.data(), buf.size());
      if (k == 0) break;
      if (::write(fd, buf.data(), k) != static_cast<ssize_t>(k)) {
        ::close(fd);
        return "cannot write " + path + ": " + std::strerror(errno);
      }
    }
    ::close(fd);
    if (!tar.error().empty()) return tar.error();
  }
  return tar.error();
}

}  // namespace nodeprobe::diag
