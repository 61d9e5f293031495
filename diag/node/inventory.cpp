#include "inventory.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

namespace nodeprobe::diag {
namespace {

std::string decode_octal(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

GpuInventory gpu_inventory(const FsRoot& fs, const Json& host_gpus) {
  GpuInventory inv;
  if (host_gpus.is_array() && !host_gpus.empty()) {
    inv.source = "host.gpus (probe)";
    for (const auto& g : host_gpus) {
      std::string name = "unknown";
      for (const char* k : {"name", "model", "product"})
        if (g.is_object() && g.contains(k) && g[k].is_string()) {
          name = g[k].get<std::string>();
          break;
        }
      inv.models.push_back(name);
    }
    inv.count = static_cast<int>(inv.models.size());
    return inv;
  }
  const auto dirs = fs.list_dir("/proc/driver/nvidia/gpus");
  if (dirs.empty()) {
    inv.source = "none";
    return inv;
  }
  inv.source = "/proc/driver/nvidia/gpus";
  for (const auto& d : dirs) {
    std::string model = "unknown";
    if (auto text = fs.read("/proc/driver/nvidia/gpus/" + d + "/information")) {
      std::istringstream in(*text);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("Model:", 0) == 0) {
          model = trim(line.substr(6));
          break;
        }
    }
    inv.models.push_back(model);
  }
  inv.count = static_cast<int>(inv.models.size());
  return inv;
}

bool nvidia_gpu_present(const FsRoot& fs) {
  return !fs.list_dir("/proc/driver/nvidia/gpus").empty() || fs.exists("/dev/nvidia0");
}

EfaInventory efa_inventory(const FsRoot& fs) {
  EfaInventory inv;
  inv.source = "/sys/class/infiniband";
  for (const auto& dev : fs.list_dir("/sys/class/infiniband")) {
    std::error_code ec;
    const auto target =
        std::filesystem::read_symlink(fs.resolve("/sys/class/infiniband/" + dev + "/device/driver"), ec);
    if (!ec && target.filename() == "efa") inv.devices.push_back(dev);
  }
  inv.count = static_cast<int>(inv.devices.size());
  return inv;
}

std::vector<MountEntry> parse_mounts(const std::string& text) {
  std::vector<MountEntry> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto f = split_ws(line);
    if (f.size() < 4) continue;
    out.push_back({decode_octal(f[0]), decode_octal(f[1]), f[2], f[3]});
  }
  return out;
}

std::string choose_data_dir(const std::vector<MountEntry>& mounts, const FreeBytesFn& free_bytes,
                            const std::string& fallback) {
  static const std::set<std::string> kLocal = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "jfs"};
  std::string best;
  double best_free = 0;
  for (const auto& m : mounts) {
    if (!kLocal.count(m.type) || m.dir == "/" || m.dir.rfind("/boot", 0) == 0 ||
        m.dir.rfind("/efi", 0) == 0 || m.dir.rfind("/proc", 0) == 0 || m.dir.rfind("/sys", 0) == 0)
      continue;
    const auto opts = "," + m.options + ",";
    if (opts.find(",ro,") != std::string::npos) continue;
    const auto f = free_bytes(m.dir);
    if (f && *f > best_free) best = m.dir, best_free = *f;
  }
  return best.empty() ? fallback : best;
}

std::optional<double> live_free_bytes(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0 || ::access(dir.c_str(), W_OK) != 0) return std::nullopt;
  return static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
}

}  // namespace nodeprobe::diag
