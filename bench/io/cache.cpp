#include "cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace nodeprobe::io {
namespace {

// Calls fn(fd, name) for every file of the dataset (files: each sample; shards: each shard).
template <typename Fn>
void for_each_file(const Dataset& ds, std::size_t max_files, Fn fn) {
  if (ds.layout() == Layout::kShards) {
    const auto k = static_cast<std::uint32_t>(ds.index().shard_sizes.size());
    const std::uint32_t step = max_files && k > max_files ? k / static_cast<std::uint32_t>(max_files) : 1;
    for (std::uint32_t i = 0; i < k; i += step) fn(ds.shard_fd(i, false), shard_path(i));
    return;
  }
  const std::uint32_t n = ds.samples();
  const std::uint32_t step = max_files && n > max_files ? n / static_cast<std::uint32_t>(max_files) : 1;
  char rel[64];
  for (std::uint32_t i = 0; i < n; i += step) {
    const int fd = ::openat(ds.dir_fd(), sample_path(i, rel, sizeof rel), O_RDONLY | O_CLOEXEC);
    if (fd < 0) NP_IO_FAIL("open " + ds.where(i), errno);
    try {
      fn(fd, std::string(rel));
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
}

std::string unescape(const std::string& s) {  // mountinfo writes ' ' as \040 etc.
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string oct = s.substr(i + 1, 3);
      if (oct.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::strtol(oct.c_str(), nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

const char* to_string(CacheMode m) {
  switch (m) {
    case CacheMode::kWarm: return "warm";
    case CacheMode::kCold: return "cold";
    case CacheMode::kAsIs: return "as-is";
  }
  return "unknown";
}

void evict(const Dataset& ds) {
  for_each_file(ds, 0, [&](int fd, const std::string& name) {
    const int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (rc != 0) NP_IO_FAIL("posix_fadvise(DONTNEED) " + ds.dir() + "/" + name, rc);
  });
}

void drop_caches() {
  if (::geteuid() != 0) throw InputError("--drop-caches needs root (use --cold alone: posix_fadvise needs no privileges)");
  ::sync();
  const int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) NP_IO_FAIL("open /proc/sys/vm/drop_caches", errno);
  const ssize_t n = ::write(fd, "1\n", 2);
  const int err = errno;
  ::close(fd);
  if (n != 2) NP_IO_FAIL("write /proc/sys/vm/drop_caches", n < 0 ? err : EIO);
}

void prewarm(const Dataset& ds) {
  std::vector<char> buf(1u << 20);
  for_each_file(ds, 0, [&](int fd, const std::string& name) {
    for (off_t off = 0;;) {
      const ssize_t n = ::pread(fd, buf.data(), buf.size(), off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) NP_IO_FAIL("read " + ds.dir() + "/" + name, errno);
      if (n == 0) break;
      off += n;
    }
  });
}

double resident_fraction(const Dataset& ds, std::size_t max_files) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t total = 0, resident = 0;
  std::vector<unsigned char> vec;
  for_each_file(ds, max_files, [&](int fd, const std::string&) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size == 0) return;
    const auto size = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return;
    vec.resize((size + page - 1) / page);
    if (::mincore(map, size, vec.data()) == 0) {
      total += vec.size();
      for (unsigned char v : vec) resident += v & 1U;
    }
    ::munmap(map, size);
  });
  return total == 0 ? 0.0 : static_cast<double>(resident) / static_cast<double>(total);
}

MountInfo mount_from_text(const std::string& text, const std::string& real_path) {
  MountInfo best;
  std::size_t best_len = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    // id parent maj:min root mount_point options [optional...] - fstype source super_options
    const auto f = split_ws(line);
    std::size_t sep = 6;
    while (sep < f.size() && f[sep] != "-") ++sep;
    if (f.size() < 5 || sep + 2 >= f.size()) continue;
    const std::string mp = unescape(f[4]);
    const bool prefix = real_path == mp || mp == "/" ||
                        (real_path.compare(0, mp.size(), mp) == 0 && real_path.size() > mp.size() &&
                         real_path[mp.size()] == '/');
    // Later lines win on ties: they are mounted over the earlier ones.
    if (!prefix || mp.size() < best_len) continue;
    best_len = mp.size();
    best.mount_point = mp;
    best.fs_type = f[sep + 1];
    best.source = unescape(f[sep + 2]);
    best.options = f[5] + (sep + 3 < f.size() ? "," + f[sep + 3] : "");
  }
  return best;
}

MountInfo mount_of(const FsRoot& fs, const std::string& path) {
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real)) return {};
  const auto text = fs.read("/proc/self/mountinfo");
  return text ? mount_from_text(*text, real) : MountInfo{};
}

bool memory_backed(const std::string& t) { return t == "tmpfs" || t == "ramfs" || t == "devtmpfs"; }

}  // namespace nodeprobe::io
