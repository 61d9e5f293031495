#include "staging.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "io_format.h"
#include "nodeprobe/fs_root.h"

namespace nodeprobe::io {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

// THP usable by madvise: the active mode is "always" or "madvise".
bool thp_allowed() {
#ifdef MADV_HUGEPAGE
  static const bool allowed = [] {
    const auto v = FsRoot().read_line("/sys/kernel/mm/transparent_hugepage/enabled");
    if (!v) return false;
    const std::string mode = selected_word(*v);
    return mode == "always" || mode == "madvise";
  }();
  return allowed;
#else
  return false;
#endif
}

}  // namespace

const char* to_string(PinMode m) {
  switch (m) {
    case PinMode::kAuto: return "auto";
    case PinMode::kCuda: return "cuda";
    case PinMode::kMlock: return "mlock";
    case PinMode::kNone: return "none";
  }
  return "unknown";
}

Staging::Staging(std::size_t bytes, std::size_t device_bytes, PinMode mode) : bytes_(bytes) {
  std::string why_not_cuda;
  if (mode == PinMode::kAuto || mode == PinMode::kCuda) {
    std::string name;
    why_not_cuda = cuda::unusable(&name);
    if (why_not_cuda.empty()) {
      data_ = static_cast<std::uint8_t*>(cuda::host_alloc(bytes, &why_not_cuda));
      if (data_) {
        cuda_ = cuda::copier_create(device_bytes, &why_not_cuda);
        if (!cuda_) {
          cuda::host_free(data_);
          data_ = nullptr;
        }
      }
    }
    if (data_) {
      info_ = {"cuda-host", "cudaHostAlloc; batches are copied to " + name, true, name};
      return;
    }
    if (mode == PinMode::kCuda) throw InputError("--pin cuda: " + why_not_cuda);
  }
  // Staging sits on transparent huge pages where the kernel allows them (THP
  // "madvise" mode is common), whatever its size: the allocation is rounded
  // up to whole 2 MiB pages (at most 2 MiB more than asked). Every read copies
  // into a different slot; on 4 KiB pages those copies miss the TLB, and an
  // O_DIRECT read of 128 KiB becomes 32 DMA segments instead of one (on the
  // development VM's virtio disk fio itself reads ~40 % slower cold with 4 KiB
  // than with huge-page buffers: bench/io/compare_fio.sh). fio rereads one
  // small buffer per job, whose pages stay in the TLB.
  alloc_ = bytes;
  std::size_t align = kDirectAlign;
  const bool huge = thp_allowed();
  if (huge) {
    align = kHugePage;
    alloc_ = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  }
  void* p = nullptr;
  const int rc = ::posix_memalign(&p, align, alloc_);
  if (rc != 0) NP_IO_FAIL("posix_memalign(" + std::to_string(alloc_) + " bytes of staging)", rc);
  data_ = static_cast<std::uint8_t*>(p);
#ifdef MADV_HUGEPAGE
  if (huge) (void)::madvise(data_, alloc_, MADV_HUGEPAGE);  // a hint: failure is fine
#endif
  // Touch every page now: first-touch faults must not land inside timed reads.
  std::memset(data_, 0, alloc_);
  if (mode == PinMode::kNone) {
    info_ = {"none", "pinning not requested (--pin none)", false, ""};
    return;
  }
  if (::mlock(data_, alloc_) == 0) {
    locked_ = true;
    info_ = {"mlock", why_not_cuda.empty() ? "mlock requested" : "mlock, since CUDA is not usable: " + why_not_cuda,
             false, ""};
    return;
  }
  const int err = errno;
  const std::string mlock_why = std::string("mlock failed: ") + std::strerror(err) + " (" + errno_name(err) +
                                "; raise memlock: ulimit -l unlimited)";
  if (mode == PinMode::kMlock) {
    std::free(data_);
    throw InputError("--pin mlock: " + mlock_why);
  }
  info_ = {"none", (why_not_cuda.empty() ? "" : "CUDA not usable: " + why_not_cuda + "; ") + mlock_why, false, ""};
}

Staging::~Staging() {
  if (cuda_) {
    cuda::copier_destroy(cuda_);
    cuda::host_free(data_);
    return;
  }
  if (locked_) ::munlock(data_, alloc_);
  std::free(data_);
}

void Staging::copy_to_device(const void* p, std::size_t n, std::size_t offset) {
  if (cuda_) cuda::copier_copy(cuda_, p, n, offset);
}

void Staging::sync() {
  if (cuda_) cuda::copier_sync(cuda_);
}

}  // namespace nodeprobe::io
