#pragma once
/// What an EC2 instance type should carry: GPU family and count. The table is
/// in instance_types.cpp (AWS "Accelerated computing" instance specifications).

#include <optional>
#include <string>
#include <string_view>

namespace nodeprobe::gemm {

struct InstanceGpus {
  std::string_view family;  ///< GpuSpec::family ("T4", "A10G", "V100", "A100", "H100", "H200", "L4", "L40S")
  int count = 0;
};

/// The GPUs of an instance type ("p4d.24xlarge" -> 8 x A100), nullopt when the
/// type is unknown or empty. A known family without GPUs (e.g. "c5.xlarge") gives
/// count 0 only for families listed as GPU-less in the table.
std::optional<InstanceGpus> expected_gpus(std::string_view instance_type);

}  // namespace nodeprobe::gemm
