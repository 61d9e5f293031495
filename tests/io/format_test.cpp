#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "io_format.h"

namespace nodeprobe::io {
namespace {

std::vector<std::uint8_t> record(std::uint64_t len, std::uint64_t id, std::uint64_t seed = 7) {
  std::vector<std::uint8_t> r(len);
  fill_sample(r.data(), len, id, seed);
  return r;
}

TEST(IoSampleRecord, RoundTrip) {
  for (std::uint64_t len : {64ULL, 100ULL, 110000ULL}) {
    const auto r = record(len, 42);
    EXPECT_EQ(check_sample(r.data(), r.size(), len, 42), SampleCheck::kOk) << len;
  }
}

TEST(IoSampleRecord, DetectsEveryKindOfWrongRecord) {
  auto r = record(4096, 5);
  EXPECT_EQ(check_sample(r.data(), 4095, 4096, 5), SampleCheck::kShort);
  EXPECT_EQ(check_sample(r.data(), r.size(), 4096, 6), SampleCheck::kBadId);
  EXPECT_EQ(check_sample(r.data(), r.size(), 4000, 5), SampleCheck::kBadLength);
  auto bad_magic = r;
  bad_magic[17] ^= 1;
  EXPECT_EQ(check_sample(bad_magic.data(), r.size(), 4096, 5), SampleCheck::kBadMagic);
  auto bad_check = r;
  bad_check[21] ^= 1;
  EXPECT_EQ(check_sample(bad_check.data(), r.size(), 4096, 5), SampleCheck::kBadCheck);
  auto bad_tail = r;
  bad_tail[4090] ^= 1;
  EXPECT_EQ(check_sample(bad_tail.data(), r.size(), 4096, 5), SampleCheck::kBadTail);
  // Another sample's record at the expected place.
  const auto other = record(4096, 9);
  EXPECT_EQ(check_sample(other.data(), other.size(), 4096, 5), SampleCheck::kBadId);
}

TEST(IoSampleRecord, PayloadIsIncompressibleAndSeeded) {
  const auto a = record(1 << 16, 1, 7), b = record(1 << 16, 1, 8), c = record(1 << 16, 1, 7);
  EXPECT_EQ(a, c);
  EXPECT_NE(a, b);
  // Byte histogram of random data: every value appears, none dominates.
  std::vector<int> hist(256, 0);
  for (std::size_t i = kSampleHeaderBytes; i < a.size() - kSampleTailBytes; ++i) ++hist[a[i]];
  for (int h : hist) {
    EXPECT_GT(h, 150);
    EXPECT_LT(h, 380);
  }
}

Index sample_index() {
  Index idx;
  idx.layout = Layout::kShards;
  idx.align = 1;
  idx.entries = {{0, 100, 0}, {100, 200, 0}, {0, 300, 1}};
  idx.shard_sizes = {300, 300};
  return idx;
}

TEST(IoIndexFormat, RoundTrip) {
  const Index idx = sample_index();
  const Index back = decode_index(encode_index(idx), "t");
  EXPECT_EQ(back.layout, Layout::kShards);
  ASSERT_EQ(back.entries.size(), 3u);
  EXPECT_EQ(back.entries[1].offset, 100u);
  EXPECT_EQ(back.entries[1].length, 200u);
  EXPECT_EQ(back.entries[2].shard, 1u);
  EXPECT_EQ(back.shard_sizes, idx.shard_sizes);
  // Exact size: 32 header + 16 per entry + 8 per shard + 8 checksum.
  EXPECT_EQ(encode_index(idx).size(), 32u + 3 * 16 + 2 * 8 + 8);
}

TEST(IoIndexFormat, FilesLayoutRoundTrip) {
  Index idx;
  idx.entries = {{0, 64, 0}, {0, 128, 0}};
  const Index back = decode_index(encode_index(idx), "t");
  EXPECT_EQ(back.layout, Layout::kFiles);
  EXPECT_EQ(back.entries[1].length, 128u);
}

void expect_corrupt(const std::string& bytes, const std::string& needle) {
  try {
    decode_index(bytes, "idx");
    FAIL() << "accepted a corrupt index (" << needle << ")";
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(IoIndexFormat, RejectsCorruption) {
  const std::string good = encode_index(sample_index());
  expect_corrupt(good.substr(0, 20), "too short");
  expect_corrupt(good.substr(0, good.size() - 1), "does not match");
  std::string bad = good;
  bad[0] = 'X';
  expect_corrupt(bad, "bad magic");
  bad = good;
  bad[40] ^= 0x10;  // an entry's offset
  expect_corrupt(bad, "checksum");
  bad = good;
  bad[8] = 2;  // version
  expect_corrupt(bad, "version");
}

TEST(IoIndexFormat, RejectsInconsistentEntriesEvenWithAValidChecksum) {
  Index overlap = sample_index();
  overlap.entries[1].offset = 50;
  expect_corrupt(encode_index(overlap), "overlaps");
  Index past = sample_index();
  past.shard_sizes[1] = 200;
  expect_corrupt(encode_index(past), "ends past its shard");
  Index range = sample_index();
  range.entries[2].shard = 5;
  expect_corrupt(encode_index(range), "out of range");
  Index tiny = sample_index();
  tiny.entries[0].length = 8;
  expect_corrupt(encode_index(tiny), "length too small");
}

TEST(IoMarker, RoundTripAndForeignText) {
  Marker m;
  m.state = "complete";
  m.layout = Layout::kShards;
  m.samples = 10;
  m.shards = 2;
  m.size_mean = 110000;
  m.size_spread_pct = 50;
  m.align = 4096;
  m.seed = 3;
  m.bytes = 1100000;
  m.created_dir = true;
  m.pid = 77;
  const Marker b = decode_marker(encode_marker(m), "m");
  EXPECT_EQ(b.state, "complete");
  EXPECT_EQ(b.layout, Layout::kShards);
  EXPECT_EQ(b.samples, 10u);
  EXPECT_EQ(b.align, 4096u);
  EXPECT_TRUE(b.created_dir);
  EXPECT_EQ(b.pid, 77);
  EXPECT_THROW(decode_marker("{\"tool\":\"other\"}", "m"), DatasetError);
  EXPECT_THROW(decode_marker("not json", "m"), DatasetError);
  EXPECT_THROW(decode_marker("{\"tool\":\"nodeprobe-io\",\"format\":1}", "m"), DatasetError);
}

TEST(IoSizes, SampleLengthsAreSeededBoundedAndAverageTheMean) {
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const auto len = sample_length(static_cast<std::uint64_t>(i), 110000, 50, 1, 1);
    EXPECT_GE(len, 55000u);
    EXPECT_LE(len, 165000u);
    EXPECT_EQ(len, sample_length(static_cast<std::uint64_t>(i), 110000, 50, 1, 1));
    sum += static_cast<double>(len);
  }
  EXPECT_NEAR(sum / n, 110000, 1500);
  EXPECT_EQ(sample_length(3, 100000, 0, 1, 1), 100000u);
  EXPECT_EQ(sample_length(3, 100000, 0, 1, 4096) % 4096, 0u);
  EXPECT_EQ(sample_length(3, 10, 0, 1, 1), kMinSampleBytes);
}

TEST(IoPaths, SamplesAndShards) {
  char buf[64];
  EXPECT_STREQ(sample_path(12345, buf, sizeof buf), "samples/0012/00012345.bin");
  EXPECT_EQ(shard_path(3), "shard-00003.rec");
}

}  // namespace
}  // namespace nodeprobe::io
