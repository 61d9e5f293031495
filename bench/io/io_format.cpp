#include "io_format.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

namespace nodeprobe::io {
namespace {

constexpr char kIndexMagic[8] = {'N', 'P', 'I', 'O', 'I', 'D', 'X', '1'};
constexpr std::uint32_t kIndexVersion = 1;
constexpr std::size_t kIndexHeaderBytes = 32;
constexpr std::size_t kIndexEntryBytes = 16;
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
constexpr int kMarkerFormat = 1;

// Little-endian field access; the format is defined little-endian on every host.
void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::uint32_t header_check(std::uint64_t length, std::uint64_t id) {
  return static_cast<std::uint32_t>(mix64(length ^ mix64(id ^ kSampleMagic)));
}
std::uint64_t tail_value(std::uint64_t length, std::uint64_t id) {
  return mix64(id * kGolden ^ length ^ 0x7461696C00000000ULL);
}

std::uint64_t fnv1a(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ULL;
  return h;
}

// xoshiro256**: fast, statistically strong; payload bytes are incompressible.
struct Xoshiro {
  std::uint64_t s[4];
  explicit Xoshiro(std::uint64_t seed) {
    for (auto& v : s) v = seed = mix64(seed + kGolden);
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
  }
};

[[noreturn]] void bad_index(const std::string& origin, const std::string& why) {
  throw DatasetError(origin + ": corrupt index: " + why + " (run `nodeprobe-io clean` and prepare again)");
}

}  // namespace

void throw_posix(const std::string& call, int err, const char* file, int line) {
  throw_api_error("posix", err, errno_name(err), std::strerror(err), call.c_str(), file, line);
}

const char* to_string(Layout l) { return l == Layout::kFiles ? "files" : "shards"; }

std::uint64_t mix64(std::uint64_t x) {
  x += kGolden;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

void stamp_sample(std::uint8_t* rec, std::uint64_t length, std::uint64_t id) {
  put_u64(rec, length);
  put_u64(rec + 8, id);
  put_u32(rec + 16, kSampleMagic);
  put_u32(rec + 20, header_check(length, id));
  put_u64(rec + length - kSampleTailBytes, tail_value(length, id));
}

void fill_sample(std::uint8_t* rec, std::uint64_t length, std::uint64_t id, std::uint64_t seed) {
  Xoshiro rng(mix64(seed ^ (id * kGolden)));
  std::uint64_t i = 0;
  for (; i + 8 <= length; i += 8) {
    const std::uint64_t v = rng.next();
    std::memcpy(rec + i, &v, 8);
  }
  if (i < length) {
    const std::uint64_t v = rng.next();
    std::memcpy(rec + i, &v, static_cast<std::size_t>(length - i));
  }
  stamp_sample(rec, length, id);
}

SampleCheck check_sample(const std::uint8_t* rec, std::size_t got, std::uint64_t length,
                         std::uint64_t id) {
  if (got < length || length < kSampleHeaderBytes + kSampleTailBytes) return SampleCheck::kShort;
  if (get_u32(rec + 16) != kSampleMagic) return SampleCheck::kBadMagic;
  if (get_u64(rec) != length) return SampleCheck::kBadLength;
  if (get_u64(rec + 8) != id) return SampleCheck::kBadId;
  if (get_u32(rec + 20) != header_check(length, id)) return SampleCheck::kBadCheck;
  if (get_u64(rec + length - kSampleTailBytes) != tail_value(length, id)) return SampleCheck::kBadTail;
  return SampleCheck::kOk;
}

const char* describe(SampleCheck c) {
  switch (c) {
    case SampleCheck::kOk: return "ok";
    case SampleCheck::kShort: return "short read (record truncated)";
    case SampleCheck::kBadMagic: return "no record header (not a nodeprobe-io sample, or wrong offset)";
    case SampleCheck::kBadLength: return "record length differs from the index";
    case SampleCheck::kBadId: return "another sample's record (wrong offset or file)";
    case SampleCheck::kBadCheck: return "header check value wrong (record overwritten)";
    case SampleCheck::kBadTail: return "tail does not match (record truncated or overwritten)";
  }
  return "unknown";
}

std::string encode_index(const Index& idx) {
  const std::size_t n = idx.entries.size(), k = idx.shard_sizes.size();
  std::string out(kIndexHeaderBytes + n * kIndexEntryBytes + k * 8 + 8, '\0');
  auto* p = reinterpret_cast<std::uint8_t*>(out.data());
  std::memcpy(p, kIndexMagic, 8);
  put_u32(p + 8, kIndexVersion);
  put_u32(p + 12, idx.layout == Layout::kFiles ? 0U : 1U);
  put_u64(p + 16, n);
  put_u32(p + 24, static_cast<std::uint32_t>(k));
  put_u32(p + 28, idx.align);
  std::uint8_t* e = p + kIndexHeaderBytes;
  for (const auto& en : idx.entries) {
    put_u64(e, en.offset);
    put_u32(e + 8, en.length);
    put_u32(e + 12, en.shard);
    e += kIndexEntryBytes;
  }
  for (std::uint64_t s : idx.shard_sizes) {
    put_u64(e, s);
    e += 8;
  }
  put_u64(e, fnv1a(p, static_cast<std::size_t>(e - p)));
  return out;
}

Index decode_index(const std::string& bytes, const std::string& origin) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  if (bytes.size() < kIndexHeaderBytes + 8) bad_index(origin, "file too short");
  if (std::memcmp(p, kIndexMagic, 8) != 0) bad_index(origin, "bad magic");
  if (get_u32(p + 8) != kIndexVersion)
    bad_index(origin, "version " + std::to_string(get_u32(p + 8)) + " (this build reads 1)");
  Index idx;
  const std::uint32_t layout = get_u32(p + 12);
  if (layout > 1) bad_index(origin, "unknown layout " + std::to_string(layout));
  idx.layout = layout == 0 ? Layout::kFiles : Layout::kShards;
  const std::uint64_t n = get_u64(p + 16);
  const std::uint32_t k = get_u32(p + 24);
  idx.align = get_u32(p + 28);
  const std::uint64_t want = kIndexHeaderBytes + n * kIndexEntryBytes + std::uint64_t{k} * 8 + 8;
  if (n > (1ULL << 32) || want != bytes.size())
    bad_index(origin, "size " + std::to_string(bytes.size()) + " bytes does not match " +
                          std::to_string(n) + " samples and " + std::to_string(k) + " shards");
  const std::size_t body = bytes.size() - 8;
  if (fnv1a(p, body) != get_u64(p + body)) bad_index(origin, "checksum mismatch");
  if (idx.align == 0) bad_index(origin, "alignment 0");
  if (idx.layout == Layout::kShards && k == 0 && n > 0) bad_index(origin, "shards layout without shards");
  idx.entries.resize(static_cast<std::size_t>(n));
  const std::uint8_t* e = p + kIndexHeaderBytes;
  for (auto& en : idx.entries) {
    en.offset = get_u64(e);
    en.length = get_u32(e + 8);
    en.shard = get_u32(e + 12);
    e += kIndexEntryBytes;
  }
  idx.shard_sizes.resize(k);
  for (auto& s : idx.shard_sizes) {
    s = get_u64(e);
    e += 8;
  }
  // Records of a shard are written in id order: they must lie inside it, in order.
  std::vector<std::uint64_t> end_of(k, 0);
  for (std::size_t i = 0; i < idx.entries.size(); ++i) {
    const auto& en = idx.entries[i];
    const std::string at = "sample " + std::to_string(i);
    if (en.length < kSampleHeaderBytes + kSampleTailBytes) bad_index(origin, at + ": length too small");
    if (idx.layout == Layout::kFiles) {
      if (en.offset != 0 || en.shard != 0) bad_index(origin, at + ": offset in a files layout");
      continue;
    }
    if (en.shard >= k) bad_index(origin, at + ": shard " + std::to_string(en.shard) + " out of range");
    if (en.offset < end_of[en.shard]) bad_index(origin, at + ": overlaps the previous record");
    end_of[en.shard] = en.offset + en.length;
    if (end_of[en.shard] > idx.shard_sizes[en.shard])
      bad_index(origin, at + ": ends past its shard (" + std::to_string(idx.shard_sizes[en.shard]) +
                            " bytes)");
  }
  return idx;
}

const char* sample_path(std::uint32_t id, char* buf, std::size_t n) {
  std::snprintf(buf, n, "%s/%04u/%08u.bin", kSamplesDir, id / kFilesPerDir, id);
  return buf;
}

std::string shard_path(std::uint32_t k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "shard-%05u.rec", k);
  return buf;
}

std::string encode_marker(const Marker& m) {
  nlohmann::ordered_json j{{"tool", "nodeprobe-io"},
                           {"format", kMarkerFormat},
                           {"state", m.state},
                           {"layout", to_string(m.layout)},
                           {"samples", m.samples},
                           {"shards", m.shards},
                           {"size_mean", m.size_mean},
                           {"size_spread_pct", m.size_spread_pct},
                           {"align", m.align},
                           {"seed", m.seed},
                           {"bytes", m.bytes},
                           {"created_dir", m.created_dir},
                           {"created", m.created},
                           {"host", m.host},
                           {"pid", m.pid}};
  return j.dump(2) + "\n";
}

Marker decode_marker(const std::string& text, const std::string& origin) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("tool", "") != "nodeprobe-io")
    throw DatasetError(origin + ": not a nodeprobe-io marker");
  if (j.value("format", 0) != kMarkerFormat)
    throw DatasetError(origin + ": marker format " + std::to_string(j.value("format", 0)) +
                       " (this build reads " + std::to_string(kMarkerFormat) + ")");
  try {
    Marker m;
    m.state = j.at("state").get<std::string>();
    const std::string layout = j.at("layout").get<std::string>();
    if (layout != "files" && layout != "shards")
      throw DatasetError(origin + ": unknown layout '" + layout + "'");
    m.layout = layout == "files" ? Layout::kFiles : Layout::kShards;
    m.samples = j.at("samples").get<std::uint64_t>();
    m.shards = j.at("shards").get<std::uint32_t>();
    m.size_mean = j.at("size_mean").get<std::uint64_t>();
    m.size_spread_pct = j.at("size_spread_pct").get<double>();
    m.align = j.at("align").get<std::uint32_t>();
    m.seed = j.at("seed").get<std::uint64_t>();
    m.bytes = j.at("bytes").get<std::uint64_t>();
    m.created_dir = j.at("created_dir").get<bool>();
    m.created = j.value("created", "");
    m.host = j.value("host", "");
    m.pid = j.value("pid", 0L);
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw DatasetError(origin + ": malformed marker: " + e.what());
  }
}

std::uint64_t sample_length(std::uint64_t id, std::uint64_t mean, double spread_pct,
                            std::uint64_t seed, std::uint32_t align) {
  const double p = spread_pct / 100.0;
  // 53 random bits -> u in [0, 1).
  const double u = static_cast<double>(mix64(seed * kGolden ^ id ^ 0x73697A65ULL) >> 11) * 0x1.0p-53;
  double len = static_cast<double>(mean) * (1.0 + p * (2.0 * u - 1.0));
  if (len < static_cast<double>(kMinSampleBytes)) len = static_cast<double>(kMinSampleBytes);
  std::uint64_t out = static_cast<std::uint64_t>(std::llround(len));
  if (align > 1) out = align_up(out, align);
  return out;
}

}  // namespace nodeprobe::io
