// nodeprobe-nvml: what NVML says about every GPU, as JSON on stdout (schema
// nodeprobe.nvml/1). The collector spawns it with a deadline instead of
// loading NVML itself: a GPU that fell off the bus can hang NVML calls, and a
// hung helper is killed at the deadline while diag goes on.
//
//   nodeprobe-nvml            # libnvidia-ml.so.1, or $NODEPROBE_NVML_LIBRARY
//
// Exit 0 with {"loaded": true, ...}; exit 77 (skip) with {"loaded": false,
// "error": "..."} when NVML is not available.
#include <iostream>

#include "nvml.h"

int main() {
  using namespace nodeprobe;
  const gemm::Nvml nvml;
  const gemm::NvmlInventory& inv = nvml.inventory();
  Json j = {{"schema", "nodeprobe.nvml/1"}, {"loaded", inv.loaded}, {"library", inv.library}};
  if (!inv.loaded) {
    j["error"] = inv.error;
    j["init_rc"] = inv.init_rc;
    std::cout << j.dump(1) << "\n";
    return 77;
  }
  j["driver_version"] = inv.driver_version;
  j["cuda_driver_version"] = inv.cuda_driver_version;
  Json gpus = Json::array();
  for (const auto& g : inv.gpus) gpus.push_back(gemm::to_json(g));
  j["gpus"] = gpus;
  std::cout << j.dump(1) << "\n";
  return 0;
}
