#pragma once
/// What one analysed source (a log, a command's output, a /proc file, a
/// report) contributed: folded findings, context signals, host facts that
/// structured parsers read (versions, GPU and EFA presence), and how the
/// reading went.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "finding_set.h"
#include "nodeprobe/report.h"

namespace nodeprobe::diag {

/// Host facts: each is known only when some source said so.
/// PCIe Access Control Services: the ACS extended capability's id, and the
/// bits of its control register that send peer-to-peer requests up to the
/// root complex or block them (P2P Request Redirect, Completion Redirect,
/// Egress Control); Source Validation and Translation Blocking do not.
constexpr std::uint16_t kAcsCapId = 0x000d;
constexpr std::uint16_t kAcsP2pBits = 0x0004 | 0x0008 | 0x0020;

/// One bridge with ACS on the way to a GPU.
struct AcsPort {
  std::string bridge, gpu;
  unsigned ctl = 0;          ///< the ACS control register
  bool switch_port = false;  ///< a PCIe switch's port, not a root port
};

/// One EDAC memory controller or DIMM (/sys/devices/system/edac/mc): errors
/// counted since boot.
struct EdacCount {
  std::string mc;     ///< "mc0"
  std::string dimm;   ///< "dimm3" / "rank3", "" for the controller's totals
  std::string label;  ///< dimm_label ("CPU_SrcID#0_MC#0_Chan#1_DIMM#0"), "" when none
  long long ce = 0, ue = 0;
};

struct HostObs {
  std::optional<std::string> driver_version;   ///< loaded kernel module (/proc/driver/nvidia/version)
  std::optional<bool> driver_loaded;           ///< false: the version file is known to be absent
  std::optional<std::string> smi_driver_version;
  std::optional<std::string> driver_cuda;      ///< "12.2": newest CUDA the driver supports
  std::optional<std::string> nvml_lib_version; ///< libnvidia-ml.so.<version> on disk
  std::optional<std::string> cuda_runtime;     ///< runtime/toolkit the software uses
  std::optional<std::string> kernel_release;   ///< uname -r
  std::optional<std::string> module_vermagic_kernel;  ///< kernel the nvidia.ko on disk is for
  std::optional<std::string> module_version;
  /// A package listing (yum/dnf list installed, rpm -qa, dpkg -l, apt list
  /// --installed): the kernel releases installed (kernel, kernel-core,
  /// linux-image-*) and those whose module build headers are (kernel-devel,
  /// linux-headers-*), each as uname -r prints it; `kernel_build_line` is
  /// the first build-headers line, the evidence.
  std::set<std::string> kernel_images, kernel_build_trees;
  std::optional<std::string> kernel_build_line;
  std::optional<bool> module_on_disk;          ///< modinfo found (true) or not (false) the module
  std::optional<int> gpus_on_pci;              ///< NVIDIA display/3D controllers on the PCI bus
  std::optional<int> gpus_visible;             ///< GPUs nvidia-smi lists
  std::vector<std::string> gpu_models;
  std::optional<int> efa_devices;              ///< EFA devices (fi_info -p efa, /sys/class/infiniband)
  std::optional<int> nvswitches;               ///< NVSwitch bridges on the PCI bus (vendor 10de, class 0680)
  std::optional<std::string> fm_load_state, fm_active_state, fm_result;  ///< systemctl show nvidia-fabricmanager
  std::optional<std::string> fm_version;       ///< nv-fabricmanager --version
  std::set<std::string> fi_providers;
  std::optional<std::string> instance_type;
  /// Bridges with PCIe ACS above the GPUs (facts "pci_acs:"): empty when none
  /// has it or the scan could not read extended config space (not root).
  std::vector<AcsPort> acs_ports;
  /// The IOMMU domain type of each GPU's group (facts "gpu_iommu:"): "DMA",
  /// "DMA-FQ" (translated), "identity" (passthrough); empty without an IOMMU.
  std::map<std::string, std::string> gpu_iommu;
  /// EDAC's corrected and uncorrected memory error counts (facts "edac:"):
  /// per controller and per DIMM; empty when no EDAC driver is loaded.
  std::vector<EdacCount> edac;

  /// Fills facts this one lacks from `o`.
  void merge(const HostObs& o);
};

/// One analysed source.
struct SourceResult {
  std::string name;        ///< evidence source (path given, or bundle path)
  std::string kind;        ///< detected kind ("kernel-log", "nccl", "nvidia-smi", ...)
  std::string origin;      ///< where it came from (file path, command line)
  std::uint64_t bytes = 0, lines = 0, long_lines = 0;
  bool gzip = false;
  std::string error;       ///< "" or why reading stopped early
  long events = 0;         ///< matched finding lines kept
  long dropped_old = 0;    ///< events before --since
  long untimed = 0;        ///< events without a timestamp (kept)
  long duplicates = 0;     ///< lines that were another line's event again (same report, another source)
  long past_events = 0;    ///< events before the window judged now (boot, --since): kept as info
  FindingSet findings;
  std::map<std::string, Signal> signals;
  /// Findings of rules that need context, per rule key, until resolve_source
  /// knows whether the context is there.
  std::map<std::string, FindingSet> pending;
  std::set<std::string> fired;  ///< keys of every rule that matched a line
  HostObs host;
};

}  // namespace nodeprobe::diag
