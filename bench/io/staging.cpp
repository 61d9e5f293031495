#include "staging.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "io_format.h"

namespace nodeprobe::io {

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
  void* p = nullptr;
  // Staging of 2 MiB or more sits on huge pages where the kernel allows them
  // (THP "madvise" mode is common): every read copies into a different slot,
  // and with 4 KiB pages those copies miss the TLB; a reader reusing one
  // small buffer (fio) never does.
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t align = bytes >= kHuge ? kHuge : kDirectAlign;
  const int rc = ::posix_memalign(&p, align, bytes);
  if (rc != 0) NP_IO_FAIL("posix_memalign(" + std::to_string(bytes) + " bytes of staging)", rc);
  data_ = static_cast<std::uint8_t*>(p);
#ifdef MADV_HUGEPAGE
  if (align == kHuge) (void)::madvise(data_, bytes / kHuge * kHuge, MADV_HUGEPAGE);  // a hint: failure is fine
#endif
  // Touch every page now: first-touch faults must not land inside timed reads.
  std::memset(data_, 0, bytes);
  if (mode == PinMode::kNone) {
    info_ = {"none", "pinning not requested (--pin none)", false, ""};
    return;
  }
  if (::mlock(data_, bytes) == 0) {
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
  if (locked_) ::munlock(data_, bytes_);
  std::free(data_);
}

void Staging::copy_to_device(const void* p, std::size_t n, std::size_t offset) {
  if (cuda_) cuda::copier_copy(cuda_, p, n, offset);
}

void Staging::sync() {
  if (cuda_) cuda::copier_sync(cuda_);
}

}  // namespace nodeprobe::io
