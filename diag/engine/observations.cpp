#include "observations.h"

namespace nodeprobe::diag {

void HostObs::merge(const HostObs& o) {
  auto take = [](auto& mine, const auto& theirs) {
    if (!mine && theirs) mine = theirs;
  };
  take(driver_version, o.driver_version);
  take(driver_loaded, o.driver_loaded);
  take(smi_driver_version, o.smi_driver_version);
  take(driver_cuda, o.driver_cuda);
  take(nvml_lib_version, o.nvml_lib_version);
  take(cuda_runtime, o.cuda_runtime);
  take(kernel_release, o.kernel_release);
  take(module_vermagic_kernel, o.module_vermagic_kernel);
  take(module_version, o.module_version);
  take(module_on_disk, o.module_on_disk);
  take(gpus_on_pci, o.gpus_on_pci);
  take(gpus_visible, o.gpus_visible);
  take(efa_devices, o.efa_devices);
  take(nvswitches, o.nvswitches);
  take(fm_load_state, o.fm_load_state);
  take(fm_active_state, o.fm_active_state);
  take(fm_result, o.fm_result);
  take(fm_version, o.fm_version);
  take(instance_type, o.instance_type);
  take(kernel_build_line, o.kernel_build_line);
  kernel_images.insert(o.kernel_images.begin(), o.kernel_images.end());
  kernel_build_trees.insert(o.kernel_build_trees.begin(), o.kernel_build_trees.end());
  if (gpu_models.empty()) gpu_models = o.gpu_models;
  if (acs_ports.empty()) acs_ports = o.acs_ports;
  if (gpu_iommu.empty()) gpu_iommu = o.gpu_iommu;
  if (edac.empty()) edac = o.edac;
  fi_providers.insert(o.fi_providers.begin(), o.fi_providers.end());
  // A loaded module seen anywhere wins over "absent" seen elsewhere.
  if (o.driver_loaded && *o.driver_loaded) driver_loaded = true;
}

}  // namespace nodeprobe::diag
