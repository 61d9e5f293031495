#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "numeric.h"

namespace nodeprobe::gemm {
namespace {

TEST(Numeric, PrecisionNamesRoundTrip) {
  for (Precision p : kAllPrecisions) EXPECT_EQ(precision_from_string(to_string(p)), p);
  EXPECT_EQ(precision_from_string("BF16"), Precision::kBf16);
  EXPECT_FALSE(precision_from_string("fp64"));
  EXPECT_EQ(input_bytes(Precision::kFp8), 1u);
  EXPECT_EQ(output_bytes(Precision::kFp8), 2u);  // FP8 GEMMs write BF16
  EXPECT_EQ(output_bytes(Precision::kTf32), 4u);
}

TEST(Numeric, HalfKnownValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);   // halfway to 65536 rounds (even) to inf
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie rounds to even (0)
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 quanta -> 2
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even keeps 1.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
}

TEST(Numeric, HalfRoundTripsEveryValue) {
  for (unsigned h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = half_to_float(bits);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half(f), bits) << std::hex << h;
  }
}

#if defined(__FLT16_MAX__) && !defined(__clang__)
// GCC's _Float16 conversion is an independent round-to-nearest-even oracle.
TEST(Numeric, HalfMatchesCompilerConversion) {
  Rng rng(7);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::ldexp(rng.uniform(), static_cast<int>(rng.next() % 40) - 28);
    const _Float16 h = static_cast<_Float16>(f);
    std::uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(float_to_half(f), bits) << f;
  }
}
#endif

TEST(Numeric, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even keeps 1.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  for (unsigned b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_float(static_cast<std::uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16(f), b);
  }
}

TEST(Numeric, E4m3KnownValuesAndSaturation) {
  EXPECT_EQ(float_to_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_e4m3(448.0f), 0x7e);
  EXPECT_EQ(float_to_e4m3(1000.0f), 0x7e);     // saturates
  EXPECT_EQ(float_to_e4m3(-1000.0f), 0xfe);
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -9)), 0x01);  // smallest subnormal
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -6)), 0x08);  // smallest normal
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);  // halfway 1 .. 1.125: even
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3a);  // halfway 1.125 .. 1.25: even (1.25)
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7f)));
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  for (unsigned b = 0; b < 256; ++b) {
    const float f = e4m3_to_float(static_cast<std::uint8_t>(b));
    if (std::isnan(f)) continue;
    if (b == 0x80) continue;  // -0 encodes back to 0x80 too, checked below
    ASSERT_EQ(float_to_e4m3(f), b) << b;
  }
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
}

TEST(Numeric, Tf32KeepsTenMantissaBits) {
  EXPECT_EQ(round_to_tf32(1.0f), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f);  // tie -> even
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(3.0f, -12)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isinf(round_to_tf32(INFINITY)));
}

TEST(Numeric, RandomInputsAreDeterministicAndMatchTheirValues) {
  for (Precision p : kAllPrecisions) {
    std::vector<float> v1, v2;
    const auto a = random_inputs(p, 1000, 42, &v1);
    const auto b = random_inputs(p, 1000, 42, &v2);
    EXPECT_EQ(a, b);
    EXPECT_EQ(v1, v2);
    ASSERT_EQ(a.size(), 1000 * input_bytes(p));
    for (std::size_t i = 0; i < v1.size(); ++i) {
      ASSERT_GE(v1[i], -1.0f);
      ASSERT_LE(v1[i], 1.0f);
      ASSERT_EQ(round_input(p, v1[i]), v1[i]);  // already representable
    }
    EXPECT_NE(random_inputs(p, 1000, 43), a);
  }
}

TEST(Numeric, DecodeOutputs) {
  std::vector<std::uint8_t> raw(4);
  const std::uint16_t h = float_to_half(0.5f), b = float_to_bf16(-3.0f);
  std::memcpy(raw.data(), &h, 2);
  std::memcpy(raw.data() + 2, &b, 2);
  EXPECT_EQ(decode_outputs(Precision::kFp16, raw)[0], 0.5f);
  EXPECT_EQ(decode_outputs(Precision::kBf16, raw)[1], -3.0f);
  EXPECT_EQ(decode_outputs(Precision::kFp8, raw)[1], -3.0f);
  EXPECT_EQ(decode_outputs(Precision::kFp32, raw).size(), 1u);
}

}  // namespace
}  // namespace nodeprobe::gemm
