#include "host_checks.h"

#include <algorithm>
#include <set>

namespace nodeprobe::diag {
namespace {

constexpr const char* kSource = "host facts";

// `fold` keeps a cause apart from the entry's other causes (render groups by
// id and fold): a problem with a remedy of its own is a finding of its own.
void add(FindingSet& out, const std::string& id, const std::string& cause, Severity sev,
         const std::string& text, const Json& facts, const std::string& fold = "") {
  out.add({id, cause, fold}, sev, {kSource, 0, text}, std::nullopt, facts);
}

// "535.54.03" vs "535.54.03" (also tolerates "535.54" vs "535.54.03").
bool same_version(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& s = a.size() < b.size() ? a : b;
  const std::string& l = a.size() < b.size() ? b : a;
  return l.rfind(s, 0) == 0 && l.size() > s.size() && l[s.size()] == '.';
}

}  // namespace

bool cuda_version(const std::string& s, int* major, int* minor) {
  if (s.empty()) return false;
  std::size_t i = 0;
  long a = 0, b = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i < 8) a = a * 10 + (s[i++] - '0');
  if (i == 0) return false;
  if (i == s.size() && a >= 1000) {  // cudaDriverVersion style: 12020 -> 12.2
    *major = static_cast<int>(a / 1000);
    *minor = static_cast<int>((a % 1000) / 10);
    return true;
  }
  if (i >= s.size() || s[i] != '.') return false;
  ++i;
  const std::size_t j = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - j < 4) b = b * 10 + (s[i++] - '0');
  if (i == j) return false;
  *major = static_cast<int>(a);
  *minor = static_cast<int>(b);
  return true;
}

std::optional<std::string> cuda_runtime_newer(const std::string& runtime, const std::string& driver, Json* facts) {
  int rmaj = 0, rmin = 0, dmaj = 0, dmin = 0;
  if (!cuda_version(runtime, &rmaj, &rmin) || !cuda_version(driver, &dmaj, &dmin)) return std::nullopt;
  if (rmaj < dmaj || (rmaj == dmaj && rmin <= dmin)) return std::nullopt;
  *facts = {{"runtime_cuda", std::to_string(rmaj) + "." + std::to_string(rmin)},
            {"driver_cuda", std::to_string(dmaj) + "." + std::to_string(dmin)}};
  return rmaj > dmaj ? std::string() : std::string("minor_version");
}

// The control register as lspci -vv prints it ("SrcValid+ TransBlk- ReqRedir+ ...").
std::string acs_control_text(unsigned ctl) {
  static const char* const kNames[] = {"SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl",
                                       "DirectTrans"};
  std::string out;
  for (unsigned b = 0; b < 7; ++b) out += std::string(b ? " " : "") + kNames[b] + ((ctl >> b) & 1u ? "+" : "-");
  return out;
}

bool efa_expected_for(const std::string& instance_type, const Playbook& pb) {
  const InstanceInfo* ii = pb.instance(instance_type);
  return ii && ii->efa;
}

void host_checks(const HostObs& h, const std::string& instance_type, const Playbook& pb, FindingSet& out) {
  const InstanceInfo* ii = instance_type.empty() ? nullptr : pb.instance(instance_type);
  // ---- GPU presence: hardware, driver, what the driver shows ---------------------------
  if (h.gpus_on_pci) {
    if (*h.gpus_on_pci == 0) {
      if (ii && ii->gpus > 0)
        add(out, "gpu.not_found", "no_device", Severity::kError,
            "no NVIDIA device on the PCI bus; " + instance_type + " has " + std::to_string(ii->gpus),
            {{"instance_type", instance_type}, {"gpus_expected", ii->gpus}});
      else
        add(out, "gpu.not_found", "no_gpu_hardware", Severity::kUnknown,
            "no PCI device with vendor 10de (NVIDIA) on this node", Json::object());
    } else if (h.driver_loaded && !*h.driver_loaded) {
      add(out, "gpu.not_found", "driver_not_loaded", Severity::kUnknown,
          std::to_string(*h.gpus_on_pci) + " NVIDIA GPU(s) on the PCI bus; /proc/driver/nvidia/version absent",
          {{"gpus_on_pci", std::to_string(*h.gpus_on_pci)}});
    } else if (h.gpus_visible && *h.gpus_visible < *h.gpus_on_pci) {
      add(out, "gpu.not_found", "missing_gpus", Severity::kError,
          std::to_string(*h.gpus_on_pci) + " GPU(s) on the PCI bus, nvidia-smi lists " + std::to_string(*h.gpus_visible),
          {{"gpus_on_pci", std::to_string(*h.gpus_on_pci)}, {"gpus_visible", std::to_string(*h.gpus_visible)}});
    }
  }
  if (h.gpus_on_pci && *h.gpus_on_pci > 0 && h.module_on_disk && !*h.module_on_disk)
    add(out, "gpu.driver_kernel_mismatch", "module_missing", Severity::kUnknown,
        "modinfo finds no nvidia module for the running kernel",
        h.kernel_release ? Json{{"running_kernel", *h.kernel_release}} : Json::object());
  // A package listing with module build headers, none for the kernel that
  // runs (uname -r, else the only kernel the listing shows): DKMS cannot
  // build the nvidia module for it. A warning: a driver whose module was
  // built already, or a precompiled one, keeps working until the next build.
  // Not judged where a PCI scan found no NVIDIA GPU (a live node or bundle
  // without GPUs has no module to build); a pasted listing has no scan.
  if (!h.kernel_build_trees.empty() && !(h.gpus_on_pci && *h.gpus_on_pci == 0)) {
    std::optional<std::string> target = h.kernel_release;
    if (!target && h.kernel_images.size() == 1) target = *h.kernel_images.begin();
    if (target && !h.kernel_build_trees.count(*target)) {
      std::string have;
      for (const auto& b : h.kernel_build_trees) have += (have.empty() ? "" : ", ") + b;
      add(out, "gpu.driver_kernel_mismatch", "headers_missing", Severity::kWarn,
          "kernel " + *target + (h.kernel_release ? " runs" : " is the only kernel installed") + "; module build headers for " +
              have + " only" + (h.kernel_build_line ? " (" + *h.kernel_build_line + ")" : ""),
          {{"running_kernel", *target}, {"headers", have}});
    }
  }
  // ---- instance type: GPU count and model ----------------------------------------------
  if (ii && h.gpus_visible && *h.gpus_visible != ii->gpus && *h.gpus_visible > 0)
    add(out, "gpu.count_mismatch", "", Severity::kUnknown,
        "nvidia-smi lists " + std::to_string(*h.gpus_visible) + " GPU(s); " + instance_type + " has " +
            std::to_string(ii->gpus),
        {{"gpus_visible", std::to_string(*h.gpus_visible)}, {"gpus_expected", std::to_string(ii->gpus)},
         {"instance_type", instance_type}});
  if (ii && !h.gpu_models.empty()) {
    const bool match = std::all_of(h.gpu_models.begin(), h.gpu_models.end(), [&](const std::string& m) {
      return m.find(ii->gpu_model) != std::string::npos;
    });
    if (!match)
      add(out, "gpu.count_mismatch", "model_mismatch", Severity::kUnknown,
          "GPU model " + h.gpu_models.front() + ", expected " + ii->gpu_model + " for " + instance_type,
          {{"gpu_model", h.gpu_models.front()}, {"gpus_expected_model", ii->gpu_model}, {"instance_type", instance_type}});
  }
  // ---- driver components ------------------------------------------------------------------
  if (h.driver_version && h.nvml_lib_version && !same_version(*h.driver_version, *h.nvml_lib_version))
    add(out, "gpu.driver_kernel_mismatch", "library_mismatch", Severity::kUnknown,
        "kernel module " + *h.driver_version + ", libnvidia-ml " + *h.nvml_lib_version,
        {{"client_version", *h.nvml_lib_version}, {"module_version", *h.driver_version}});
  if (h.module_vermagic_kernel && h.kernel_release && *h.module_vermagic_kernel != *h.kernel_release)
    add(out, "gpu.driver_kernel_mismatch", "module_kernel_mismatch", Severity::kUnknown,
        "nvidia.ko vermagic " + *h.module_vermagic_kernel + ", running kernel " + *h.kernel_release,
        {{"module_kernel", *h.module_vermagic_kernel}, {"running_kernel", *h.kernel_release}});
  // ---- CUDA runtime vs driver ----------------------------------------------------------------
  Json cuda_facts;
  if (h.cuda_runtime && h.driver_cuda)
    if (const auto cause = cuda_runtime_newer(*h.cuda_runtime, *h.driver_cuda, &cuda_facts))
      add(out, "gpu.cuda_driver_insufficient", *cause, Severity::kUnknown,
          "CUDA runtime " + *h.cuda_runtime + ", driver supports CUDA " + *h.driver_cuda, cuda_facts);
  // ---- NVSwitch fabric: Fabric Manager running, at the driver's version ---------------------
  const bool nvswitch = (h.nvswitches && *h.nvswitches > 0) || (ii && ii->nvswitch);
  if (nvswitch && h.fm_load_state && *h.fm_load_state == "not-found")
    add(out, "gpu.fabric_manager", "not_running", Severity::kUnknown,
        "systemctl: nvidia-fabricmanager.service not found (not installed) on an NVSwitch node",
        {{"detail", "nvidia-fabricmanager is not installed"}});
  else if (nvswitch && h.fm_active_state && *h.fm_active_state != "active")
    add(out, "gpu.fabric_manager", "not_running", Severity::kUnknown,
        "systemctl: nvidia-fabricmanager ActiveState=" + *h.fm_active_state + (h.fm_result ? " Result=" + *h.fm_result : ""),
        {{"detail", "service " + *h.fm_active_state + (h.fm_result && *h.fm_result != "success" ? ", " + *h.fm_result : "")}});
  const std::optional<std::string>& drv = h.driver_version ? h.driver_version : h.smi_driver_version;
  if (h.fm_version && drv && !same_version(*h.fm_version, *drv))
    add(out, "gpu.fabric_manager", "version_mismatch", Severity::kUnknown,
        "nv-fabricmanager " + *h.fm_version + ", driver " + *drv,
        {{"fm_version", *h.fm_version}, {"driver_version", *drv}});
  // ---- PCIe ACS on the switches between GPUs -------------------------------------------------
  // Redirect or egress control on a switch port sends peer-to-peer traffic
  // between the GPUs below it up to the root complex (NCCL's troubleshooting
  // guide: slow P2P, or hangs with an IOMMU). Root ports are left out: traffic
  // between root ports goes through the root complex anyway.
  const bool multi_gpu = h.gpus_on_pci && *h.gpus_on_pci >= 2;
  if (multi_gpu) {
    std::set<std::string> bridges, gpus;
    const AcsPort* first = nullptr;
    for (const auto& a : h.acs_ports) {
      if (!a.switch_port || (a.ctl & kAcsP2pBits) == 0) continue;
      if (!first) first = &a;
      bridges.insert(a.bridge);
      gpus.insert(a.gpu);
    }
    if (first) {
      const std::string ctl = acs_control_text(first->ctl);
      add(out, "gpu.pcie_degraded", "acs_redirect", Severity::kUnknown,
          "ACSCtl: " + ctl + " on switch port " + first->bridge + " above GPU " + first->gpu + " (" +
              std::to_string(bridges.size()) + " switch port(s), " + std::to_string(gpus.size()) + " GPU(s) below them)",
          {{"bridge", first->bridge}, {"acsctl", ctl}, {"bridges", std::to_string(bridges.size())},
           {"gpus", std::to_string(gpus.size())}},
          "acs");
    }
  }
  // ---- IOMMU translating the GPUs' DMA ---------------------------------------------------------
  // With two or more GPUs in translated IOMMU domains (DMA, DMA-FQ) their
  // peer-to-peer DMA goes through the IOMMU: NCCL's troubleshooting guide
  // asks for iommu=pt (identity) on bare metal, since P2P can fail or hang.
  if (multi_gpu) {
    std::vector<std::string> translated;
    for (const auto& [gpu, type] : h.gpu_iommu)
      if (type == "DMA" || type == "DMA-FQ") translated.push_back(gpu);
    if (translated.size() >= 2)
      add(out, "gpu.pcie_degraded", "iommu_translation", Severity::kUnknown,
          std::to_string(translated.size()) + " GPUs in translated IOMMU domains (" + h.gpu_iommu.at(translated[0]) +
              "), first " + translated[0],
          {{"gpus", std::to_string(translated.size())}, {"iommu_domain", h.gpu_iommu.at(translated[0])},
           {"pci", translated[0]}},
          "iommu");
  }
  // ---- Host memory errors EDAC counted since boot ---------------------------------------------
  // Uncorrected errors lost data (a process was killed or the kernel
  // panicked); corrected ones are ECC at work, and a DIMM that keeps logging
  // them is failing. The counts are the controllers' (they include errors no
  // DIMM could be named for); the DIMM with the most errors is named.
  if (!h.edac.empty()) {
    long long ce = 0, ue = 0, dimm_ce = 0, dimm_ue = 0;
    bool controllers = false;
    const EdacCount* most_ce = nullptr;
    const EdacCount* most_ue = nullptr;
    for (const auto& e : h.edac) {
      if (e.dimm.empty()) {
        controllers = true;
        ce += e.ce;
        ue += e.ue;
        continue;
      }
      dimm_ce += e.ce;
      dimm_ue += e.ue;
      if (e.ce > 0 && (!most_ce || e.ce > most_ce->ce)) most_ce = &e;
      if (e.ue > 0 && (!most_ue || e.ue > most_ue->ue)) most_ue = &e;
    }
    if (!controllers) ce = dimm_ce, ue = dimm_ue;
    const auto report = [&](bool uncorrected, long long n, const EdacCount* d) {
      Json facts = {{"count", std::to_string(n)}};
      std::string where;
      if (d) {
        const std::string name = d->label.empty() ? d->dimm : d->label;
        facts["mc"] = d->mc.rfind("mc", 0) == 0 ? d->mc.substr(2) : d->mc;
        facts["dimm"] = name;
        where = " (most on " + d->mc + " " + name + ": " + std::to_string(uncorrected ? d->ue : d->ce) + ")";
      }
      add(out, "host.machine_check", uncorrected ? "memory_uncorrected" : "memory_corrected", Severity::kUnknown,
          "EDAC: " + std::to_string(n) + (uncorrected ? " uncorrected" : " corrected") + " memory error(s) since boot" + where +
              " (/sys/devices/system/edac/mc)",
          facts);
    };
    if (ue > 0) report(true, ue, most_ue);
    else if (ce > 0) report(false, ce, most_ce);
  }
  // ---- EFA ------------------------------------------------------------------------------------
  if (ii && ii->efa && h.efa_devices && *h.efa_devices == 0)
    add(out, "efa.missing", "", Severity::kUnknown, instance_type + " has EFA; no EFA device or provider found",
        {{"instance_type", instance_type}});
}

}  // namespace nodeprobe::diag
