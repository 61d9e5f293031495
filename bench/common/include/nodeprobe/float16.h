#pragma once
/// 16-bit floating-point formats on the host, bit-exact with what GPUs store:
/// IEEE binary16 (half) and bfloat16, both rounding to nearest even, NaN
/// staying NaN and overflow going to infinity. Used to fill and check GPU
/// buffers (GEMM references, allreduce data) without a vendor header.

#include <cstdint>
#include <cstring>

namespace nodeprobe {

/// The bits of a float, and back (memcpy: no aliasing games).
inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t b);

}  // namespace nodeprobe
