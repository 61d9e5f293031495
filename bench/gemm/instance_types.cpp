#include "instance_types.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace nodeprobe::gemm {
namespace {

struct Row {
  std::string_view type;  // exact instance type
  std::string_view family;
  int count;
};

// AWS EC2 accelerated-computing specifications (instance type -> GPUs).
// g4dn: NVIDIA T4; g5: A10G; g6/gr6: L4; g6e: L40S; p3/p3dn: V100 (p3dn 32 GB);
// p4d: A100 40 GB; p4de: A100 80 GB; p5: H100 80 GB; p5e/p5en: H200 141 GB.
constexpr Row kRows[] = {
    {"g4dn.xlarge", "T4", 1},    {"g4dn.2xlarge", "T4", 1},   {"g4dn.4xlarge", "T4", 1},
    {"g4dn.8xlarge", "T4", 1},   {"g4dn.16xlarge", "T4", 1},  {"g4dn.12xlarge", "T4", 4},
    {"g4dn.metal", "T4", 8},
    {"g5.xlarge", "A10G", 1},    {"g5.2xlarge", "A10G", 1},   {"g5.4xlarge", "A10G", 1},
    {"g5.8xlarge", "A10G", 1},   {"g5.16xlarge", "A10G", 1},  {"g5.12xlarge", "A10G", 4},
    {"g5.24xlarge", "A10G", 4},  {"g5.48xlarge", "A10G", 8},
    {"g6.xlarge", "L4", 1},      {"g6.2xlarge", "L4", 1},     {"g6.4xlarge", "L4", 1},
    {"g6.8xlarge", "L4", 1},     {"g6.16xlarge", "L4", 1},    {"g6.12xlarge", "L4", 4},
    {"g6.24xlarge", "L4", 4},    {"g6.48xlarge", "L4", 8},
    {"gr6.4xlarge", "L4", 1},    {"gr6.8xlarge", "L4", 1},
    {"g6e.xlarge", "L40S", 1},   {"g6e.2xlarge", "L40S", 1},  {"g6e.4xlarge", "L40S", 1},
    {"g6e.8xlarge", "L40S", 1},  {"g6e.16xlarge", "L40S", 1}, {"g6e.12xlarge", "L40S", 4},
    {"g6e.24xlarge", "L40S", 4}, {"g6e.48xlarge", "L40S", 8},
    {"p3.2xlarge", "V100", 1},   {"p3.8xlarge", "V100", 4},   {"p3.16xlarge", "V100", 8},
    {"p3dn.24xlarge", "V100", 8},
    {"p4d.24xlarge", "A100", 8}, {"p4de.24xlarge", "A100", 8},
    {"p5.4xlarge", "H100", 1},   {"p5.48xlarge", "H100", 8},
    {"p5e.48xlarge", "H200", 8}, {"p5en.48xlarge", "H200", 8},
};

// Instance families that have no GPU at all: an explicit "expect none".
constexpr std::string_view kGpuLessFamilies[] = {"c5", "c5n", "c6i", "c6in", "c7i", "m5",
                                                 "m6i", "m7i", "r5", "r6i", "t3", "hpc7g"};

}  // namespace

std::optional<InstanceGpus> expected_gpus(std::string_view instance_type) {
  std::string t(instance_type);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t.empty()) return std::nullopt;
  for (const Row& r : kRows)
    if (r.type == t) return InstanceGpus{r.family, r.count};
  const std::string family = t.substr(0, t.find('.'));
  if (std::find(std::begin(kGpuLessFamilies), std::end(kGpuLessFamilies), family) !=
      std::end(kGpuLessFamilies))
    return InstanceGpus{"", 0};
  return std::nullopt;
}

}  // namespace nodeprobe::gemm
