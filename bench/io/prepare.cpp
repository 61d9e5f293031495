#include "prepare.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ostream>

#include "dataset.h"
#include "nodeprobe/atomic_file.h"
#include "nodeprobe/fs_root.h"
#include "nodeprobe/safe_remove.h"
#include "nodeprobe/size.h"

namespace nodeprobe::io {
namespace {

constexpr std::size_t kShardBuffer = 4u << 20;

bool all_digits(const std::string& s, std::size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
bool is_sample_file(const std::string& n) { return n.size() == 12 && all_digits(n.substr(0, 8), 8) && n.substr(8) == ".bin"; }
bool is_shard_file(const std::string& n) {
  return n.size() == 15 && n.compare(0, 6, "shard-") == 0 && all_digits(n.substr(6, 5), 5) &&
         n.compare(11, 4, ".rec") == 0;
}
// Temporaries of write_file_atomic (".index.bin.tmp-<random>"), and the older ".tmp.<pid>" ones.
bool is_our_temp(const std::string& n) {
  return n.rfind(std::string(".") + kIndexFile + ".tmp", 0) == 0 ||
         n.rfind(std::string(".") + kMarkerFile + ".tmp", 0) == 0;
}

// What prepare makes below a dataset directory, and nothing else: clean
// removes these and leaves the rest (links included) where it is.
bool made_by_prepare(const std::string& rel, EntryKind kind) {
  const auto slash = rel.find('/');
  if (slash == std::string::npos) {
    if (rel == kSamplesDir) return kind == EntryKind::kDir;
    return kind == EntryKind::kFile && (rel == kIndexFile || is_shard_file(rel) || is_our_temp(rel));
  }
  if (rel.compare(0, slash, kSamplesDir) != 0) return false;
  const std::string rest = rel.substr(slash + 1);
  const auto s2 = rest.find('/');
  if (s2 == std::string::npos) return kind == EntryKind::kDir && all_digits(rest, 4);
  const std::string file = rest.substr(s2 + 1);
  return kind == EntryKind::kFile && file.find('/') == std::string::npos && is_sample_file(file);
}

void write_all(int fd, const std::uint8_t* p, std::size_t n, const std::string& what) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) NP_IO_FAIL("write " + what, errno);
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// The spread of write_throughput: the samples are written in windows of
// consecutive ones, each ended by syncfs, so that every window's time holds
// its own bytes reaching the storage ("written and synced") as the whole
// write's does. Up to kWriteWindows windows of kWriteWindowSamples samples
// and kWriteWindowBytes or more: a smaller window times syncfs, not the
// storage's bandwidth, and syncfs is not free (it flushes the whole
// filesystem: ~40 ms on the development VM's ext4), so a small dataset gets
// one window, as before, and a large one 8: compare needs 7 a side.
constexpr std::size_t kWriteWindows = 8;
constexpr std::size_t kWriteWindowSamples = 8;
constexpr std::uint64_t kWriteWindowBytes = 4000000;

class WriteWindows {
 public:
  WriteWindows(int dir_fd, std::string dir, const std::vector<std::uint64_t>& lengths, Clock& clock)
      : dir_fd_(dir_fd), dir_(std::move(dir)), lengths_(lengths), clock_(clock), t_(clock.now_s()) {
    const std::size_t n = lengths.size();
    std::uint64_t total = 0;
    for (std::uint64_t len : lengths) total += len;
    const std::size_t k = std::clamp<std::size_t>(
        std::min<std::size_t>(n / kWriteWindowSamples, static_cast<std::size_t>(total / kWriteWindowBytes)), 1,
        kWriteWindows);
    for (std::size_t j = 1; j < k; ++j) ends_.push_back(j * n / k);
  }
  /// True when sample i begins a new window: the one before must be closed first.
  bool due(std::uint64_t i) const { return next_ < ends_.size() && i == ends_[next_]; }
  /// Syncs what samples [start, i) wrote and records their rate.
  void close(std::uint64_t i) {
    if (::syncfs(dir_fd_) != 0) NP_IO_FAIL("syncfs " + dir_, errno);
    std::uint64_t bytes = 0;
    for (std::uint64_t s = start_; s < i; ++s) bytes += lengths_[s];
    const double now = clock_.now_s();
    if (now > t_) mb_per_s_.push_back(static_cast<double>(bytes) / (now - t_) / 1e6);
    t_ = now;
    start_ = i;
    if (next_ < ends_.size() && ends_[next_] == i) ++next_;
  }
  const std::vector<double>& mb_per_s() const { return mb_per_s_; }

 private:
  int dir_fd_;
  std::string dir_;
  const std::vector<std::uint64_t>& lengths_;
  Clock& clock_;
  double t_;
  std::vector<std::uint64_t> ends_;
  std::size_t next_ = 0;
  std::uint64_t start_ = 0;
  std::vector<double> mb_per_s_;
};

void close_checked(int fd, const std::string& what) {
  // close() can be where a network filesystem reports ENOSPC or EIO.
  if (::close(fd) != 0) NP_IO_FAIL("close " + what, errno);
}

void write_files(int dir_fd, const std::string& dir, const std::vector<std::uint64_t>& lengths,
                 std::uint64_t seed, const std::function<bool()>& cancelled, WriteWindows& win) {
  std::vector<std::uint8_t> buf;
  char rel[64];
  if (::mkdirat(dir_fd, kSamplesDir, 0755) != 0) NP_IO_FAIL("mkdir " + dir + "/" + kSamplesDir, errno);
  for (std::uint32_t i = 0; i < lengths.size(); ++i) {
    if (win.due(i)) win.close(i);
    if (i % kFilesPerDir == 0) {
      if (cancelled && cancelled()) throw DeadlineError("prepare stopped before its deadline");
      std::snprintf(rel, sizeof rel, "%s/%04u", kSamplesDir, i / kFilesPerDir);
      if (::mkdirat(dir_fd, rel, 0755) != 0) NP_IO_FAIL("mkdir " + dir + "/" + rel, errno);
    }
    buf.resize(static_cast<std::size_t>(lengths[i]));
    fill_sample(buf.data(), lengths[i], i, seed);
    sample_path(i, rel, sizeof rel);
    const int fd = create_new_file(dir_fd, rel);
    if (fd < 0) NP_IO_FAIL("create " + dir + "/" + rel, errno);
    try {
      write_all(fd, buf.data(), buf.size(), dir + "/" + rel);
    } catch (...) {
      ::close(fd);
      throw;
    }
    close_checked(fd, dir + "/" + rel);
  }
}

void write_shards(int dir_fd, const std::string& dir, const std::vector<std::uint64_t>& lengths,
                  std::uint32_t shards, std::uint64_t seed, Index& idx,
                  const std::function<bool()>& cancelled, WriteWindows& win) {
  const std::uint64_t n = lengths.size();
  std::vector<std::uint8_t> buf;
  buf.reserve(kShardBuffer);
  idx.shard_sizes.assign(shards, 0);
  std::uint32_t i = 0;
  for (std::uint32_t k = 0; k < shards; ++k) {
    const std::string name = dir + "/" + shard_path(k);
    const int fd = create_new_file(dir_fd, shard_path(k));
    if (fd < 0) NP_IO_FAIL("create " + name, errno);
    try {
      std::uint64_t off = 0;
      // Samples are packed in id order: shard k holds ids [k n / K, (k+1) n / K).
      const std::uint64_t end = (std::uint64_t{k} + 1) * n / shards;
      for (; i < end; ++i) {
        if (i % 256 == 0 && cancelled && cancelled())
          throw DeadlineError("prepare stopped before its deadline");
        if (win.due(i)) {
          write_all(fd, buf.data(), buf.size(), name);
          buf.clear();
          win.close(i);
        }
        const auto len = static_cast<std::size_t>(lengths[i]);
        if (buf.size() + len > kShardBuffer && !buf.empty()) {
          write_all(fd, buf.data(), buf.size(), name);
          buf.clear();
        }
        const std::size_t at = buf.size();
        buf.resize(at + len);
        fill_sample(buf.data() + at, len, i, seed);
        idx.entries[i] = {off, static_cast<std::uint32_t>(len), k};
        off += len;
      }
      write_all(fd, buf.data(), buf.size(), name);
      buf.clear();
      idx.shard_sizes[k] = off;
    } catch (...) {
      ::close(fd);
      throw;
    }
    close_checked(fd, name);
  }
}

void validate(const PrepareOptions& o) {
  if (o.samples == 0) throw InputError("--files must be at least 1");
  if (o.samples > 0xFFFFFFFFULL) throw InputError("--files must be below 2^32");
  if (o.size < kMinSampleBytes || o.size > kMaxSampleBytes / 2)
    throw InputError("--size must be between " + std::to_string(kMinSampleBytes) + " B and 1 GiB");
  if (!(o.spread_pct >= 0 && o.spread_pct < 100)) throw InputError("--size-spread must be in [0, 100)");
  if (o.shards > o.samples) throw InputError("--shards cannot exceed --files");
  if (o.align == 0 || (o.align & (o.align - 1)) != 0 || o.align > (1u << 20))
    throw InputError("--align must be a power of two up to 1 MiB");
}

}  // namespace

SpaceNeed space_needed(const std::vector<std::uint64_t>& lengths, bool files_layout,
                       std::uint32_t shards, std::uint64_t block) {
  SpaceNeed need;
  if (block == 0) block = 4096;
  std::uint64_t data = 0;
  for (std::uint64_t len : lengths) data += files_layout ? align_up(len, block) : len;
  const std::uint64_t dirs = files_layout ? lengths.size() / kFilesPerDir + 2 : 0;
  const std::uint64_t index = 40 + 16 * lengths.size() + 8ULL * shards;
  need.bytes = data + data / 100 + (dirs + shards + 4) * block + align_up(index, block);
  need.inodes = (files_layout ? lengths.size() + dirs : shards) + 4;
  return need;
}

PrepareResult prepare_dataset(const PrepareOptions& opt, Clock& clock, std::ostream& log,
                              const std::function<bool()>& cancelled) {
  validate(opt);
  std::string dir = opt.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const bool files = opt.shards == 0;
  Marker m;
  switch (dir_state(dir)) {
    case DirState::kNotDir: throw InputError(dir + ": exists and is not a directory");
    case DirState::kForeign:
      throw InputError(dir + ": not empty and not a nodeprobe-io dataset; refusing to write into it");
    case DirState::kOurs: {
      const Marker old = read_marker(dir);
      if (!opt.overwrite)
        throw InputError(dir + ": already holds a nodeprobe-io dataset (" + old.state + ", " +
                         std::to_string(old.samples) + " samples); pass --overwrite or run clean");
      const CleanResult c = clean_dataset(dir);
      if (!c.left.empty()) throw InputError(dir + ": holds entries that are not ours: " + c.left.front());
      m.created_dir = old.created_dir;
      if (c.dir_removed && ::mkdir(dir.c_str(), 0755) != 0) NP_IO_FAIL("mkdir " + dir, errno);
      break;
    }
    case DirState::kMissing:
      if (::mkdir(dir.c_str(), 0755) != 0) {
        const int err = errno;
        if (err == ENOENT) throw InputError(dir + ": parent directory does not exist");
        NP_IO_FAIL("mkdir " + dir, err);
      }
      m.created_dir = true;
      break;
    case DirState::kEmpty: break;
  }

  auto undo_dir = [&] {
    if (m.created_dir) NP_CHECK_ERRNO_NOTHROW(::rmdir(dir.c_str()));
  };
  std::vector<std::uint64_t> lengths(static_cast<std::size_t>(opt.samples));
  const std::uint32_t align = files ? 1 : opt.align;
  for (std::uint64_t i = 0; i < opt.samples; ++i)
    lengths[i] = sample_length(i, opt.size, opt.spread_pct, opt.seed, align);

  PrepareResult res;
  const std::optional<FsSpace> vfs = fs_space(dir);
  if (!vfs) {
    const int err = errno;
    undo_dir();
    NP_IO_FAIL("statvfs " + dir, err);
  }
  const SpaceNeed need = space_needed(lengths, files, opt.shards, vfs->block_size);
  res.need_bytes = need.bytes;
  res.free_bytes = vfs->free_bytes;
  if (opt.space_check) {
    std::string why;
    if (need.bytes > res.free_bytes)
      why = "the dataset needs " + format_size(static_cast<double>(need.bytes)) + ", " +
            format_size(static_cast<double>(res.free_bytes)) + " free";
    else if (vfs->inodes > 0 && need.inodes > vfs->free_inodes)
      why = "the dataset needs " + std::to_string(need.inodes) + " inodes, " +
            std::to_string(vfs->free_inodes) + " free";
    if (!why.empty()) {
      undo_dir();
      throw InputError("not enough space in " + dir + ": " + why + " (nothing written)");
    }
  }

  m.state = "writing";
  m.layout = files ? Layout::kFiles : Layout::kShards;
  m.samples = opt.samples;
  m.shards = opt.shards;
  m.size_mean = opt.size;
  m.size_spread_pct = opt.spread_pct;
  m.align = align;
  m.seed = opt.seed;
  for (std::uint64_t len : lengths) m.bytes += len;
  m.created = utc_now_iso8601();
  m.host = process_hostname();
  m.pid = static_cast<long>(::getpid());
  const std::string marker_path = dir + "/" + kMarkerFile;
  try {
    write_file_atomic(marker_path, encode_marker(m));
  } catch (...) {
    undo_dir();
    throw;
  }

  const double t0 = clock.now_s();
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  try {
    if (dir_fd < 0) NP_IO_FAIL("open " + dir, errno);
    Index idx;
    idx.layout = m.layout;
    idx.align = align;
    idx.entries.resize(lengths.size());
    WriteWindows win(dir_fd, dir, lengths, clock);
    if (files) {
      for (std::size_t i = 0; i < lengths.size(); ++i)
        idx.entries[i].length = static_cast<std::uint32_t>(lengths[i]);
      write_files(dir_fd, dir, lengths, opt.seed, cancelled, win);
    } else {
      write_shards(dir_fd, dir, lengths, opt.shards, opt.seed, idx, cancelled, win);
    }
    // On disk before it is called complete; cold reads also need clean pages to evict.
    win.close(lengths.size());
    res.window_mb_per_s = win.mb_per_s();
    write_file_atomic(dir + "/" + kIndexFile, encode_index(idx));
    m.state = "complete";
    write_file_atomic(marker_path, encode_marker(m));
    ::close(dir_fd);
  } catch (const ApiError& e) {
    if (dir_fd >= 0) ::close(dir_fd);
    ApiErrorInfo info = e.info();
    try {
      clean_dataset(dir);
      info.message += "; the partial dataset was removed";
    } catch (const std::exception& c) {
      info.message += "; removing the partial dataset failed too (" + std::string(c.what()) +
                      "): it stays marked incomplete";
    }
    throw ApiError(info);
  } catch (...) {
    if (dir_fd >= 0) ::close(dir_fd);
    try {
      clean_dataset(dir);
    } catch (const std::exception& c) {
      log << "nodeprobe-io: removing the partial dataset failed: " << c.what() << "\n";
    }
    throw;
  }
  res.seconds = clock.now_s() - t0;
  res.bytes = m.bytes;
  res.marker = m;
  return res;
}

CleanResult clean_dataset(const std::string& dir_in) {
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  switch (dir_state(dir)) {
    case DirState::kMissing: throw DatasetError(dir + ": no such directory");
    case DirState::kNotDir: throw DatasetError(dir + ": not a directory");
    case DirState::kEmpty:
    case DirState::kForeign:
      throw DatasetError(dir + ": not a nodeprobe-io dataset (no " + kMarkerFile + " marker); nothing removed");
    case DirState::kOurs: break;
  }
  const Marker m = read_marker(dir);
  // Relative to directory descriptors, never across a link (safe_remove.h):
  // a samples/ that is a link to elsewhere is left, and what it points to too.
  RemoveOptions o;
  o.marker = kMarkerFile;
  o.filter = made_by_prepare;
  o.remove_root = m.created_dir;
  RemoveResult rr;
  try {
    rr = remove_tree(dir, o);
  } catch (const NotOwnedError& e) {
    throw DatasetError(e.what());
  }
  CleanResult r;
  r.files = rr.files;
  r.bytes = rr.bytes;
  r.dir_removed = rr.root_removed;
  r.left = std::move(rr.left);
  return r;
}

}  // namespace nodeprobe::io
