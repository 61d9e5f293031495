#include <gtest/gtest.h>

#include "recommend.h"

namespace nodeprobe::io {
namespace {

SweepPoint pt(const char* layout, std::size_t w, std::size_t p, double au, bool ok = true) {
  return SweepPoint{layout, w, p, au, 1 - au, 1000.0 * au, ok};
}

TEST(IoRecommend, SmallestConfigurationReachingTheTarget) {
  const auto r = recommend({pt("files", 1, 1, 0.5), pt("files", 1, 2, 0.7), pt("files", 2, 1, 0.85),
                            pt("files", 2, 2, 0.92), pt("files", 4, 1, 0.95), pt("files", 2, 4, 0.97)},
                           0.9, 32, 8, true);
  ASSERT_TRUE(r.reached);
  EXPECT_EQ(r.best.workers, 2u);
  EXPECT_EQ(r.best.prefetch, 2u);
  EXPECT_FALSE(r.pack_shards);
  EXPECT_TRUE(r.pin_memory);
  EXPECT_NE(r.pytorch.find("num_workers=2, prefetch_factor=2"), std::string::npos) << r.pytorch;
  EXPECT_NE(r.pytorch.find("batch_size=32"), std::string::npos);
}

TEST(IoRecommend, ShardsWinOnlyWhenSmaller) {
  // Same size: keep files (no repacking).
  auto r = recommend({pt("files", 2, 2, 0.91), pt("shards", 2, 2, 0.95)}, 0.9, 32, 8, true);
  EXPECT_EQ(r.best.layout, "files");
  EXPECT_FALSE(r.pack_shards);
  // Shards need fewer workers: pack.
  r = recommend({pt("files", 1, 2, 0.6), pt("files", 4, 2, 0.91), pt("shards", 1, 2, 0.93)}, 0.9, 32, 8, true);
  EXPECT_EQ(r.best.layout, "shards");
  EXPECT_EQ(r.best.workers, 1u);
  EXPECT_TRUE(r.pack_shards);
}

TEST(IoRecommend, UnreachableTargetAdvisesPackingAndStorage) {
  const auto r = recommend({pt("files", 1, 1, 0.3), pt("files", 2, 2, 0.6), pt("files", 4, 4, 0.55)}, 0.9, 16, 4,
                           false);
  EXPECT_FALSE(r.reached);
  EXPECT_EQ(r.best.workers, 2u);  // highest AU
  EXPECT_TRUE(r.pack_shards);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("no configuration reaches AU 90 %"), std::string::npos) << r.notes.front();
  bool gpu_note = false;
  for (const auto& n : r.notes) gpu_note = gpu_note || n.find("no usable GPU") != std::string::npos;
  EXPECT_TRUE(gpu_note);
}

TEST(IoRecommend, UnreachableWithShardsAlreadyDoesNotAdvisePacking) {
  const auto r = recommend({pt("shards", 1, 1, 0.3), pt("shards", 2, 2, 0.6)}, 0.9, 16, 4, true);
  EXPECT_FALSE(r.reached);
  EXPECT_FALSE(r.pack_shards);
}

TEST(IoRecommend, IgnoresFailedPointsAndWarnsAboutManyWorkers) {
  auto r = recommend({pt("files", 1, 1, 0.99, false), pt("files", 4, 1, 0.93)}, 0.9, 32, 4, true);
  ASSERT_TRUE(r.reached);
  EXPECT_EQ(r.best.workers, 4u);
  bool cores_note = false;
  for (const auto& n : r.notes) cores_note = cores_note || n.find("3/4 of the cores") != std::string::npos;
  EXPECT_TRUE(cores_note);
  r = recommend({pt("files", 1, 1, 0.99, false)}, 0.9, 32, 4, true);
  EXPECT_FALSE(r.reached);
  EXPECT_TRUE(r.pytorch.empty());
}

TEST(IoRecommend, DefaultWorkerList) {
  EXPECT_EQ(default_worker_list(1), (std::vector<std::size_t>{1}));
  EXPECT_EQ(default_worker_list(2), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(default_worker_list(8), (std::vector<std::size_t>{1, 2, 4, 8}));
  EXPECT_EQ(default_worker_list(12), (std::vector<std::size_t>{1, 2, 4, 8, 12}));
}

}  // namespace
}  // namespace nodeprobe::io
