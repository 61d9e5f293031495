// libFuzzer target: bytes as a directory tree diagnosed as an extracted bundle.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nodeprobe::diag::fuzz_bundle_dir(data, size);
  return 0;
}
