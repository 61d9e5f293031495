// libFuzzer target: bytes as a log through the whole diagnosis pipeline.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nodeprobe::diag::fuzz_analyze(data, size);
  return 0;
}
