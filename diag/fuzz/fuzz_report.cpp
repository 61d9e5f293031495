// libFuzzer target: bytes as one report, or two separated by a NUL byte: load, render, export, compare.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nodeprobe::diag::fuzz_report(data, size);
  return 0;
}
