#include "engine.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nodeprobe::io {
namespace {

constexpr const char* kNames[] = {"pread", "direct", "mmap", "uring", "uring-direct", "null"};

// Reads up to `want` bytes at `off`; stops early only at end of file.
std::size_t pread_full(int fd, std::uint8_t* buf, std::size_t want, std::uint64_t off,
                       const Dataset& ds, std::uint32_t id) {
  std::size_t got = 0;
  while (got < want) {
    const ssize_t n = ::pread(fd, buf + got, want - got, static_cast<off_t>(off + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) NP_IO_FAIL("read " + ds.where(id), errno);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

int open_sample(const Dataset& ds, std::uint32_t id, bool direct) {
  char rel[64];
  sample_path(id, rel, sizeof rel);
  const int fd = ::openat(ds.dir_fd(), rel, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) NP_IO_FAIL("open " + ds.where(id), errno);
  return fd;
}

// pread with or without O_DIRECT: what a DataLoader worker does per sample
// (open, read, close for files; a positioned read into a shard).
class PreadEngine final : public Engine {
 public:
  PreadEngine(const Dataset& ds, bool direct) : ds_(ds), direct_(direct) {}
  void read(ReadSlot* s, std::size_t n) override {
    const auto& entries = ds_.index().entries;
    for (std::size_t i = 0; i < n; ++i) {
      const IndexEntry& e = entries[s[i].sample];
      if (ds_.layout() == Layout::kFiles) {
        const int fd = open_sample(ds_, s[i].sample, direct_);
        // O_DIRECT wants an aligned length; the file ends at the record's end.
        const std::size_t want = direct_ ? align_up(e.length, kDirectAlign) : e.length;
        std::size_t got = 0;
        try {
          got = pread_full(fd, s[i].buf, want, 0, ds_, s[i].sample);
        } catch (...) {
          ::close(fd);
          throw;
        }
        ::close(fd);
        s[i].data = s[i].buf;
        s[i].got = std::min<std::size_t>(got, e.length);
      } else if (!direct_) {
        s[i].data = s[i].buf;
        s[i].got = pread_full(ds_.shard_fd(e.shard, false), s[i].buf, e.length, e.offset, ds_,
                              s[i].sample);
      } else {
        const std::uint64_t start = align_down(e.offset, kDirectAlign);
        const std::uint64_t end = align_up(e.offset + e.length, kDirectAlign);
        const std::size_t got = pread_full(ds_.shard_fd(e.shard, true), s[i].buf,
                                           static_cast<std::size_t>(end - start), start, ds_, s[i].sample);
        const auto skip = static_cast<std::size_t>(e.offset - start);
        s[i].data = s[i].buf + skip;
        s[i].got = got > skip ? std::min<std::size_t>(got - skip, e.length) : 0;
      }
    }
  }

 private:
  const Dataset& ds_;
  bool direct_;
};

// mmap of the record's pages (populated in one call), copied into staging,
// unmapped: the mapping never outlives the sample, so resident memory stays
// bounded by the staging slots whatever the dataset size.
class MmapEngine final : public Engine {
 public:
  explicit MmapEngine(const Dataset& ds) : ds_(ds), page_(static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE))) {}
  void read(ReadSlot* s, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) {
      const IndexEntry& e = ds_.index().entries[s[i].sample];
      const bool files = ds_.layout() == Layout::kFiles;
      const int fd = files ? open_sample(ds_, s[i].sample, false) : ds_.shard_fd(e.shard, false);
      // Touching a mapping past the end of a file raises SIGBUS: map only what
      // the file holds now (it may have been truncated since the index was written).
      struct stat st {};
      if (::fstat(fd, &st) != 0) {
        const int err = errno;
        if (files) ::close(fd);
        NP_IO_FAIL("stat " + ds_.where(s[i].sample), err);
      }
      const auto size = static_cast<std::uint64_t>(st.st_size);
      const std::uint64_t end = std::min<std::uint64_t>(e.offset + e.length, size);
      s[i].data = s[i].buf;
      s[i].got = end > e.offset ? static_cast<std::size_t>(end - e.offset) : 0;
      if (s[i].got == 0) {
        if (files) ::close(fd);
        continue;
      }
      const std::uint64_t start = align_down(e.offset, page_);
      const auto span = static_cast<std::size_t>(end - start);
      void* map = ::mmap(nullptr, span, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, static_cast<off_t>(start));
      const int err = errno;
      if (files) ::close(fd);
      if (map == MAP_FAILED) NP_IO_FAIL("mmap " + ds_.where(s[i].sample), err);
      std::memcpy(s[i].buf, static_cast<const std::uint8_t*>(map) + (e.offset - start), s[i].got);
      ::munmap(map, span);
    }
  }

 private:
  const Dataset& ds_;
  std::uint64_t page_;
};

// No IO: stamps the record header and tail, as a reader would find them.
class NullEngine final : public Engine {
 public:
  explicit NullEngine(const Dataset& ds) : ds_(ds) {}
  void read(ReadSlot* s, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t len = ds_.index().entries[s[i].sample].length;
      stamp_sample(s[i].buf, len, s[i].sample);
      s[i].data = s[i].buf;
      s[i].got = len;
    }
  }

 private:
  const Dataset& ds_;
};

}  // namespace

const char* to_string(Method m) { return kNames[static_cast<int>(m)]; }

std::optional<Method> method_from_string(std::string_view s) {
  for (int i = 0; i < 6; ++i)
    if (s == kNames[i]) return static_cast<Method>(i);
  return std::nullopt;
}

const char* method_names() { return "pread, direct, mmap, uring, uring-direct, null"; }

std::size_t slot_capacity(std::uint64_t max_record) {
  // An unaligned record read with O_DIRECT spans up to one extra block.
  return static_cast<std::size_t>(align_up(max_record, kDirectAlign) + kDirectAlign);
}

std::string method_unavailable(Method m, Dataset& ds) {
  if (m == Method::kUring || m == Method::kUringDirect) {
    if (auto why = uring_unavailable(); !why.empty()) return why;
  }
  if (!is_direct(m)) return {};
  try {
    if (ds.layout() == Layout::kShards) {
      ds.open_direct();
    } else {
      const int fd = open_sample(ds, 0, true);
      ::close(fd);
    }
  } catch (const ApiError& e) {
    if (e.info().code == EINVAL) return ds.dir() + ": the filesystem does not support O_DIRECT";
    throw;
  } catch (const MethodUnavailable& e) {
    return e.what();
  }
  return {};
}

std::unique_ptr<Engine> make_engine(Method m, const Dataset& ds, std::size_t depth) {
  switch (m) {
    case Method::kPread: return std::make_unique<PreadEngine>(ds, false);
    case Method::kDirect: return std::make_unique<PreadEngine>(ds, true);
    case Method::kMmap: return std::make_unique<MmapEngine>(ds);
    case Method::kUring: return make_uring_engine(ds, false, depth);
    case Method::kUringDirect: return make_uring_engine(ds, true, depth);
    case Method::kNull: return std::make_unique<NullEngine>(ds);
  }
  throw MethodUnavailable("unknown read method");
}

}  // namespace nodeprobe::io
