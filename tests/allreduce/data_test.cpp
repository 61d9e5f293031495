#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "data.h"

namespace nodeprobe::allreduce {
namespace {

// Reduces the inputs of n ranks on the host, as a correct allreduce would.
template <typename T>
std::vector<T> reference(DType t, RedOp op, int n, std::size_t count, int rep) {
  std::vector<T> acc(count), tmp(count);
  fill_input(acc.data(), count, t, op, 0, rep);
  for (int r = 1; r < n; ++r) {
    fill_input(tmp.data(), count, t, op, r, rep);
    reduce_into(acc.data(), tmp.data(), count, t, op);
  }
  if (op == RedOp::kAvg) finish_avg(acc.data(), count, t, n);
  return acc;
}

TEST(Data, CorrectResultsHaveNoWrongElements) {
  for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax}) {
    for (int n : {1, 2, 4, 16}) {
      auto f = reference<float>(DType::kFloat32, op, n, 1000, 2);
      EXPECT_EQ(count_wrong(f.data(), f.size(), DType::kFloat32, op, n, 2), 0);
      auto i = reference<std::int32_t>(DType::kInt32, op, n, 1000, 2);
      EXPECT_EQ(count_wrong(i.data(), i.size(), DType::kInt32, op, n, 2), 0);
      auto b = reference<std::uint16_t>(DType::kBFloat16, op, n, 300, 1);
      EXPECT_EQ(count_wrong(b.data(), b.size(), DType::kBFloat16, op, n, 1), 0);
      auto h = reference<std::uint16_t>(DType::kFloat16, op, n, 300, 1);
      EXPECT_EQ(count_wrong(h.data(), h.size(), DType::kFloat16, op, n, 1), 0);
    }
  }
  auto avg = reference<float>(DType::kFloat32, RedOp::kAvg, 3, 100, 0);
  EXPECT_EQ(count_wrong(avg.data(), avg.size(), DType::kFloat32, RedOp::kAvg, 3, 0), 0);
}

TEST(Data, IntegersAreExactOneOffIsWrong) {
  auto v = reference<std::int32_t>(DType::kInt32, RedOp::kSum, 4, 100, 0);
  v[17] += 1;
  v[42] -= 1;
  EXPECT_EQ(count_wrong(v.data(), v.size(), DType::kInt32, RedOp::kSum, 4, 0), 2);
}

TEST(Data, FloatsGetATolerance) {
  auto v = reference<float>(DType::kFloat32, RedOp::kSum, 4, 100, 0);
  v[3] = std::nextafter(v[3], 1e9f);  // one ulp: within tolerance
  v[5] += 0.5f;                       // not
  EXPECT_EQ(count_wrong(v.data(), v.size(), DType::kFloat32, RedOp::kSum, 4, 0), 1);
  EXPECT_EQ(tolerance(DType::kInt32, 8), 0.0);
  EXPECT_GT(tolerance(DType::kBFloat16, 8), tolerance(DType::kFloat16, 8));
}

TEST(Data, WrongRepetitionOrRankCountIsCaught) {
  auto v = reference<float>(DType::kFloat32, RedOp::kSum, 4, 1000, 1);
  EXPECT_GT(count_wrong(v.data(), v.size(), DType::kFloat32, RedOp::kSum, 4, 2), 500);
  EXPECT_GT(count_wrong(v.data(), v.size(), DType::kFloat32, RedOp::kSum, 3, 1), 500);
}

TEST(Data, MisplacedChunkIsCaught) {
  // A chunk that lands at the wrong offset must not match what belongs there.
  auto v = reference<float>(DType::kFloat32, RedOp::kSum, 4, 4096, 0);
  std::vector<float> w = v;
  for (std::size_t i = 0; i < 1024; ++i) w[i] = v[1024 + i];
  EXPECT_GT(count_wrong(w.data(), w.size(), DType::kFloat32, RedOp::kSum, 4, 0), 900);
}

TEST(Data, PoisonIsNeverCorrect) {
  std::vector<float> v(64);
  fill_poison(v.data(), v.size(), DType::kFloat32);
  EXPECT_EQ(count_wrong(v.data(), v.size(), DType::kFloat32, RedOp::kSum, 2, 0), 64);
}

TEST(Data, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(256.0f)), 256.0f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(257.0f)), 256.0f);  // 8 significant bits: tie to even
  EXPECT_EQ(bf16_to_float(float_to_bf16(-3.5f)), -3.5f);
  EXPECT_EQ(half_to_float(float_to_half(1.0f)), 1.0f);
  EXPECT_EQ(half_to_float(float_to_half(2049.0f)), 2048.0f);
  EXPECT_EQ(half_to_float(float_to_half(-40.0f)), -40.0f);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(1e6f))));
  EXPECT_NEAR(half_to_float(float_to_half(1e-6f)), 1e-6f, 1e-7f);  // subnormal
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

}  // namespace
}  // namespace nodeprobe::allreduce
