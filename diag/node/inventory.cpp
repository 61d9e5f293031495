#include "inventory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

namespace nodeprobe::diag {

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

std::string fs_type_of(const std::vector<MountEntry>& mounts, const std::string& dir) {
  std::string type;
  std::size_t best = 0;
  for (const auto& m : mounts) {
    const bool covers = m.dir == "/" || dir == m.dir || dir.rfind(m.dir + "/", 0) == 0;
    if (covers && m.dir.size() >= best) best = m.dir.size(), type = m.type;  // later mounts hide earlier ones
  }
  return type;
}

DataDirChoice choose_data_dir(const std::vector<MountEntry>& mounts, const FreeBytesFn& free_bytes,
                              const std::string& tmp) {
  static const std::set<std::string> kMemory = {"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"};
  // System places: a dataset there fills the system volume or lands in a
  // bind mount of it (/run/netns in containers; files such as /etc/hosts).
  std::string best, best_type;
  double best_free = 0;
  for (const auto& m : mounts) {
    if (!data_volume(m)) continue;
    const auto f = free_bytes(m.dir);  // nullopt: a file bind-mounted, or not writable
    if (f && *f > best_free) best = m.dir, best_type = m.type, best_free = *f;
  }
  char gb[32];
  if (!best.empty()) {
    std::snprintf(gb, sizeof gb, "%.0f", best_free / 1e9);
    return {best, "the writable local filesystem with the most free space (" + best_type + ", " + gb + " GB free)"};
  }
  const std::string tmp_type = fs_type_of(mounts, tmp);
  if (!kMemory.count(tmp_type))
    return {tmp, "no separate local data filesystem; " + tmp + " is on " + (tmp_type.empty() ? "disk" : tmp_type)};
  const std::string var_tmp = "/var/tmp";
  const std::string var_type = fs_type_of(mounts, var_tmp);
  if (!kMemory.count(var_type) && free_bytes(var_tmp))
    return {var_tmp, "no separate local data filesystem and " + tmp + " is " + tmp_type + " (memory); " + var_tmp +
                         " is on " + (var_type.empty() ? "disk" : var_type)};
  return {tmp, tmp + " is " + tmp_type + " (memory-backed: IO numbers are memory speed); give --data-dir DIR on a disk"};
}

std::optional<double> live_free_bytes(const std::string& dir) {
  struct stat sb {};
  if (::stat(dir.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode)) return std::nullopt;  // /etc/hosts is a mount point too
  const auto space = fs_space(dir);
  if (!space || ::access(dir.c_str(), W_OK) != 0) return std::nullopt;
  return static_cast<double>(space->free_bytes);
}

}  // namespace nodeprobe::diag
