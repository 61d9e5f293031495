#include "dataset.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nodeprobe/input.h"

namespace nodeprobe::io {
namespace {

// The marker and the index: typed and bounded like every input (a FIFO or a
// link planted in a dataset directory is refused, not waited on or followed).
std::string read_small_file(int dir_fd, const std::string& dir, const char* name) {
  InputLimits limits = input_limits(InputKind::kConfig);
  limits.max_bytes = 1ULL << 30;  // an index of tens of millions of samples
  try {
    return InputFile::open_beneath(dir_fd, name, limits, dir + "/" + name).read_all();
  } catch (const InputError& e) {
    throw DatasetError(e.what());
  }
}

}  // namespace

DirState dir_state(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return DirState::kMissing;
    NP_IO_FAIL("stat " + dir, errno);
  }
  if (!S_ISDIR(st.st_mode)) return DirState::kNotDir;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) NP_IO_FAIL("opendir " + dir, errno);
  bool empty = true, marker = false;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    empty = false;
    if (name == kMarkerFile) marker = true;
  }
  ::closedir(d);
  if (empty) return DirState::kEmpty;
  return marker ? DirState::kOurs : DirState::kForeign;
}

Marker read_marker(const std::string& dir) {
  const std::string path = dir + "/" + kMarkerFile;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw DatasetError(dir + ": " + std::strerror(errno));
  try {
    Marker m = decode_marker(read_small_file(fd, dir, kMarkerFile), path);
    ::close(fd);
    return m;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

Dataset::Dataset(const std::string& dir) : dir_(dir) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  switch (dir_state(dir_)) {
    case DirState::kMissing: throw DatasetError(dir_ + ": no such directory");
    case DirState::kNotDir: throw DatasetError(dir_ + ": not a directory");
    case DirState::kEmpty:
      throw DatasetError(dir_ + ": empty directory, no dataset (run `nodeprobe-io prepare --dir " +
                         dir_ + "` first)");
    case DirState::kForeign:
      throw DatasetError(dir_ + ": not a nodeprobe-io dataset (no " + kMarkerFile +
                         " marker); refusing to read it");
    case DirState::kOurs: break;
  }
  marker_ = read_marker(dir_);
  if (marker_.state != "complete")
    throw DatasetError(dir_ + ": dataset incomplete (state '" + marker_.state +
                       "': prepare did not finish); run `nodeprobe-io clean --dir " + dir_ +
                       "` and prepare again");
  dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) throw DatasetError(dir_ + ": " + std::strerror(errno));
  try {
    index_ = decode_index(read_small_file(dir_fd_, dir_, kIndexFile), dir_ + "/" + kIndexFile);
    if (index_.entries.size() != marker_.samples || index_.layout != marker_.layout ||
        index_.shard_sizes.size() != (marker_.layout == Layout::kShards ? marker_.shards : 0U))
      throw DatasetError(dir_ + ": index and marker disagree (" +
                         std::to_string(index_.entries.size()) + " vs " +
                         std::to_string(marker_.samples) + " samples); run clean and prepare again");
    if (index_.entries.empty()) throw DatasetError(dir_ + ": dataset has no samples");
    for (const auto& e : index_.entries) {
      max_length_ = std::max<std::uint64_t>(max_length_, e.length);
      total_bytes_ += e.length;
    }
    for (std::uint32_t k = 0; k < index_.shard_sizes.size(); ++k) {
      const std::string name = shard_path(k);
      const int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw DatasetError(dir_ + "/" + name + ": " + std::strerror(errno));
      shard_fds_.push_back(fd);
      struct stat st {};
      NP_CHECK_ERRNO(::fstat(fd, &st));
      const auto size = static_cast<std::uint64_t>(st.st_size);
      if (size != index_.shard_sizes[k])
        throw DatasetError(dir_ + "/" + name + ": " +
                           (size < index_.shard_sizes[k] ? "truncated" : "longer than indexed") +
                           ": " + std::to_string(size) + " bytes, the index expects " +
                           std::to_string(index_.shard_sizes[k]));
    }
  } catch (...) {
    for (int fd : shard_fds_) ::close(fd);
    ::close(dir_fd_);
    throw;
  }
}

Dataset::~Dataset() {
  for (int fd : shard_fds_) NP_CHECK_ERRNO_NOTHROW(::close(fd));
  for (int fd : direct_fds_) NP_CHECK_ERRNO_NOTHROW(::close(fd));
  if (dir_fd_ >= 0) NP_CHECK_ERRNO_NOTHROW(::close(dir_fd_));
}

void Dataset::open_direct() {
  if (!direct_fds_.empty() || layout() != Layout::kShards) return;
  for (std::uint32_t k = 0; k < index_.shard_sizes.size(); ++k) {
    const std::string name = shard_path(k);
    const int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (fd < 0) {
      const int err = errno;
      if (err == EINVAL)
        throw MethodUnavailable(dir_ + ": the filesystem does not support O_DIRECT (open " + name +
                                ": EINVAL)");
      NP_IO_FAIL("open(O_DIRECT) " + dir_ + "/" + name, err);
    }
    direct_fds_.push_back(fd);
  }
}

std::string Dataset::where(std::uint32_t id) const {
  if (layout() == Layout::kFiles) {
    char buf[64];
    return dir_ + "/" + sample_path(id, buf, sizeof buf);
  }
  const auto& e = index_.entries[id];
  return dir_ + "/" + shard_path(e.shard) + " @" + std::to_string(e.offset);
}

}  // namespace nodeprobe::io
