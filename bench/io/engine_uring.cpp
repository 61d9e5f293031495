// io_uring engine: a whole batch in flight at once (queue depth = batch size),
// where pread has one read in flight per worker.
#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "engine.h"

namespace nodeprobe::io {
namespace {

constexpr unsigned kMaxDepth = 256;

class UringEngine final : public Engine {
 public:
  UringEngine(const Dataset& ds, bool direct, std::size_t depth)
      : ds_(ds), direct_(direct),
        depth_(static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(depth, kMaxDepth)))) {
    const int rc = io_uring_queue_init(depth_, &ring_, 0);
    if (rc < 0)
      throw MethodUnavailable(std::string("io_uring_queue_init: ") + std::strerror(-rc) + " (" +
                              errno_name(-rc) + ")");
    fds_.assign(depth_, -1);
    want_.assign(depth_, 0);
    off_.assign(depth_, 0);
  }
  ~UringEngine() override {
    close_fds();
    io_uring_queue_exit(&ring_);
  }
  UringEngine(const UringEngine&) = delete;
  UringEngine& operator=(const UringEngine&) = delete;

  void read(ReadSlot* s, std::size_t n) override {
    for (std::size_t at = 0; at < n; at += depth_) read_chunk(s + at, std::min<std::size_t>(depth_, n - at));
  }

 private:
  void close_fds() {
    for (int& fd : fds_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }

  void read_chunk(ReadSlot* s, std::size_t n) {
    const bool files = ds_.layout() == Layout::kFiles;
    // Open first, so a missing file leaves nothing half-submitted.
    for (std::size_t j = 0; j < n; ++j) {
      const IndexEntry& e = ds_.index().entries[s[j].sample];
      std::uint64_t start = e.offset;
      std::uint64_t end = e.offset + e.length;
      if (direct_) {
        start = align_down(start, kDirectAlign);
        end = align_up(end, kDirectAlign);
      }
      off_[j] = start;
      want_[j] = static_cast<std::size_t>(end - start);
      s[j].data = s[j].buf + (e.offset - start);
      s[j].got = 0;
      if (files) {
        char rel[64];
        fds_[j] = ::openat(ds_.dir_fd(), sample_path(s[j].sample, rel, sizeof rel),
                           O_RDONLY | O_CLOEXEC | (direct_ ? O_DIRECT : 0));
        if (fds_[j] < 0) {
          const int err = errno;
          close_fds();
          NP_IO_FAIL("open " + ds_.where(s[j].sample), err);
        }
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      const IndexEntry& e = ds_.index().entries[s[j].sample];
      const int fd = files ? fds_[j] : ds_.shard_fd(e.shard, direct_);
      io_uring_prep_read(sqe, fd, s[j].buf, static_cast<unsigned>(want_[j]), off_[j]);
      io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(static_cast<std::uintptr_t>(j)));
    }
    std::size_t submitted = 0;
    int first_err = 0;
    while (submitted < n) {
      const int rc = io_uring_submit(&ring_);
      if (rc <= 0) {
        first_err = rc < 0 ? -rc : EAGAIN;
        break;
      }
      submitted += static_cast<std::size_t>(rc);
    }
    std::size_t err_at = 0;
    // Reap what was submitted, even after an error: the buffers must be quiet before we return.
    for (std::size_t done = 0; done < submitted; ++done) {
      io_uring_cqe* cqe = nullptr;
      int w = io_uring_wait_cqe(&ring_, &cqe);
      while (w == -EINTR) w = io_uring_wait_cqe(&ring_, &cqe);
      if (w < 0) {
        first_err = -w;
        break;
      }
      const auto j = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(io_uring_cqe_get_data(cqe)));
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (res < 0) {
        if (first_err == 0) {
          first_err = -res;
          err_at = j;
        }
        continue;
      }
      std::size_t got = static_cast<std::size_t>(res);
      // A short read before end of file: finish it synchronously.
      while (got < want_[j] && res > 0) {
        const int fd = files ? fds_[j] : ds_.shard_fd(ds_.index().entries[s[j].sample].shard, direct_);
        const ssize_t r = ::pread(fd, s[j].buf + got, want_[j] - got, static_cast<off_t>(off_[j] + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
      }
      const std::size_t skip = static_cast<std::size_t>(s[j].data - s[j].buf);
      const std::size_t len = ds_.index().entries[s[j].sample].length;
      s[j].got = got > skip ? std::min(got - skip, len) : 0;
    }
    close_fds();
    if (first_err != 0) NP_IO_FAIL("io_uring read " + ds_.where(s[err_at].sample), first_err);
  }

  const Dataset& ds_;
  bool direct_;
  unsigned depth_;
  io_uring ring_{};
  std::vector<int> fds_;
  std::vector<std::size_t> want_;
  std::vector<std::uint64_t> off_;
};

}  // namespace

std::unique_ptr<Engine> make_uring_engine(const Dataset& ds, bool direct, std::size_t depth) {
  return std::make_unique<UringEngine>(ds, direct, depth);
}

std::string uring_unavailable() {
  io_uring ring{};
  const int rc = io_uring_queue_init(4, &ring, 0);
  if (rc < 0) return std::string("io_uring is not available here: ") + std::strerror(-rc) + " (" + errno_name(-rc) + ")";
  io_uring_queue_exit(&ring);
  return {};
}

}  // namespace nodeprobe::io
