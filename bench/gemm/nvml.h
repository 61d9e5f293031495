#pragma once
/// GPU inventory through NVML loaded at run time (dlopen of
/// libnvidia-ml.so.1 with our own minimal declarations): no link-time
/// dependency, so the probe starts on nodes without a driver and says why.

#include <memory>
#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::gemm {

/// One MIG device (a GPU instance's compute instance) of a GPU in MIG mode.
struct NvmlMig {
  unsigned index = 0;  ///< NVML's MIG device index on its GPU
  std::string name;    ///< "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
  std::string uuid;    ///< "MIG-..." (what CUDA reports for the slice)
  long long memory_total = -1;
};

/// One GPU as NVML sees it. Integers are -1 where NVML did not report a value
/// (not supported on this GPU or driver).
struct NvmlGpu {
  unsigned index = 0;
  std::string name, uuid, pci_bus_id;
  int cc_major = -1, cc_minor = -1;
  long long memory_total = -1, memory_used = -1;  ///< bytes
  int persistence_mode = -1;                      ///< 1 enabled, 0 disabled
  int ecc_current = -1, ecc_pending = -1;         ///< 1 enabled
  long long ecc_corrected_volatile = -1, ecc_uncorrected_volatile = -1;
  long long ecc_corrected_aggregate = -1, ecc_uncorrected_aggregate = -1;
  long long retired_pages_sbe = -1, retired_pages_dbe = -1;
  int retired_pending = -1;
  long long remapped_correctable = -1, remapped_uncorrectable = -1;
  int remap_pending = -1, remap_failure = -1;
  int sm_clock_mhz = -1, sm_clock_max_mhz = -1, mem_clock_mhz = -1, mem_clock_max_mhz = -1;
  double power_limit_w = -1, power_draw_w = -1;
  int temperature_c = -1;
  int pcie_gen = -1, pcie_gen_max = -1, pcie_width = -1, pcie_width_max = -1;
  int nvlink_links = -1, nvlink_active = -1;  ///< links NVML answered for / active ones
  long long throttle_reasons = -1;            ///< nvmlClocksThrottleReasons bit mask
  int mig_mode = -1, mig_mode_pending = -1;   ///< 1 MIG enabled; -1 not MIG-capable
  std::vector<NvmlMig> migs;                  ///< MIG devices (empty without MIG)
};

struct NvmlInventory {
  bool loaded = false;       ///< library opened and nvmlInit_v2 succeeded
  int init_rc = -1;          ///< nvmlInit_v2's return; -1 when the library is missing
  std::string error;         ///< why NVML is unusable ("" when loaded)
  std::string library;       ///< what was dlopen'ed
  std::string driver_version;   ///< "550.54.15"
  int cuda_driver_version = 0;  ///< the driver's CUDA version, 12040
  std::vector<NvmlGpu> gpus;
};

/// Fast-changing values sampled while a GPU is busy.
struct NvmlSample {
  int pcie_gen = -1, pcie_width = -1;
  int sm_clock_mhz = -1;
  double power_draw_w = -1;     ///< nvmlDeviceGetPowerUsage: a 1 s average on Ampere and newer
  double power_instant_w = -1;  ///< NVML_FI_DEV_POWER_INSTANT: the power now
  long long energy_mj = -1;     ///< total energy since the driver loaded (Volta and newer)
  int temperature_c = -1;
  long long throttle_reasons = -1;
};


class Nvml {
 public:
  /// Opens `library` ("" = $NODEPROBE_NVML_LIBRARY, else libnvidia-ml.so.1)
  /// and initialises NVML. Never throws: check ok() / error().
  explicit Nvml(std::string library = {});
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const { return inv_.loaded; }
  /// Everything NVML knows about every GPU (empty gpus when !ok()).
  const NvmlInventory& inventory() const { return inv_; }
  /// Current link, clocks, power, throttle reasons of GPU `index`.
  NvmlSample sample(unsigned index) const;
  /// NVML index of the GPU with this UUID: a "GPU-..." of the GPU itself or a
  /// "MIG-..." of one of its MIG devices (ECC, PCIe, power are the GPU's); -1 when unknown.
  int index_of_uuid(const std::string& uuid) const;
  /// GPUs in MIG mode and the MIG devices they have.
  int mig_enabled_count() const;
  int mig_device_count() const;

 private:
  struct Api;
  void collect();
  std::unique_ptr<Api> api_;
  NvmlInventory inv_;
};

/// "SwPowerCap, HwSlowdown" for a throttle-reason mask; "none" for 0.
std::string describe_throttle_reasons(long long mask);
/// Reasons that mean the GPU was held back by heat or power delivery, not by
/// design: HW slowdown, SW/HW thermal slowdown, power brake (0: none).
long long abnormal_throttle(long long mask);

/// JSON for reports (unknown values left out).
Json to_json(const NvmlGpu& g);
Json to_json(const NvmlSample& s);

}  // namespace nodeprobe::gemm
