// libFuzzer target: bytes as a support bundle (.tar / .tar.gz).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nodeprobe::diag::fuzz_bundle(data, size);
  return 0;
}
