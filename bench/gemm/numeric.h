#pragma once
/// Precisions the GEMM probe measures and the host-side number formats behind
/// them: IEEE half, bfloat16 and FP8 E4M3 encoded and decoded exactly as the
/// GPU sees them, so CPU references start from the very same inputs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nodeprobe/float16.h"

namespace nodeprobe::gemm {

/// GEMM precisions. The name is the precision of the inputs; every one
/// accumulates in FP32 (FP8 writes BF16 output, FP16/BF16 write their own type).
enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8 };

inline constexpr Precision kAllPrecisions[] = {Precision::kFp32, Precision::kTf32,
                                               Precision::kFp16, Precision::kBf16,
                                               Precision::kFp8};

/// "fp32", "tf32", "fp16", "bf16", "fp8".
std::string_view to_string(Precision p);
/// Inverse of to_string (case-insensitive); nullopt for an unknown name.
std::optional<Precision> precision_from_string(std::string_view s);
/// Bytes per input element on the device (4, 4, 2, 2, 1).
std::size_t input_bytes(Precision p);
/// Bytes per output element on the device (4, 4, 2, 2, 2: FP8 writes BF16).
std::size_t output_bytes(Precision p);

/// IEEE 754 binary16 and bfloat16 (nodeprobe/float16.h, shared with allreduce).
using nodeprobe::bf16_to_float;
using nodeprobe::float_bits;
using nodeprobe::float_from_bits;
using nodeprobe::float_to_bf16;
using nodeprobe::float_to_half;
using nodeprobe::half_to_float;
/// FP8 E4M3 ("fn": no infinities, max 448, 0x7f/0xff NaN), round to nearest
/// even, saturating at +-448 as cuBLAS FP8 inputs expect.
std::uint8_t float_to_e4m3(float f);
float e4m3_to_float(std::uint8_t b);
/// Rounds a float to TF32 (10 explicit mantissa bits), nearest even.
float round_to_tf32(float f);

/// The value a float becomes when stored as the *input* type of `p`
/// (FP32 and TF32 inputs are stored as FP32).
float round_input(Precision p, float f);
/// The value a float becomes when stored as the *output* type of `p`.
float round_output(Precision p, float f);

/// Deterministic generator (SplitMix64): same seed, same data on every host.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  /// Uniform in [-1, 1).
  float uniform();
  /// Standard normal (Box-Muller).
  float normal();

 private:
  std::uint64_t s_;
};

/// `n` device-format input elements of precision `p` (raw bytes, input_bytes(p)
/// each) holding uniform values in [-1, 1) rounded to the input type, and the
/// same values as floats in `values` when it is not null.
std::vector<std::uint8_t> random_inputs(Precision p, std::size_t n, std::uint64_t seed,
                                        std::vector<float>* values = nullptr);

/// Decodes `n` device-format output elements of precision `p` to floats.
std::vector<float> decode_outputs(Precision p, const std::vector<std::uint8_t>& raw);

}  // namespace nodeprobe::gemm
