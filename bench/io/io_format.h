#pragma once
/// On-disk format of nodeprobe-io datasets: sample records, the index
/// (offset table) and the marker file. Pure functions, no IO, so the unit
/// tests cover every byte.
///
/// Every sample, whether a file of its own or a record inside a shard, is one
/// length-prefixed record:
///   u64 length (whole record) | u64 id | u32 magic "NPS1" | u32 check | payload | u64 tail
/// The payload is incompressible random data; `check` and `tail` let a reader
/// prove it got the right sample, complete, without hashing the payload.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nodeprobe/error.h"

namespace nodeprobe::io {

inline constexpr std::uint32_t kSampleMagic = 0x3153504EU;  // "NPS1" little-endian
inline constexpr std::size_t kSampleHeaderBytes = 24;
inline constexpr std::size_t kSampleTailBytes = 8;
/// Smallest sample prepare writes (header + tail + some payload).
inline constexpr std::size_t kMinSampleBytes = 64;
/// Largest sample (the index stores u32 lengths).
inline constexpr std::uint64_t kMaxSampleBytes = 1ULL << 31;
/// O_DIRECT alignment used for offsets, lengths and buffers (covers 512 B and 4 KiB devices).
inline constexpr std::size_t kDirectAlign = 4096;

inline constexpr const char* kMarkerFile = ".nodeprobe-io";
inline constexpr const char* kIndexFile = "index.bin";
inline constexpr const char* kSamplesDir = "samples";
/// Files per subdirectory of the files layout (ImageNet has ~1300 per class).
inline constexpr std::uint32_t kFilesPerDir = 1000;

enum class Layout { kFiles, kShards };
const char* to_string(Layout l);

/// A dataset that cannot be used (missing, foreign, incomplete, corrupt).
/// It is bad input: exit code 2 with a one-line reason.
class DatasetError : public InputError {
 public:
  using InputError::InputError;
};

/// A read method this host, filesystem or build cannot use (O_DIRECT on a
/// filesystem without it, io_uring disabled): the run is skipped, not failed.
class MethodUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws ApiError (api "posix") for a call described at run time ("open /d/x"),
/// with the errno name and text; the message says which file.
[[noreturn]] void throw_posix(const std::string& call, int err, const char* file, int line);
#define NP_IO_FAIL(call_text, err) ::nodeprobe::io::throw_posix((call_text), (err), __FILE__, __LINE__)

/// splitmix64 finaliser: a cheap, well-mixed 64-bit hash.
std::uint64_t mix64(std::uint64_t x);

/// Writes header and tail of sample `id` into a `length`-byte record (payload untouched).
void stamp_sample(std::uint8_t* rec, std::uint64_t length, std::uint64_t id);
/// Fills a whole record of sample `id`: random payload from `seed`, then stamps it.
void fill_sample(std::uint8_t* rec, std::uint64_t length, std::uint64_t id, std::uint64_t seed);

enum class SampleCheck { kOk, kShort, kBadMagic, kBadLength, kBadId, kBadCheck, kBadTail };
/// Verifies that `got` bytes at `rec` are the complete record of sample `id`
/// with `length` bytes. Reads only the header and the tail.
SampleCheck check_sample(const std::uint8_t* rec, std::size_t got, std::uint64_t length,
                         std::uint64_t id);
/// "tail does not match (record truncated or overwritten)" etc.
const char* describe(SampleCheck c);

/// One entry of the offset table.
struct IndexEntry {
  std::uint64_t offset = 0;  ///< byte offset in its shard (0 for the files layout)
  std::uint32_t length = 0;  ///< record bytes
  std::uint32_t shard = 0;   ///< shard number (0 for the files layout)
};

struct Index {
  Layout layout = Layout::kFiles;
  std::uint32_t align = 1;                 ///< record alignment inside shards
  std::vector<IndexEntry> entries;         ///< one per sample, id = position
  std::vector<std::uint64_t> shard_sizes;  ///< bytes of each shard file (empty for files)
};

/// Serialises: 32-byte header ("NPIOIDX1", version, layout, samples, shards,
/// align), 16 bytes per entry, 8 per shard size, then an FNV-1a 64 checksum.
std::string encode_index(const Index& idx);
/// Parses and validates (magic, version, sizes, checksum, offsets inside their
/// shard, no overlap). Throws DatasetError naming `origin`.
Index decode_index(const std::string& bytes, const std::string& origin);

/// Relative path of sample `id` in the files layout ("samples/0012/00012345.bin").
/// Writes into `buf` (at least 32 bytes) without allocating; returns buf.
const char* sample_path(std::uint32_t id, char* buf, std::size_t n);
/// Relative path of shard `k` ("shard-00003.rec").
std::string shard_path(std::uint32_t k);

/// What the marker file says about a dataset.
struct Marker {
  std::string state;  ///< "writing" while prepare runs, "complete" afterwards
  Layout layout = Layout::kFiles;
  std::uint64_t samples = 0;
  std::uint32_t shards = 0;
  std::uint64_t size_mean = 0;
  double size_spread_pct = 0;
  std::uint32_t align = 1;
  std::uint64_t seed = 0;
  std::uint64_t bytes = 0;    ///< record bytes of the whole dataset
  bool created_dir = false;   ///< prepare created the directory (clean may remove it)
  std::string created;        ///< ISO 8601 UTC
  std::string host;
  long pid = 0;
};

std::string encode_marker(const Marker& m);
/// Throws DatasetError when the text is not a nodeprobe-io marker.
Marker decode_marker(const std::string& text, const std::string& origin);

/// Record length of sample `id`: uniform in mean x (1 +- spread), at least
/// kMinSampleBytes, rounded up to `align` when align > 1. Deterministic in seed.
std::uint64_t sample_length(std::uint64_t id, std::uint64_t mean, double spread_pct,
                            std::uint64_t seed, std::uint32_t align);

inline std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
inline std::uint64_t align_down(std::uint64_t v, std::uint64_t a) { return v / a * a; }

}  // namespace nodeprobe::io
