#pragma once
/// The one size convention of every command (DESIGN.md "Sizes given on the
/// command line"): K, M, G, T and Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB are powers of
/// 1024 (as nccl-tests and fio read them); kB, MB, GB, TB are powers of 1000;
/// a bare number or "B" is bytes. The case of the unit letters does not
/// matter (the trailing "B" without "i" is what makes a unit decimal).
/// A decimal fraction is allowed ("1.5G"); the result rounds to whole bytes.
/// Printed sizes always name their unit ("16 MiB", "110 kB", "4097 B").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nodeprobe {

/// Bytes in `text`, or nullopt with a one-line reason in `*why` (no flag
/// name: the caller adds it). Refuses empty text, signs, exponents, hex,
/// "nan"/"inf", unknown units and values above 2^64 - 1.
std::optional<std::uint64_t> parse_size(std::string_view text, std::string* why = nullptr);

/// The units parse_size() accepts, for messages and --help.
inline constexpr const char* kSizeUnitsHelp =
    "K, M, G, T, KiB..TiB = powers of 1024; kB, MB, GB, TB = powers of 1000";

/// `bytes` with its unit: the largest binary unit it is a whole multiple of
/// ("16 MiB", "1536 KiB"), else the largest decimal one ("110 kB", "17 MB"),
/// else the nearest binary value to 4 significant digits ("117.7 MiB");
/// below 1 KiB "N B".
std::string format_size(std::uint64_t bytes);

/// format_size() for a measured (fractional, possibly huge) byte count.
std::string format_size(double bytes);

}  // namespace nodeprobe
