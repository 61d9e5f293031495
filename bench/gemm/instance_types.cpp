#include "instance_types.h"

#include "nodeprobe/instance_table.h"

namespace nodeprobe::gemm {

std::optional<InstanceGpus> expected_gpus(std::string_view instance_type) {
  // The one instance table gemm, accept and diag share (nodeprobe/instance_table.h).
  const InstanceTable& table = instance_table();
  if (const InstanceSpec* s = table.find(instance_type))
    return InstanceGpus{s->gpu_model, s->gpu_count.value_or(0)};
  if (table.gpu_less(instance_type)) return InstanceGpus{"", 0};
  return std::nullopt;
}

}  // namespace nodeprobe::gemm
