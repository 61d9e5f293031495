#include "nvml.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "nodeprobe/shared_library.h"

namespace nodeprobe::gemm {
namespace {

// Our own minimal NVML declarations (the ABI is stable: these entry points and
// structs have not changed since the _v2/_v3 versions named here).
struct nvmlDevice_st;
using Dev = nvmlDevice_st*;
using Ret = int;
constexpr Ret kSuccess = 0;

struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlPciInfo {  // nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (Hopper)

// nvmlFieldValue_t (nvml.h; the layout has not changed since NVML 9).
union NvmlValue {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  signed long long sll;
};
struct NvmlFieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;  // nvmlValueType_t
  Ret nvml_return;
  NvmlValue value;
};
constexpr unsigned kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT, milliwatts

double field_as_double(const NvmlFieldValue& f) {
  switch (f.value_type) {
    case 0: return f.value.d;
    case 1: return f.value.ui;
    case 2: return static_cast<double>(f.value.ul);
    case 3: return static_cast<double>(f.value.ull);
    case 4: return static_cast<double>(f.value.sll);
    default: return -1;
  }
}

}  // namespace

struct Nvml::Api {
  SharedLibrary lib;
  Ret (*init)() = nullptr;
  Ret (*shutdown)() = nullptr;
  const char* (*error_string)(Ret) = nullptr;
  Ret (*get_count)(unsigned*) = nullptr;
  Ret (*get_handle)(unsigned, Dev*) = nullptr;
  Ret (*driver_version)(char*, unsigned) = nullptr;
  Ret (*cuda_driver_version)(int*) = nullptr;
  Ret (*name)(Dev, char*, unsigned) = nullptr;
  Ret (*uuid)(Dev, char*, unsigned) = nullptr;
  Ret (*pci_info)(Dev, NvmlPciInfo*) = nullptr;
  Ret (*compute_capability)(Dev, int*, int*) = nullptr;
  Ret (*memory)(Dev, NvmlMemory*) = nullptr;
  Ret (*persistence)(Dev, int*) = nullptr;
  Ret (*ecc_mode)(Dev, int*, int*) = nullptr;
  Ret (*ecc_errors)(Dev, int, int, unsigned long long*) = nullptr;
  Ret (*retired_pages)(Dev, int, unsigned*, unsigned long long*) = nullptr;
  Ret (*retired_pending)(Dev, int*) = nullptr;
  Ret (*remapped_rows)(Dev, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  Ret (*clock)(Dev, int, unsigned*) = nullptr;
  Ret (*max_clock)(Dev, int, unsigned*) = nullptr;
  Ret (*power_limit)(Dev, unsigned*) = nullptr;
  Ret (*power_usage)(Dev, unsigned*) = nullptr;
  Ret (*temperature)(Dev, int, unsigned*) = nullptr;
  Ret (*pcie_gen)(Dev, unsigned*) = nullptr;
  Ret (*pcie_gen_max)(Dev, unsigned*) = nullptr;
  Ret (*pcie_width)(Dev, unsigned*) = nullptr;
  Ret (*pcie_width_max)(Dev, unsigned*) = nullptr;
  Ret (*nvlink_state)(Dev, unsigned, int*) = nullptr;
  Ret (*throttle)(Dev, unsigned long long*) = nullptr;
  Ret (*mig_mode)(Dev, unsigned*, unsigned*) = nullptr;
  Ret (*max_mig)(Dev, unsigned*) = nullptr;
  Ret (*mig_handle)(Dev, unsigned, Dev*) = nullptr;
  Ret (*field_values)(Dev, int, NvmlFieldValue*) = nullptr;
  Ret (*energy)(Dev, unsigned long long*) = nullptr;

  template <class F>
  void bind(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(lib.symbol(symbol));
  }
  std::string err(Ret rc) const {
    const char* s = error_string ? error_string(rc) : nullptr;
    return (s ? std::string(s) : std::string("NVML error")) + " (" + std::to_string(rc) + ")";
  }
};

Nvml::Nvml(std::string library) : api_(std::make_unique<Api>()) {
  if (library.empty()) {
    const char* env = std::getenv("NODEPROBE_NVML_LIBRARY");
    library = env && *env ? env : "libnvidia-ml.so.1";
  }
  inv_.library = library;
  api_->lib = SharedLibrary::open(library);
  if (!api_->lib.ok()) {
    inv_.error = api_->lib.error() + " (no NVIDIA driver installed?)";
    return;
  }
  Api& a = *api_;
  a.bind(a.init, "nvmlInit_v2");
  a.bind(a.shutdown, "nvmlShutdown");
  a.bind(a.error_string, "nvmlErrorString");
  a.bind(a.get_count, "nvmlDeviceGetCount_v2");
  a.bind(a.get_handle, "nvmlDeviceGetHandleByIndex_v2");
  const char* missing = !a.init         ? "nvmlInit_v2"
                        : !a.shutdown   ? "nvmlShutdown"
                        : !a.get_count  ? "nvmlDeviceGetCount_v2"
                        : !a.get_handle ? "nvmlDeviceGetHandleByIndex_v2"
                                        : nullptr;
  if (missing) {
    inv_.error = library + " lacks " + missing + ": not a usable NVML library";
    return;
  }
  a.bind(a.driver_version, "nvmlSystemGetDriverVersion");
  a.bind(a.cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2");
  if (!a.cuda_driver_version) a.bind(a.cuda_driver_version, "nvmlSystemGetCudaDriverVersion");
  a.bind(a.name, "nvmlDeviceGetName");
  a.bind(a.uuid, "nvmlDeviceGetUUID");
  a.bind(a.pci_info, "nvmlDeviceGetPciInfo_v3");
  a.bind(a.compute_capability, "nvmlDeviceGetCudaComputeCapability");
  a.bind(a.memory, "nvmlDeviceGetMemoryInfo");
  a.bind(a.persistence, "nvmlDeviceGetPersistenceMode");
  a.bind(a.ecc_mode, "nvmlDeviceGetEccMode");
  a.bind(a.ecc_errors, "nvmlDeviceGetTotalEccErrors");
  a.bind(a.retired_pages, "nvmlDeviceGetRetiredPages");
  a.bind(a.retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
  a.bind(a.remapped_rows, "nvmlDeviceGetRemappedRows");
  a.bind(a.clock, "nvmlDeviceGetClockInfo");
  a.bind(a.max_clock, "nvmlDeviceGetMaxClockInfo");
  a.bind(a.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  a.bind(a.power_usage, "nvmlDeviceGetPowerUsage");
  a.bind(a.temperature, "nvmlDeviceGetTemperature");
  a.bind(a.pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  a.bind(a.pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  a.bind(a.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  a.bind(a.pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  a.bind(a.nvlink_state, "nvmlDeviceGetNvLinkState");
  a.bind(a.throttle, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!a.throttle) a.bind(a.throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  a.bind(a.mig_mode, "nvmlDeviceGetMigMode");
  a.bind(a.max_mig, "nvmlDeviceGetMaxMigDeviceCount");
  a.bind(a.mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex");
  a.bind(a.field_values, "nvmlDeviceGetFieldValues");
  a.bind(a.energy, "nvmlDeviceGetTotalEnergyConsumption");

  inv_.init_rc = a.init();
  if (inv_.init_rc != kSuccess) {
    inv_.error = "nvmlInit_v2 failed: " + a.err(inv_.init_rc);
    return;
  }
  inv_.loaded = true;
  collect();
}

Nvml::~Nvml() {
  if (inv_.loaded && api_->shutdown) api_->shutdown();
}

void Nvml::collect() {
  Api& a = *api_;
  char buf[128];
  if (a.driver_version && a.driver_version(buf, sizeof buf) == kSuccess) inv_.driver_version = buf;
  if (a.cuda_driver_version) {
    int v = 0;
    if (a.cuda_driver_version(&v) == kSuccess) inv_.cuda_driver_version = v;
  }
  unsigned count = 0;
  if (const Ret rc = a.get_count(&count); rc != kSuccess) {
    inv_.error = "nvmlDeviceGetCount_v2 failed: " + a.err(rc);
    return;
  }
  for (unsigned i = 0; i < count; ++i) {
    NvmlGpu g;
    g.index = i;
    Dev d = nullptr;
    if (a.get_handle(i, &d) != kSuccess) {
      g.name = "(unreadable)";
      inv_.gpus.push_back(g);
      continue;
    }
    unsigned u = 0, u2 = 0, u3 = 0, u4 = 0;
    int x = 0, y = 0;
    unsigned long long ull = 0;
    if (a.name && a.name(d, buf, sizeof buf) == kSuccess) g.name = buf;
    if (a.uuid && a.uuid(d, buf, sizeof buf) == kSuccess) g.uuid = buf;
    NvmlPciInfo pci{};
    if (a.pci_info && a.pci_info(d, &pci) == kSuccess) g.pci_bus_id = pci.bus_id;
    if (a.compute_capability && a.compute_capability(d, &x, &y) == kSuccess) {
      g.cc_major = x;
      g.cc_minor = y;
    }
    NvmlMemory mem{};
    if (a.memory && a.memory(d, &mem) == kSuccess) {
      g.memory_total = static_cast<long long>(mem.total);
      g.memory_used = static_cast<long long>(mem.used);
    }
    if (a.persistence && a.persistence(d, &x) == kSuccess) g.persistence_mode = x;
    if (a.ecc_mode && a.ecc_mode(d, &x, &y) == kSuccess) {
      g.ecc_current = x;
      g.ecc_pending = y;
    }
    if (a.ecc_errors) {
      // (error type, counter type): corrected 0 / uncorrected 1; volatile 0 / aggregate 1.
      if (a.ecc_errors(d, 0, 0, &ull) == kSuccess) g.ecc_corrected_volatile = static_cast<long long>(ull);
      if (a.ecc_errors(d, 1, 0, &ull) == kSuccess) g.ecc_uncorrected_volatile = static_cast<long long>(ull);
      if (a.ecc_errors(d, 0, 1, &ull) == kSuccess) g.ecc_corrected_aggregate = static_cast<long long>(ull);
      if (a.ecc_errors(d, 1, 1, &ull) == kSuccess) g.ecc_uncorrected_aggregate = static_cast<long long>(ull);
    }
    if (a.retired_pages) {
      // Count only: a zero-sized buffer returns the number of retired pages.
      u = 0;
      Ret rc = a.retired_pages(d, 0, &u, nullptr);
      if (rc == kSuccess || rc == 7 /* INSUFFICIENT_SIZE */) g.retired_pages_sbe = u;
      u = 0;
      rc = a.retired_pages(d, 1, &u, nullptr);
      if (rc == kSuccess || rc == 7) g.retired_pages_dbe = u;
    }
    if (a.retired_pending && a.retired_pending(d, &x) == kSuccess) g.retired_pending = x;
    if (a.remapped_rows && a.remapped_rows(d, &u, &u2, &u3, &u4) == kSuccess) {
      g.remapped_correctable = u;
      g.remapped_uncorrectable = u2;
      g.remap_pending = static_cast<int>(u3);
      g.remap_failure = static_cast<int>(u4);
    }
    if (a.max_clock && a.max_clock(d, 1, &u) == kSuccess) g.sm_clock_max_mhz = static_cast<int>(u);
    if (a.max_clock && a.max_clock(d, 2, &u) == kSuccess) g.mem_clock_max_mhz = static_cast<int>(u);
    if (a.clock && a.clock(d, 2, &u) == kSuccess) g.mem_clock_mhz = static_cast<int>(u);
    if (a.power_limit && a.power_limit(d, &u) == kSuccess) g.power_limit_w = u / 1000.0;
    if (a.pcie_gen_max && a.pcie_gen_max(d, &u) == kSuccess) g.pcie_gen_max = static_cast<int>(u);
    if (a.pcie_width_max && a.pcie_width_max(d, &u) == kSuccess) g.pcie_width_max = static_cast<int>(u);
    if (a.nvlink_state) {
      int links = 0, active = 0;
      for (unsigned l = 0; l < kNvlinkMaxLinks; ++l) {
        int state = 0;
        if (a.nvlink_state(d, l, &state) != kSuccess) continue;
        ++links;
        active += state == 1;
      }
      if (links > 0) {
        g.nvlink_links = links;
        g.nvlink_active = active;
      }
    }
    if (a.mig_mode && a.mig_mode(d, &u, &u2) == kSuccess) {
      g.mig_mode = static_cast<int>(u);
      g.mig_mode_pending = static_cast<int>(u2);
    }
    if (g.mig_mode == 1 && a.max_mig && a.mig_handle && a.max_mig(d, &u) == kSuccess) {
      // Indices with no MIG device answer NOT_FOUND: walk them all.
      for (unsigned m = 0; m < u; ++m) {
        Dev md = nullptr;
        if (a.mig_handle(d, m, &md) != kSuccess) continue;
        NvmlMig mig;
        mig.index = m;
        if (a.name && a.name(md, buf, sizeof buf) == kSuccess) mig.name = buf;
        if (a.uuid && a.uuid(md, buf, sizeof buf) == kSuccess) mig.uuid = buf;
        NvmlMemory mm{};
        if (a.memory && a.memory(md, &mm) == kSuccess) mig.memory_total = static_cast<long long>(mm.total);
        g.migs.push_back(mig);
      }
    }
    inv_.gpus.push_back(g);
    const NvmlSample s = sample(i);
    NvmlGpu& back = inv_.gpus.back();
    back.pcie_gen = s.pcie_gen;
    back.pcie_width = s.pcie_width;
    back.sm_clock_mhz = s.sm_clock_mhz;
    back.power_draw_w = s.power_draw_w;
    back.temperature_c = s.temperature_c;
    back.throttle_reasons = s.throttle_reasons;
  }
}

NvmlSample Nvml::sample(unsigned index) const {
  NvmlSample s;
  if (!inv_.loaded) return s;
  const Api& a = *api_;
  Dev d = nullptr;
  if (a.get_handle(index, &d) != kSuccess) return s;
  unsigned u = 0;
  unsigned long long ull = 0;
  if (a.pcie_gen && a.pcie_gen(d, &u) == kSuccess) s.pcie_gen = static_cast<int>(u);
  if (a.pcie_width && a.pcie_width(d, &u) == kSuccess) s.pcie_width = static_cast<int>(u);
  if (a.clock && a.clock(d, 1, &u) == kSuccess) s.sm_clock_mhz = static_cast<int>(u);
  if (a.power_usage && a.power_usage(d, &u) == kSuccess) s.power_draw_w = u / 1000.0;
  if (a.field_values) {
    NvmlFieldValue f{};
    f.field_id = kFieldPowerInstant;
    if (a.field_values(d, 1, &f) == kSuccess && f.nvml_return == kSuccess) {
      const double mw = field_as_double(f);
      if (mw >= 0) s.power_instant_w = mw / 1000.0;
    }
  }
  if (a.energy && a.energy(d, &ull) == kSuccess) s.energy_mj = static_cast<long long>(ull);
  if (a.temperature && a.temperature(d, 0, &u) == kSuccess) s.temperature_c = static_cast<int>(u);
  if (a.throttle && a.throttle(d, &ull) == kSuccess) s.throttle_reasons = static_cast<long long>(ull);
  return s;
}

int Nvml::index_of_uuid(const std::string& uuid) const {
  if (uuid.empty()) return -1;
  for (const auto& g : inv_.gpus) {
    if (g.uuid == uuid) return static_cast<int>(g.index);
    for (const auto& m : g.migs)
      if (m.uuid == uuid) return static_cast<int>(g.index);
  }
  return -1;
}

int Nvml::mig_enabled_count() const {
  return static_cast<int>(std::count_if(inv_.gpus.begin(), inv_.gpus.end(),
                                        [](const NvmlGpu& g) { return g.mig_mode == 1; }));
}

int Nvml::mig_device_count() const {
  int n = 0;
  for (const auto& g : inv_.gpus) n += static_cast<int>(g.migs.size());
  return n;
}

long long abnormal_throttle(long long mask) {
  // HwSlowdown 0x8, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40, HwPowerBrakeSlowdown 0x80.
  return mask < 0 ? 0 : mask & (0x8 | 0x20 | 0x40 | 0x80);
}

Json to_json(const NvmlGpu& g) {
  Json j = Json::object();
  j["index"] = g.index;
  j["name"] = g.name;
  j["uuid"] = g.uuid;
  if (!g.pci_bus_id.empty()) j["pci_bus_id"] = g.pci_bus_id;
  auto put = [&](const char* key, long long v) {
    if (v >= 0) j[key] = v;
  };
  auto putd = [&](const char* key, double v) {
    if (v >= 0) j[key] = v;
  };
  if (g.cc_major >= 0) j["compute_capability"] = std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
  put("memory_total_bytes", g.memory_total);
  put("memory_used_bytes", g.memory_used);
  if (g.persistence_mode >= 0) j["persistence_mode"] = g.persistence_mode == 1;
  if (g.ecc_current >= 0) j["ecc_enabled"] = g.ecc_current == 1;
  if (g.ecc_pending >= 0) j["ecc_enabled_pending"] = g.ecc_pending == 1;
  put("ecc_corrected_volatile", g.ecc_corrected_volatile);
  put("ecc_uncorrected_volatile", g.ecc_uncorrected_volatile);
  put("ecc_corrected_aggregate", g.ecc_corrected_aggregate);
  put("ecc_uncorrected_aggregate", g.ecc_uncorrected_aggregate);
  put("retired_pages_single_bit", g.retired_pages_sbe);
  put("retired_pages_double_bit", g.retired_pages_dbe);
  if (g.retired_pending >= 0) j["retired_pages_pending"] = g.retired_pending == 1;
  put("remapped_rows_correctable", g.remapped_correctable);
  put("remapped_rows_uncorrectable", g.remapped_uncorrectable);
  if (g.remap_pending >= 0) j["remap_pending"] = g.remap_pending == 1;
  if (g.remap_failure >= 0) j["remap_failure"] = g.remap_failure == 1;
  put("sm_clock_mhz", g.sm_clock_mhz);
  put("sm_clock_max_mhz", g.sm_clock_max_mhz);
  put("mem_clock_mhz", g.mem_clock_mhz);
  put("mem_clock_max_mhz", g.mem_clock_max_mhz);
  putd("power_limit_w", g.power_limit_w);
  putd("power_draw_w", g.power_draw_w);
  put("temperature_c", g.temperature_c);
  put("pcie_gen", g.pcie_gen);
  put("pcie_gen_max", g.pcie_gen_max);
  put("pcie_width", g.pcie_width);
  put("pcie_width_max", g.pcie_width_max);
  put("nvlink_links", g.nvlink_links);
  put("nvlink_active", g.nvlink_active);
  if (g.mig_mode >= 0) j["mig_mode"] = g.mig_mode == 1;
  if (g.mig_mode_pending >= 0 && g.mig_mode_pending != g.mig_mode) j["mig_mode_pending"] = g.mig_mode_pending == 1;
  if (!g.migs.empty()) {
    Json migs = Json::array();
    for (const auto& m : g.migs) {
      Json mj = {{"index", m.index}, {"name", m.name}, {"uuid", m.uuid}};
      if (m.memory_total >= 0) mj["memory_total_bytes"] = m.memory_total;
      migs.push_back(mj);
    }
    j["mig_devices"] = migs;
  }
  if (g.throttle_reasons >= 0) j["throttle_reasons"] = describe_throttle_reasons(g.throttle_reasons);
  return j;
}

Json to_json(const NvmlSample& s) {
  Json j = Json::object();
  if (s.pcie_gen >= 0) j["pcie_gen"] = s.pcie_gen;
  if (s.pcie_width >= 0) j["pcie_width"] = s.pcie_width;
  if (s.sm_clock_mhz >= 0) j["sm_clock_mhz"] = s.sm_clock_mhz;
  if (s.power_draw_w >= 0) j["power_draw_w"] = s.power_draw_w;
  if (s.power_instant_w >= 0) j["power_instant_w"] = s.power_instant_w;
  if (s.energy_mj >= 0) j["energy_mj"] = s.energy_mj;
  if (s.temperature_c >= 0) j["temperature_c"] = s.temperature_c;
  if (s.throttle_reasons >= 0) j["throttle_reasons"] = describe_throttle_reasons(s.throttle_reasons);
  return j;
}

}  // namespace nodeprobe::gemm
