#pragma once
/// Read engines (after fio's ioengines.h, ideas only): a small hook table
/// that reads a batch of samples into staging buffers. One engine per worker
/// thread. The null engine does no IO, so CI can drive the whole pipeline
/// and the loader's own overhead can be measured.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dataset.h"

namespace nodeprobe::io {

enum class Method { kPread, kDirect, kMmap, kUring, kUringDirect, kNull };

/// "pread", "direct", "mmap", "uring", "uring-direct", "null".
const char* to_string(Method m);
std::optional<Method> method_from_string(std::string_view s);
/// Every method name, for help texts.
const char* method_names();
inline bool is_direct(Method m) { return m == Method::kDirect || m == Method::kUringDirect; }

/// One sample of a batch: which sample, where to put it, and (out) where its
/// bytes start in `buf` (O_DIRECT reads of unaligned records start earlier).
struct ReadSlot {
  std::uint32_t sample = 0;
  std::uint8_t* buf = nullptr;       ///< kDirectAlign-aligned
  std::size_t cap = 0;               ///< bytes available at buf
  const std::uint8_t* data = nullptr;  ///< out: the record
  std::size_t got = 0;               ///< out: record bytes read
};

class Engine {
 public:
  virtual ~Engine() = default;
  /// Reads every slot's sample. Throws ApiError naming the file on IO
  /// errors; a short read is reported through `got`, not thrown.
  virtual void read(ReadSlot* slots, std::size_t n) = 0;
};

/// Staging bytes one sample needs for any method (record + O_DIRECT slack).
std::size_t slot_capacity(std::uint64_t max_record);

/// "" when `m` works in this build, on this kernel and on this dataset's
/// filesystem; otherwise why not. Tries the real thing (an O_DIRECT open, an
/// io_uring instance) once. May open the dataset's O_DIRECT descriptors.
std::string method_unavailable(Method m, Dataset& ds);

/// An engine for one worker; `depth` is the most reads it has in flight
/// (io_uring queue depth; the batch size). Throws MethodUnavailable.
std::unique_ptr<Engine> make_engine(Method m, const Dataset& ds, std::size_t depth);

/// io_uring engine (engine_uring.cpp, only when liburing is present).
std::unique_ptr<Engine> make_uring_engine(const Dataset& ds, bool direct, std::size_t depth);
/// "" when io_uring can be set up here; else why not.
std::string uring_unavailable();

}  // namespace nodeprobe::io
