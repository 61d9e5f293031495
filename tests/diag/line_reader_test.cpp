// Streaming reader: blocks of whole lines, gzip members, truncation,
// corruption, lines longer than the cap, memory that does not grow.
#include <gtest/gtest.h>

#include <zlib.h>

#include "line_reader.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

std::string gzip(const std::string& s) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(s.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string read_all(LineBlockReader& r, std::size_t* blocks = nullptr) {
  std::string all;
  std::string_view b;
  std::size_t n = 0;
  while (r.next(&b)) {
    all.append(b);
    ++n;
  }
  if (blocks) *blocks = n;
  return all;
}

TEST(LineReader, BlocksEndAtLineBoundaries) {
  std::string text;
  for (int i = 0; i < 300000; ++i) text += "line " + std::to_string(i) + " with some padding text\n";
  LineBlockReader r(text, "mem");
  std::string_view b;
  std::string all;
  std::size_t blocks = 0;
  while (r.next(&b)) {
    ASSERT_EQ(b.back(), '\n');
    all.append(b);
    ++blocks;
  }
  EXPECT_EQ(all, text);
  EXPECT_GT(blocks, 3u);
  EXPECT_TRUE(r.error().empty());
  EXPECT_EQ(r.bytes(), text.size());
}

TEST(LineReader, FinalLineWithoutNewline) {
  LineBlockReader r(std::string_view("a\nb\nlast"), "mem");
  EXPECT_EQ(read_all(r), "a\nb\nlast");
}

TEST(LineReader, GzipAndConcatenatedMembers) {
  const std::string a = "first member\n", b = "second member\nend\n";
  const std::string gz = gzip(a) + gzip(b);
  LineBlockReader r(gz, "mem.gz");
  EXPECT_EQ(read_all(r), a + b);
  EXPECT_TRUE(r.gzip());
  EXPECT_TRUE(r.error().empty()) << r.error();
}

TEST(LineReader, TruncatedGzipKeepsWhatWasReadAndSaysSo) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus " + std::to_string(i) + "\n";
  const std::string gz = gzip(text);
  LineBlockReader r(std::string_view(gz).substr(0, gz.size() / 2), "cut.gz");
  const std::string got = read_all(r);
  EXPECT_GT(got.size(), 1000u);
  EXPECT_NE(r.error().find("truncated gzip"), std::string::npos) << r.error();
}

TEST(LineReader, CorruptGzipIsAnErrorNotACrash) {
  std::string gz = gzip(std::string(100000, 'x'));
  for (std::size_t i = 20; i < gz.size(); i += 7) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  LineBlockReader r(gz, "bad.gz");
  (void)read_all(r);
  EXPECT_NE(r.error().find("corrupt gzip"), std::string::npos) << r.error();
}

TEST(LineReader, LinesLongerThanTheCapAreCutAndCounted) {
  std::string text = "short\n" + std::string(3 * LineBlockReader::kMaxLine, 'y') + "\nafter\n";
  LineBlockReader r(text, "mem");
  std::string_view b;
  std::vector<std::string> blocks;
  while (r.next(&b)) blocks.emplace_back(b);
  std::string all;
  for (auto& x : blocks) all += x;
  EXPECT_EQ(r.long_lines(), 1u);
  EXPECT_NE(all.find("short\n"), std::string::npos);
  EXPECT_NE(all.find("after\n"), std::string::npos);
  EXPECT_LT(all.size(), 2 * LineBlockReader::kMaxLine);  // the rest of the long line was skipped
}

TEST(LineReader, MissingFileIsAnError) {
  LineBlockReader r(std::string("/nonexistent/x.log"));
  std::string_view b;
  EXPECT_FALSE(r.next(&b));
  EXPECT_NE(r.error().find("No such file"), std::string::npos) << r.error();
}

TEST(LineReader, ReadsAFileFromDisk) {
  testing::TempDir d;
  testing::write_file(d.file("a.log.gz"), gzip("one\ntwo\n"));
  LineBlockReader r(d.file("a.log.gz"));
  EXPECT_EQ(read_all(r), "one\ntwo\n");
  EXPECT_EQ(r.head().substr(0, 3), "one");
}

}  // namespace
}  // namespace nodeprobe::diag
