#include "numeric.h"

#include <cctype>
#include <cmath>
#include <cstring>

namespace nodeprobe::gemm {
std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
  }
  return "unknown";
}

std::optional<Precision> precision_from_string(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (Precision p : kAllPrecisions)
    if (to_string(p) == lower) return p;
  return std::nullopt;
}

std::size_t input_bytes(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kFp8: return 1;
  }
  return 4;
}

std::size_t output_bytes(Precision p) {
  return p == Precision::kFp32 || p == Precision::kTf32 ? 4 : 2;
}

std::uint8_t float_to_e4m3(float f) {
  const std::uint32_t u = float_bits(f);
  const auto sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
  const std::uint32_t mag = u & 0x7fffffffu;
  if (mag > 0x7f800000u) return static_cast<std::uint8_t>(sign | 0x7fu);  // NaN
  if (mag > 0x43e00000u) return static_cast<std::uint8_t>(sign | 0x7eu);  // > 448: saturate
  if (mag >= 0x3c800000u) {  // >= 2^-6: normal E4M3
    std::uint32_t r = mag >> 20;  // 8 exponent bits + 3 mantissa bits
    const std::uint32_t rem = mag & 0xfffffu;
    if (rem > 0x80000u || (rem == 0x80000u && (r & 1u))) ++r;
    r -= (127u - 7u) << 3;
    return static_cast<std::uint8_t>(sign | (r > 0x7eu ? 0x7eu : r));
  }
  // Subnormal E4M3: multiples of 2^-9 (a result of 8 is the smallest normal).
  const float q = std::nearbyint(std::fabs(f) * 512.0f);
  return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(q));
}

float e4m3_to_float(std::uint8_t b) {
  const bool neg = (b & 0x80u) != 0;
  const unsigned exp = (b >> 3) & 0xfu;
  const unsigned mant = b & 0x7u;
  float v;
  if (exp == 15 && mant == 7) return std::nanf("");
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -9);
  else
    v = std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, static_cast<int>(exp) - 7);
  return neg ? -v : v;
}

float round_to_tf32(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;  // inf / NaN unchanged
  return float_from_bits((u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u);
}

float round_input(Precision p, float f) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return f;
    case Precision::kFp16: return half_to_float(float_to_half(f));
    case Precision::kBf16: return bf16_to_float(float_to_bf16(f));
    case Precision::kFp8: return e4m3_to_float(float_to_e4m3(f));
  }
  return f;
}

float round_output(Precision p, float f) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return f;
    case Precision::kFp16: return half_to_float(float_to_half(f));
    case Precision::kBf16:
    case Precision::kFp8: return bf16_to_float(float_to_bf16(f));
  }
  return f;
}

std::uint64_t Rng::next() {
  std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float Rng::uniform() {
  return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

float Rng::normal() {
  // u1 in (0, 1] keeps log() finite.
  const double u1 = (static_cast<double>(next() >> 11) + 1.0) / 9007199254740992.0;
  const double u2 = static_cast<double>(next() >> 11) / 9007199254740992.0;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

std::vector<std::uint8_t> random_inputs(Precision p, std::size_t n, std::uint64_t seed,
                                        std::vector<float>* values) {
  Rng rng(seed);
  const std::size_t eb = input_bytes(p);
  std::vector<std::uint8_t> raw(n * eb);
  if (values) values->resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float f = rng.uniform();
    float stored = f;
    switch (p) {
      case Precision::kFp32:
      case Precision::kTf32: std::memcpy(&raw[i * 4], &f, 4); break;
      case Precision::kFp16: {
        const std::uint16_t h = float_to_half(f);
        std::memcpy(&raw[i * 2], &h, 2);
        if (values) stored = half_to_float(h);
        break;
      }
      case Precision::kBf16: {
        const std::uint16_t b = float_to_bf16(f);
        std::memcpy(&raw[i * 2], &b, 2);
        if (values) stored = bf16_to_float(b);
        break;
      }
      case Precision::kFp8: {
        raw[i] = float_to_e4m3(f);
        if (values) stored = e4m3_to_float(raw[i]);
        break;
      }
    }
    if (values) (*values)[i] = stored;
  }
  return raw;
}

std::vector<float> decode_outputs(Precision p, const std::vector<std::uint8_t>& raw) {
  const std::size_t eb = output_bytes(p);
  std::vector<float> out(raw.size() / eb);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (eb == 4) {
      std::memcpy(&out[i], &raw[i * 4], 4);
    } else {
      std::uint16_t v;
      std::memcpy(&v, &raw[i * 2], 2);
      out[i] = p == Precision::kFp16 ? half_to_float(v) : bf16_to_float(v);
    }
  }
  return out;
}

}  // namespace nodeprobe::gemm
