#pragma once
/// Entry points the libFuzzer targets (diag/fuzz/) and the regression test
/// (tests/diag/regressions) share: bytes in, no crash, no hang, no leak.

#include <cstddef>
#include <cstdint>

namespace nodeprobe::diag {

/// Bytes as a log (gzip detected): scanner, rules, structured parsers,
/// context rules, playbook rendering and JSON output.
void fuzz_analyze(const std::uint8_t* data, std::size_t size);

/// Bytes as a support bundle (.tar or .tar.gz): every entry read, the
/// manifest parsed when present, names checked.
void fuzz_bundle(const std::uint8_t* data, std::size_t size);

}  // namespace nodeprobe::diag
