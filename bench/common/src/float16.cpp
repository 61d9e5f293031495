#include "nodeprobe/float16.h"

#include <cmath>

namespace nodeprobe {
std::uint16_t float_to_half(float f) {
  const std::uint32_t u = float_bits(f);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t mag = u & 0x7fffffffu;
  if (mag >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
  // 65520 is the halfway point between 65504 (max half) and 65536: it and
  // everything above round to infinity under round-to-nearest-even.
  if (mag >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (mag >= 0x38800000u) {  // normal half (>= 2^-14)
    std::uint32_t h = (mag >> 13) - ((127u - 15u) << 10);
    const std::uint32_t rem = mag & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  // Subnormal half: a multiple of 2^-24; scaling by 2^24 is exact in float.
  const float q = std::nearbyint(std::fabs(f) * 16777216.0f);
  return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(q));
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return float_from_bits(sign | 0x7f800000u | (mant << 13));
  return float_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

std::uint16_t float_to_bf16(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_float(std::uint16_t b) { return float_from_bits(static_cast<std::uint32_t>(b) << 16); }

}  // namespace nodeprobe
