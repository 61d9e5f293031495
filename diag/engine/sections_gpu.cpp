// Structured GPU outputs: the nvidia-smi table, nvidia-smi -q, nvidia-smi -L
// and lspci -vv link status.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <utility>

#include "host_checks.h"
#include "playbook.h"
#include "sections.h"
#include "text_util.h"

namespace nodeprobe::diag::sections {
namespace {

std::vector<std::string_view> split_bars(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t e = s.find('|', pos);
    out.push_back(trim(s.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos)));
    if (e == std::string_view::npos) break;
    pos = e + 1;
  }
  return out;
}

bool looks_like_bus_id(std::string_view s) {
  // 00000000:00:1E.0 (nvidia-smi) or 0000:3b:00.0
  const std::size_t c1 = s.find(':');
  if (c1 == std::string_view::npos || c1 < 4) return false;
  const std::size_t dot = s.find('.', c1);
  return dot != std::string_view::npos && dot < c1 + 7 && s.find(':', c1 + 1) < dot;
}

std::string value_after(std::string_view line, std::string_view key) {
  const std::size_t k = line.find(key);
  if (k == std::string_view::npos) return {};
  std::size_t p = k + key.size();
  while (p < line.size() && (line[p] == ' ' || line[p] == ':')) ++p;
  std::size_t e = p;
  while (e < line.size() && line[e] != ' ' && line[e] != '|') ++e;
  return std::string(line.substr(p, e - p));
}

// The clock-event reasons that slow a GPU down against its will, as -q names
// them and as --query-gpu's clocks_event_reasons.* (clocks_throttle_reasons.*)
// fields do.
constexpr std::pair<const char*, const char*> kSlowdowns[] = {{"HW Slowdown", "hw_slowdown"},
                                                             {"HW Thermal Slowdown", "hw_thermal_slowdown"},
                                                             {"HW Power Brake Slowdown", "hw_power_brake_slowdown"},
                                                             {"SW Thermal Slowdown", "sw_thermal_slowdown"}};

void add_throttled(SourceResult& r, const Line& l, const std::string& gpu, const std::vector<std::string>& reasons) {
  if (reasons.empty()) return;
  std::string joined;
  for (const auto& t : reasons) joined += (joined.empty() ? "" : ", ") + t;
  add(r, "gpu.compute_slow", "throttled", Severity::kUnknown, l, {{"gpu", gpu}, {"throttle_reasons", joined}});
}

// An Xid read from a table or a query rather than the kernel log: the facts
// the xid judge gives a kernel line, and the source's own words.
void add_xid(SourceResult& r, const Playbook& pb, const Line& l, int code, const std::string& gpu,
             const std::string& via, const Json& more = Json::object()) {
  const XidInfo x = pb.xid(code);
  Json facts = Playbook::xid_facts(x);
  facts["reported_as"] = via;
  if (!gpu.empty()) facts["pci"] = gpu;
  facts.update(more);
  add(r, "gpu.xid", x.cause, x.severity, l, facts, std::to_string(code));
}

// The driver's recovery action for a GPU (nvidia-smi -q "GPU Recovery
// Action", --query-gpu=gpu_recovery_action, R550+): anything but None is
// what the driver announces with Xid 154.
void recovery_needed(std::string_view v, SourceResult& r, const Playbook& pb, const Line& l, const std::string& gpu,
                     const std::string& via) {
  if (v != "Reset" && v != "Reboot" && v != "Drain P2P" && v != "Drain and Reset") return;
  add_xid(r, pb, l, 154, gpu, via + std::string(v),
          {{"xid_node_action", recovery_node_action(v)}, {"recovery_action", std::string(v)}});
}

// A GPU's row of nvidia-smi's table with "ERR!" in a field: NVML could not
// read it. Where the only such field is the power draw ("ERR! / 250W") it is
// one sensor that did not answer (sensor_unreadable, info); a fan,
// temperature, memory or utilisation field is a GPU in trouble (device_error).
void smi_err_field(SourceResult& r, const Line& l, long long gpu) {
  const std::string_view t = l.text;
  std::size_t errs = 0, power = 0;
  for (std::size_t at = 0; (at = t.find("ERR!", at)) != std::string_view::npos; at += 4) {
    ++errs;
    const std::size_t next = t.find_first_not_of(' ', at + 4);
    if (next != std::string_view::npos && t[next] == '/') ++power;
  }
  if (errs == 0) return;
  if (errs == power)
    add(r, "gpu.not_found", "sensor_unreadable", Severity::kUnknown, l,
        {{"gpu", std::to_string(gpu)}, {"unreadable", "power draw"}});
  else
    add(r, "gpu.not_found", "device_error", Severity::kUnknown, l, {{"gpu", std::to_string(gpu)}});
}

}  // namespace

void nvidia_smi_table(const std::vector<Line>& lines, SourceResult& r) {
  int in_table = 0;        // GPUs seen in the current table
  long long last_gpu = -1;  // the index of the GPU whose rows these are
  for (const auto& l : lines) {
    const std::string_view t = l.text;
    // The header names the versions "Driver Version" and "CUDA Version";
    // from R610 on, "KMD Version" and "CUDA UMD Version" (the kernel- and
    // user-mode drivers' own versions, NVIDIA's nvidia-smi documentation).
    const bool kmd = contains(t, "KMD Version");
    if (contains(t, "NVIDIA-SMI ") && (kmd || contains(t, "Driver Version"))) {
      in_table = 0;
      last_gpu = -1;
      r.host.smi_driver_version = value_after(t, kmd ? "KMD Version" : "Driver Version");
      const std::string cuda = value_after(t, contains(t, "CUDA UMD Version") ? "CUDA UMD Version" : "CUDA Version");
      if (!cuda.empty() && cuda != "N/A") r.host.driver_cuda = cuda;
      if (!r.host.gpus_visible) r.host.gpus_visible = 0;
      continue;
    }
    if (t.size() < 10 || t.front() != '|') continue;
    const auto f = split_bars(t);
    if (f.size() < 5) continue;
    // First row of a GPU: "| 0  Tesla V100-SXM2-16GB  On | 00000000:00:1E.0 Off | 0 |"
    const long long idx = leading_number(f[1]);
    const bool gpu_row = idx >= 0 && looks_like_bus_id(f[2]);
    if (gpu_row) last_gpu = idx;
    if (last_gpu >= 0) smi_err_field(r, l, last_gpu);
    // A table pasted without its header ("nvidia-smi\n[...]" and the rows of
    // the GPUs that matter) still says which GPU is in an error state, but
    // not how many GPUs the node has or which driver it runs.
    if (!gpu_row || !r.host.smi_driver_version) continue;
    ++in_table;
    r.host.gpus_visible = std::max(*r.host.gpus_visible, in_table);
    std::string_view name = trim(f[1].substr(f[1].find_first_not_of("0123456789")));
    for (std::string_view suffix : {" On", " Off"})
      if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
        name = trim(name.substr(0, name.size() - suffix.size()));
    if (r.host.gpu_models.size() < 16) r.host.gpu_models.emplace_back(name);
    const std::string ecc(f[3]);
    const long long n = leading_number(ecc);
    if (n > 0 && ecc.find_first_not_of("0123456789") == std::string::npos)
      add(r, "gpu.ecc", "uncorrectable", Severity::kError, l,
          {{"gpu", std::to_string(idx)}, {"uncorrectable_volatile", ecc}});
  }
}

void nvidia_smi_query(const std::vector<Line>& lines, const Playbook& pb, SourceResult& r) {
  struct GpuState {
    std::string id;
    std::vector<std::string> throttles;
    const Line* throttle_line = nullptr;
    std::map<std::string, std::string> link;  // "PCIe Generation/Max" -> value
    const Line* link_line = nullptr;
  };
  std::vector<std::pair<std::size_t, std::string>> stack;  // indent, section
  GpuState gpu;
  auto flush = [&]() {
    if (gpu.throttle_line) add_throttled(r, *gpu.throttle_line, gpu.id, gpu.throttles);
    if (gpu.link_line) {
      auto num = [&](const std::string& k) { return leading_number(gpu.link[k]); };
      const long long wmax = num("Link Width/Max"), wcur = num("Link Width/Current");
      const long long gmax = num("PCIe Generation/Max"), gcur = num("PCIe Generation/Current");
      if (wmax > 0 && wcur > 0 && wcur < wmax)
        add(r, "gpu.pcie_degraded", "width_downgraded", Severity::kUnknown, *gpu.link_line,
            {{"pci", gpu.id}, {"current_width", "x" + std::to_string(wcur)}, {"max_width", "x" + std::to_string(wmax)}});
      else if (gmax > 0 && gcur > 0 && gcur < gmax)
        add(r, "gpu.pcie_degraded", "speed_downgraded", Severity::kUnknown, *gpu.link_line,
            {{"pci", gpu.id}, {"current_speed", "Gen" + std::to_string(gcur)}, {"max_speed", "Gen" + std::to_string(gmax)}});
    }
    gpu = GpuState{};
  };
  // A whole report starts at "NVSMI LOG"; a pasted section (an indented
  // "Remapped Rows", "ECC Errors", "Clocks Event Reasons" or "GPU Link Info"
  // block) starts at its own header.
  bool seen = false;
  for (const auto& l : lines) {
    const std::string_view t = l.text;
    if (contains(t, "NVSMI LOG")) {
      seen = true;
      continue;
    }
    if (!seen && t.size() > 2 && t[0] == ' ' &&
        (contains(t, "Remapped Rows") || contains(t, "Retired Pages") || contains(t, "ECC Errors") ||
         contains(t, "Clocks Event Reasons") || contains(t, "Clocks Throttle Reasons") ||
         contains(t, "GPU Link Info")) &&
        !contains(t, " : "))
      seen = true;
    if (!seen) continue;
    const std::size_t indent = t.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    const std::string_view body = trim(t);
    while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
    const std::size_t sep = body.find(" : ");
    if (sep == std::string_view::npos && body.back() != ':') {  // a section header
      if (indent == 0 && starts_with(body, "GPU ")) {
        flush();
        gpu.id = std::string(trim(body.substr(4)));
      }
      stack.emplace_back(indent, std::string(body));
      continue;
    }
    const std::string key(trim(body.substr(0, sep == std::string_view::npos ? body.size() - 1 : sep)));
    const std::string value(sep == std::string_view::npos ? "" : trim(body.substr(sep + 3)));
    auto in = [&](std::string_view section) {
      return std::any_of(stack.begin(), stack.end(), [&](const auto& s) { return contains(s.second, section); });
    };
    if (stack.empty()) {
      // R610 prints "KMD Version" and "CUDA UMD Version" beside the old keys
      // (deprecated) and later alone: the new ones win.
      if (key == "KMD Version" || (key == "Driver Version" && !r.host.smi_driver_version))
        r.host.smi_driver_version = value;
      else if ((key == "CUDA UMD Version" || (key == "CUDA Version" && !r.host.driver_cuda)) && value != "N/A")
        r.host.driver_cuda = value;
      else if (key == "Attached GPUs" && leading_number(value) >= 0)
        r.host.gpus_visible = static_cast<int>(leading_number(value));
      continue;
    }
    if (key == "Product Name" && r.host.gpu_models.size() < 16) r.host.gpu_models.push_back(value);
    if (key == "GPU Recovery Action") recovery_needed(value, r, pb, l, gpu.id, "nvidia-smi -q GPU Recovery Action: ");
    if ((in("Clocks Throttle Reasons") || in("Clocks Event Reasons")) && value == "Active" &&
        std::any_of(std::begin(kSlowdowns), std::end(kSlowdowns), [&](const auto& k) { return key == k.first; })) {
      gpu.throttles.push_back(key);
      if (!gpu.throttle_line) gpu.throttle_line = &l;
    }
    if (in("GPU Link Info") && (key == "Max" || key == "Current") && !stack.empty()) {
      gpu.link[stack.back().second + "/" + key] = value;
      if (!gpu.link_line) gpu.link_line = &l;
    }
    if (in("ECC Errors") && in("Volatile") &&
        (contains(key, "Uncorrectable") || (in("Double Bit") && key == "Total"))) {
      const long long n = leading_number(value);
      if (n > 0) add(r, "gpu.ecc", "uncorrectable", Severity::kError, l, {{"gpu", gpu.id}, {"ecc_field", key}});
    }
    // Older nvidia-smi (R410-era and before) names the field plain "Pending"
    // under "Retired Pages"; later ones "Pending Page Blacklist".
    if ((key == "Pending Page Blacklist" || key == "Pending Page Retirement" ||
         (key == "Pending" && in("Retired Pages"))) &&
        value == "Yes")
      add(r, "gpu.ecc", "retirement_pending", Severity::kUnknown, l, {{"gpu", gpu.id}});
    if (in("Remapped Rows") && key == "Pending" && value == "Yes")
      add(r, "gpu.ecc", "remap_pending", Severity::kUnknown, l, {{"gpu", gpu.id}});
    if (key == "Remapping Failure Occurred" && value == "Yes")
      add(r, "gpu.ecc", "remap_failed", Severity::kUnknown, l, {{"gpu", gpu.id}, {"ecc_field", key}});
    // Fabric (NVSwitch systems): the GPU registers with Fabric Manager.
    if (in("Fabric") && key == "State" && (value == "In Progress" || value == "Not Started" || value == "Failed"))
      add(r, "gpu.fabric_manager", "not_initialized", Severity::kUnknown, l,
          {{"gpu", gpu.id}, {"detail", "nvidia-smi -q Fabric State: " + value}});
    if (in("Fabric") && key == "Status" && value != "Success" && value != "N/A" && !value.empty() &&
        value != "Not Supported")
      add(r, "gpu.fabric_manager", "training_failed", Severity::kUnknown, l,
          {{"gpu", gpu.id}, {"detail", "nvidia-smi -q Fabric Status: " + value}});
  }
  flush();
}

// A CUDA version as programs print it: "11.2", "12.4.131", or the
// cudaDriverGetVersion number ("11020"), read by cuda_version; "" where the
// text is none of those (a driver version such as 460.32 is not a CUDA version).
std::string cuda_version_token(std::string_view s) {
  const std::string v(s.substr(0, std::min(s.find_first_not_of("0123456789."), s.size())));
  int major = 0, minor = 0;
  return !v.empty() && v.front() != '.' && cuda_version(v, &major, &minor) && major < 100 ? v : "";
}

void cuda_version_pair(const std::vector<Line>& lines, SourceResult& r) {
  std::string driver, runtime;
  const Line* at = nullptr;  // the later line of the pair
  for (const auto& l : lines) {
    if (l.text.size() > 400) continue;
    std::string t(l.text);
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // deviceQuery: "CUDA Driver Version / Runtime Version          12.2 / 12.4"
    const std::size_t p = t.find("cuda driver version / runtime version");
    if (p != std::string::npos) {
      const std::string_view rest = trim(std::string_view(t).substr(p + 37));
      const std::string d = cuda_version_token(rest);
      const std::size_t slash = rest.find(" / ");
      const std::string rt = slash == std::string_view::npos ? "" : cuda_version_token(rest.substr(slash + 3));
      if (!d.empty() && !rt.empty()) {
        driver = d;
        runtime = rt;
        at = &l;
      }
      continue;
    }
    // "Cuda driver version: 11.2", "CUDA runtime API version: 11.4",
    // "Installed CUDA runtime version: 11.7", "CUDA Driver Version: 13000"
    const auto after = [&](std::string_view key) -> std::string {
      const std::size_t k = t.find(key);
      if (k == std::string::npos) return "";
      std::string_view rest = std::string_view(t).substr(k + key.size());
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':' || rest.front() == '=')) rest.remove_prefix(1);
      if (starts_with(rest, "is ")) rest.remove_prefix(3);
      return cuda_version_token(rest);
    };
    if (std::string d = after("cuda driver version"); !d.empty()) {
      driver = d;
      at = &l;
    }
    for (std::string_view key : {"cuda runtime api version", "cuda runtime version"})
      if (std::string rt = after(key); !rt.empty()) {
        runtime = rt;
        at = &l;
        break;
      }
  }
  // One program's own pair only: a runtime beside nvidia-smi's driver CUDA
  // (PyTorch's collect_env prints the toolkit on PATH as "CUDA runtime
  // version") is not what that program runs.
  if (driver.empty() || runtime.empty()) return;
  // A newer major needs a newer driver. A newer minor runs through
  // minor-version compatibility (only PTX JIT of newer code fails), and the
  // program that printed the pair ran: info.
  Json facts;
  if (const auto cause = cuda_runtime_newer(runtime, driver, &facts))
    add(r, "gpu.cuda_driver_insufficient", *cause, cause->empty() ? Severity::kUnknown : Severity::kInfo, *at, facts);
}

void nvidia_smi_list(const std::vector<Line>& lines, SourceResult& r) {
  int n = 0;
  std::vector<std::string> models;
  for (const auto& l : lines) {
    const std::string_view t = l.text;
    if (!starts_with(t, "GPU ") || !contains(t, "(UUID: GPU-")) continue;
    const std::size_t colon = t.find(": ");
    if (colon == std::string_view::npos) continue;
    ++n;
    const std::size_t paren = t.find(" (UUID");
    if (models.size() < 16) models.emplace_back(trim(t.substr(colon + 2, paren - colon - 2)));
  }
  if (n > 0 && !r.host.gpus_visible) {
    r.host.gpus_visible = n;
    r.host.gpu_models = models;
  }
}

void lspci_links(const std::vector<Line>& lines, SourceResult& r) {
  bool nvidia = false;
  std::string dev, cap_speed, cap_width;
  int gpus = 0;
  bool any_header = false;
  for (const auto& l : lines) {
    const std::string_view t = l.text;
    if (!t.empty() && t.front() != ' ' && t.front() != '\t') {
      // "3b:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 40GB] (rev a1)"
      const std::size_t sp = t.find(' ');
      nvidia = false;
      if (sp != std::string_view::npos && sp >= 7 && t[sp - 2] == '.' && contains(t.substr(0, sp), ":")) {
        any_header = true;
        dev = std::string(t.substr(0, sp));
        const std::string_view rest = t.substr(sp + 1);
        if (contains(rest, "NVIDIA") && (starts_with(rest, "3D controller") || starts_with(rest, "VGA compatible"))) {
          nvidia = true;
          ++gpus;
        }
      }
      cap_speed.clear();
      cap_width.clear();
      continue;
    }
    if (!nvidia) continue;
    const std::string_view b = trim(t);
    if (starts_with(b, "LnkCap:")) {
      cap_speed = value_after(b, "Speed");
      cap_width = value_after(b, "Width");
      if (!cap_speed.empty() && cap_speed.back() == ',') cap_speed.pop_back();
      if (!cap_width.empty() && cap_width.back() == ',') cap_width.pop_back();
    } else if (starts_with(b, "LnkSta:")) {
      const std::size_t w = b.find("Width ");
      const bool width_down = w != std::string_view::npos && contains(b.substr(w), "(downgraded)");
      const std::size_t sp = b.find("Speed ");
      const bool speed_down = sp != std::string_view::npos && w != std::string_view::npos &&
                              contains(b.substr(sp, w - sp), "(downgraded)");
      if (width_down) {
        std::string cur = value_after(b.substr(w), "Width");
        add(r, "gpu.pcie_degraded", "width_downgraded", Severity::kUnknown, l,
            {{"pci", dev}, {"current_width", cur}, {"max_width", cap_width.empty() ? "?" : cap_width}});
      } else if (speed_down) {
        std::string cur = value_after(b.substr(sp), "Speed");
        add(r, "gpu.pcie_degraded", "speed_downgraded", Severity::kUnknown, l,
            {{"pci", dev}, {"current_speed", cur}, {"max_speed", cap_speed.empty() ? "?" : cap_speed}});
      }
    }
  }
  if (any_header && gpus > 0 && !r.host.gpus_on_pci) r.host.gpus_on_pci = gpus;
}

}  // namespace nodeprobe::diag::sections

namespace nodeprobe::diag::sections {

// systemctl show nvidia-fabricmanager --property=Id,LoadState,ActiveState,...
// and nv-fabricmanager --version ("Fabric Manager version is : 535.104.05").
void fabric_manager(const std::vector<Line>& lines, SourceResult& r) {
  bool fm = false;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    if (starts_with(t, "Id=") && contains(t, "fabricmanager")) fm = true;
    const std::size_t v = t.find("version is");
    if (contains(t, "Fabric Manager") && v != std::string_view::npos) {
      std::string_view rest = trim(t.substr(v + 10));
      if (starts_with(rest, ":")) rest = trim(rest.substr(1));
      if (!rest.empty()) r.host.fm_version = std::string(rest.substr(0, rest.find(' ')));
    }
  }
  if (!fm) return;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    const std::size_t eq = t.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string key(t.substr(0, eq)), value(t.substr(eq + 1));
    if (key == "LoadState") r.host.fm_load_state = value;
    else if (key == "ActiveState") r.host.fm_active_state = value;
    else if (key == "Result") r.host.fm_result = value;
  }
}

void dcgmi_nvlink(const std::vector<Line>& lines, SourceResult& r) {
  // "GPUs:" / "    gpuId 0:" / "        U U D D ..." (Up=U, Down=D, Disabled=X, Not Supported=_)
  std::string gpu;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    if (starts_with(t, "gpuId ")) {
      gpu = std::string(t.substr(6, t.find(':') == std::string_view::npos ? std::string_view::npos : t.find(':') - 6));
      continue;
    }
    if (starts_with(t, "NvSwitches")) gpu.clear();
    if (gpu.empty() || t.empty()) continue;
    int up = 0, down = 0;
    bool grid = true;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const char c = t[i];
      if (c == ' ') continue;
      if ((i + 1 < t.size() && t[i + 1] != ' ') || !std::strchr("UDX_", c)) {
        grid = false;
        break;
      }
      up += c == 'U';
      down += c == 'D';
    }
    if (grid && down > 0)
      add(r, "gpu.nvlink", "links_inactive", Severity::kUnknown, l,
          {{"gpu", gpu}, {"active", std::to_string(up)}, {"links", std::to_string(up + down)}});
    gpu.clear();
  }
}

// nvidia-smi --query-gpu=... --format=csv: the field names from the header
// line ("index, gpu_recovery_action", units in brackets dropped) or, with
// noheader, from the command line pasted above the rows; then one row per
// GPU, comma-separated. Judged like the same fields of nvidia-smi -q.
void nvidia_smi_csv(const std::vector<Line>& lines, const Playbook& pb, SourceResult& r) {
  auto split_csv = [](std::string_view t) {
    std::vector<std::string> out;
    std::size_t b = 0;
    for (;;) {
      const std::size_t c = t.find(',', b);
      std::string f(trim(t.substr(b, c == std::string_view::npos ? std::string_view::npos : c - b)));
      if (const std::size_t u = f.find(" ["); u != std::string::npos && f.back() == ']') f.resize(u);
      out.push_back(std::move(f));
      if (c == std::string_view::npos) break;
      b = c + 1;
    }
    return out;
  };
  // The clock-slowdown fields under their old and new names (R535 renamed them).
  auto throttle_field = [](const std::string& f) {
    return f.rfind("clocks_throttle_reasons.", 0) == 0 || f.rfind("clocks_event_reasons.", 0) == 0;
  };
  // A header names at least one field judged below.
  auto known = [&](const std::string& f) {
    return f == "gpu_recovery_action" || f.rfind("retired_pages.", 0) == 0 || f.rfind("remapped_rows.", 0) == 0 ||
           f.rfind("ecc.errors.uncorrected.", 0) == 0 || throttle_field(f);
  };
  std::vector<std::string> fields;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    if (const std::size_t q = t.find("--query-gpu="); q != std::string_view::npos) {
      std::string_view spec = t.substr(q + 12);
      spec = spec.substr(0, spec.find_first_of(" \t"));
      if (!spec.empty() && (spec.front() == '"' || spec.front() == '\'')) spec = spec.substr(1);
      if (!spec.empty() && (spec.back() == '"' || spec.back() == '\'')) spec.remove_suffix(1);
      fields = contains(t, "noheader") ? split_csv(spec) : std::vector<std::string>();
      continue;
    }
    const std::vector<std::string> cells = split_csv(t);
    if (cells.size() >= 2 && std::any_of(cells.begin(), cells.end(), known) &&
        std::none_of(cells.begin(), cells.end(), [](const std::string& c) { return c.empty() || c.find(' ') != std::string::npos; })) {
      fields = cells;  // a header
      continue;
    }
    if (fields.empty() || cells.size() != fields.size()) {
      if (!t.empty() && cells.size() != fields.size()) fields.clear();
      continue;
    }
    std::string gpu;
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i] == "pci.bus_id" || (gpu.empty() && fields[i] == "index")) gpu = cells[i];
    std::vector<std::string> throttles;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const std::string& f = fields[i];
      // A comment the user typed after the value ("Reset   <= reset required") is not part of it.
      const std::string v = cells[i].substr(0, cells[i].find("  "));
      if (f == "gpu_recovery_action") recovery_needed(v, r, pb, l, gpu, "nvidia-smi --query-gpu gpu_recovery_action: ");
      else if (f == "retired_pages.pending" && v == "Yes") add(r, "gpu.ecc", "retirement_pending", Severity::kUnknown, l, {{"gpu", gpu}});
      else if (f == "remapped_rows.pending" && v == "Yes") add(r, "gpu.ecc", "remap_pending", Severity::kUnknown, l, {{"gpu", gpu}});
      else if (f == "remapped_rows.failure" && v == "Yes")
        add(r, "gpu.ecc", "remap_failed", Severity::kUnknown, l, {{"gpu", gpu}, {"ecc_field", f}});
      else if (f.rfind("ecc.errors.uncorrected.volatile.", 0) == 0 && leading_number(v) > 0)
        add(r, "gpu.ecc", "uncorrectable", Severity::kError, l, {{"gpu", gpu}, {"ecc_field", f}});
      else if (throttle_field(f) && v == "Active" &&
               std::any_of(std::begin(kSlowdowns), std::end(kSlowdowns),
                           [&](const auto& k) { return f.substr(f.find('.') + 1) == k.second; }))
        throttles.push_back(f.substr(f.find('.') + 1));
    }
    add_throttled(r, l, gpu, throttles);
  }
}

// dcgmi dmon: "#Entity   XIDER ..." then "GPU 1      120 ...": the last Xid
// per GPU (field 230, DCGM_FI_DEV_XID_ERRORS); 0 is none.
void dcgmi_dmon(const std::vector<Line>& lines, const Playbook& pb, SourceResult& r) {
  std::size_t col = std::string::npos;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    const auto w = words(t);
    if (!w.empty() && w[0] == "#Entity") {
      col = std::string::npos;
      for (std::size_t i = 1; i < w.size(); ++i)
        if (w[i] == "XIDER") col = i + 1;  // data rows have "GPU N" in two words
      continue;
    }
    if (col == std::string::npos || w.size() <= col || (w[0] != "GPU" && w[0] != "gpu")) continue;
    const long long code = leading_number(w[col]);
    if (code > 0 && code < 100000 && w[col].find_first_not_of("0123456789") == std::string_view::npos)
      add_xid(r, pb, l, static_cast<int>(code), std::string(w[1]), "dcgmi dmon XIDER");
  }
}

void nccl_tests_table(const std::vector<Line>& lines, SourceResult& r) {
  // "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong"
  std::vector<std::size_t> wrong_cols;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    if (starts_with(t, "#") && contains(t, "#wrong")) {
      wrong_cols.clear();
      std::size_t col = 0, pos = 1;  // the leading '#' is not a column
      while (pos < t.size()) {
        while (pos < t.size() && t[pos] == ' ') ++pos;
        const std::size_t e = t.find(' ', pos);
        const std::string_view w = t.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos);
        if (w.empty()) break;
        if (w == "#wrong") wrong_cols.push_back(col);
        ++col;
        pos = e == std::string_view::npos ? t.size() : e;
      }
      continue;
    }
    if (wrong_cols.empty() || t.empty() || !std::isdigit(static_cast<unsigned char>(t[0]))) continue;
    std::vector<std::string_view> w;
    for (std::size_t pos = 0; pos < t.size();) {
      while (pos < t.size() && t[pos] == ' ') ++pos;
      const std::size_t e = t.find(' ', pos);
      if (pos < t.size()) w.push_back(t.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos));
      pos = e == std::string_view::npos ? t.size() : e;
    }
    for (std::size_t c : wrong_cols) {
      if (c >= w.size()) continue;
      const long long n = leading_number(w[c]);
      if (n > 0)
        add(r, "gpu.compute_wrong", "collective_wrong", Severity::kUnknown, l,
            {{"wrong_values", std::to_string(n)}, {"size_bytes", std::string(w[0])}});
    }
  }
}

void nvml_inventory(const Json& nvml, const std::string& source, SourceResult& r) {
  if (!nvml.is_object() || !nvml.value("loaded", false) || !nvml.contains("gpus") || !nvml.at("gpus").is_array()) return;
  auto num = [](const Json& g, const char* k) -> long long {
    return g.contains(k) && g.at(k).is_number_integer() ? g.at(k).get<long long>() : -1;
  };
  auto yes = [](const Json& g, const char* k) { return g.contains(k) && g.at(k).is_boolean() && g.at(k).get<bool>(); };
  int n = 0;
  for (const auto& g : nvml.at("gpus")) {
    ++n;
    const std::string gpu = std::to_string(num(g, "index") >= 0 ? num(g, "index") : n - 1);
    const std::string pci = g.value("pci_bus_id", std::string());
    auto add_nvml = [&](const char* id, const char* cause, const std::string& text, Json facts) {
      facts["gpu"] = gpu;
      if (!pci.empty()) facts["pci"] = pci;
      r.findings.add({id, cause, ""}, Severity::kUnknown, {source, 0, clean_text(text)}, std::nullopt, facts);
    };
    const long long links = num(g, "nvlink_links"), active = num(g, "nvlink_active");
    if (links > 0 && active >= 0 && active < links)
      add_nvml("gpu.nvlink", "links_inactive",
               "NVML: GPU " + gpu + " has " + std::to_string(active) + " of " + std::to_string(links) + " NVLink links active",
               {{"links", std::to_string(links)}, {"active", std::to_string(active)}});
    if (yes(g, "remap_failure"))
      add_nvml("gpu.ecc", "remap_failed", "NVML: GPU " + gpu + " row remapping failure", Json::object());
    else if (yes(g, "remap_pending"))
      add_nvml("gpu.ecc", "remap_pending", "NVML: GPU " + gpu + " has rows pending remapping", Json::object());
    if (yes(g, "retired_pages_pending"))
      add_nvml("gpu.ecc", "retirement_pending", "NVML: GPU " + gpu + " has pages pending retirement", Json::object());
    if (num(g, "ecc_uncorrected_volatile") > 0)
      add_nvml("gpu.ecc", "uncorrectable",
               "NVML: GPU " + gpu + " volatile uncorrectable ECC errors: " + std::to_string(num(g, "ecc_uncorrected_volatile")),
               {{"ecc_field", "ecc_uncorrected_volatile"}});
  }
  if (!r.host.gpus_visible) r.host.gpus_visible = n;
  if (nvml.contains("driver_version") && nvml.at("driver_version").is_string() && !r.host.smi_driver_version)
    r.host.smi_driver_version = nvml.at("driver_version").get<std::string>();
}

}  // namespace nodeprobe::diag::sections
