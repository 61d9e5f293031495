#pragma once
/// Staging memory for the loader's prefetch slots, pinned the way a
/// DataLoader with pin_memory=True pins it: cudaHostAlloc when a CUDA device
/// is usable (then batches really go to the GPU), else mlock, else plain
/// pages. The fallback and its cause are reported, never hidden.

#include <cstddef>
#include <cstdint>
#include <string>

namespace nodeprobe::io {

enum class PinMode { kAuto, kCuda, kMlock, kNone };
const char* to_string(PinMode m);

struct PinInfo {
  std::string kind;        ///< "cuda-host" | "mlock" | "none"
  std::string note;        ///< why this kind (the CUDA or mlock error when falling back)
  bool device = false;     ///< batches are copied to a GPU
  std::string device_name; ///< the GPU, when there is one
};

class Staging {
 public:
  /// `bytes` of staging; `device_bytes` is the GPU buffer for one batch
  /// (when a GPU is used). Throws InputError when `mode` demands pinning
  /// that cannot be had (kCuda without a GPU), ApiError when memory runs out.
  Staging(std::size_t bytes, std::size_t device_bytes, PinMode mode);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  std::uint8_t* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  const PinInfo& info() const { return info_; }

  /// Queues a host-to-device copy of `n` bytes into the device buffer at `offset`.
  void copy_to_device(const void* p, std::size_t n, std::size_t offset);
  /// Waits for the queued copies.
  void sync();

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t alloc_ = 0;  // bytes_ rounded up to whole huge pages when THP is usable
  PinInfo info_;
  void* cuda_ = nullptr;  // cuda::Copier when a GPU is used
  bool locked_ = false;
};

namespace cuda {
/// "" when a CUDA device can be used; else why not (no driver, no device,
/// driver older than the runtime, a build without CUDA). Sets `name`.
std::string unusable(std::string* name);
/// Page-locked host memory, or nullptr (with `why`).
void* host_alloc(std::size_t n, std::string* why);
void host_free(void* p);
/// A device buffer and a stream for H2D copies, or nullptr (with `why`).
void* copier_create(std::size_t device_bytes, std::string* why);
void copier_copy(void* c, const void* src, std::size_t n, std::size_t offset);
void copier_sync(void* c);
void copier_destroy(void* c);
}  // namespace cuda

}  // namespace nodeprobe::io
