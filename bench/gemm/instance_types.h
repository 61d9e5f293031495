#pragma once
/// What an EC2 instance type should carry: GPU family and count, from the one
/// instance table (nodeprobe/instance_table.h, diag/data/instance_types.json).

#include <optional>
#include <string>
#include <string_view>

namespace nodeprobe::gemm {

struct InstanceGpus {
  std::string_view family;  ///< GpuSpec::family ("T4", "A10G", "V100", "A100", "H100", "H200", "L4", "L40S")
  int count = 0;
};

/// The GPUs of an instance type ("p4d.24xlarge" -> 8 x A100), nullopt when the
/// type is unknown or empty. A family the table lists as GPU-less (e.g.
/// "c5.xlarge") gives count 0.
std::optional<InstanceGpus> expected_gpus(std::string_view instance_type);

}  // namespace nodeprobe::gemm
