#include "collector.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/stop.h"
#include "nodeprobe/redact.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/version.h"
#include "observations.h"
#include "text_util.h"

namespace nodeprobe::diag {
namespace {

constexpr const char* kSysctls[][2] = {
    {"kernel.shmmax", "/proc/sys/kernel/shmmax"},
    {"kernel.shmall", "/proc/sys/kernel/shmall"},
    {"vm.max_map_count", "/proc/sys/vm/max_map_count"},
    {"net.core.somaxconn", "/proc/sys/net/core/somaxconn"},
    {"net.core.netdev_max_backlog", "/proc/sys/net/core/netdev_max_backlog"},
    {"kernel.numa_balancing", "/proc/sys/kernel/numa_balancing"},
    {"kernel.dmesg_restrict", "/proc/sys/kernel/dmesg_restrict"},
};

class Collection {
 public:
  Collection(const CollectOptions& opt, std::string dir, Manifest& m) : opt_(opt), dir_(std::move(dir)), m_(m) {}

  std::string path(const std::string& rel) const { return dir_ + "/" + rel; }

  void record(const std::string& rel, const std::string& origin, const std::string& status,
              const std::string& reason, std::uint64_t bytes) {
    m_.files.push_back({rel, origin, status, clean_text(reason, 300), bytes});
  }

  // Into the collection directory this run made: created exclusively, never
  // through a link (a name written twice is replaced).
  bool put(const std::string& rel, const std::string& text, bool redacted = false) {
    // Every file of the bundle is redacted here (nodeprobe/redact.h); `redacted`:
    // a report, redacted field by field already.
    const std::string data = redacted ? text : redact_secrets(text);
    const std::string p = path(rel);
    mkdirs(p.substr(0, p.rfind('/')));
    ::unlink(p.c_str());
    const int fd = create_new_file(AT_FDCWD, p, 0600);
    if (fd < 0) return false;
    bool ok = true;
    for (std::size_t off = 0; ok && off < data.size();) {
      const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) off += static_cast<std::size_t>(n);
    }
    return ::close(fd) == 0 && ok;
  }

  // After Ctrl-C or --timeout (stop.h) the rest is listed as not collected.
  bool stopped(const std::string& rel, const std::string& origin) {
    if (!stop_requested()) return false;
    record(rel, origin, "skipped", "not collected: " + stop_reason(), 0);
    return true;
  }

  // A command's output file, redacted in place (the command wrote it).
  void redact_file(const std::string& rel) {
    try {
      InputLimits l = input_limits(InputKind::kLog);
      l.max_bytes = opt_.max_log_bytes * 4;
      const std::string text = read_input(path(rel), l);
      const std::string clean = redact_secrets(text);
      if (clean == text) return;
      put(rel, clean, true);
    } catch (const InputError&) {  // too big to redact: not kept
      ::unlink(path(rel).c_str());
    }
  }

  void put_recorded(const std::string& rel, const std::string& origin, const std::string& data,
                    bool redacted = false) {
    if (put(rel, data, redacted)) record(rel, origin, "ok", "", data.size());
    else record(rel, origin, "error", "cannot write " + path(rel), 0);
  }

  // Copies a text file (the tail when large), line by line through `keep`
  // and the secret redaction.
  void copy_log(const std::string& src, const std::string& rel,
                const std::function<bool(const std::string&)>& keep = nullptr) {
    if (stopped(rel, src)) return;
    // Typed and with a read deadline (nodeprobe/input.h): under --sysroot
    // the "log" may be a FIFO, /dev/zero or a link to either.
    std::string raw;
    std::uint64_t start = 0;
    try {
      InputLimits limits = input_limits(InputKind::kLog);
      limits.max_bytes = 0;  // bounded below: the tail only
      InputFile in = InputFile::open(opt_.fs->resolve(src), limits);
      start = in.size() > opt_.max_log_bytes ? in.size() - opt_.max_log_bytes : 0;
      if (start > 0) in.seek(start);
      // A log that grows while read stops at the tail's size.
      char buf[1 << 16];
      for (std::size_t k; raw.size() < opt_.max_log_bytes && (k = in.read(buf, sizeof buf)) > 0;) raw.append(buf, k);
    } catch (const InputError& e) {
      // "cannot read /var/log/x: Permission denied", the path as the node names it.
      std::string why = e.what();
      const std::string real = opt_.fs->resolve(src);
      for (const std::string& named : {"cannot open " + real + ": ", real + ": "})
        if (why.rfind(named, 0) == 0) {
          why.erase(0, named.size());
          break;
        }
      why = why.substr(0, why.find(" (to read a pipe"));  // a hint for command-line inputs only
      if (why.find("ermission") != std::string::npos) why += " (needs root)";
      record(rel, src, "skipped", "cannot read " + src + ": " + why, 0);
      return;
    }
    std::istringstream in(raw);
    std::string line;
    if (start > 0) std::getline(in, line);  // drop the partial first line
    std::string out;
    while (std::getline(in, line)) {
      if (keep && !keep(line)) continue;
      out += line;
      out += '\n';
    }
    out = redact_secrets(out);  // the whole text: a PEM block spans lines
    if (!put(rel, out)) {
      record(rel, src, "error", "cannot write " + path(rel), 0);
      return;
    }
    if (start > 0) record(rel, src, "truncated", "kept the last " + std::to_string(opt_.max_log_bytes >> 20) + " MiB", out.size());
    else record(rel, src, "ok", "", out.size());
  }

  // Runs a command into rel; returns the result (started=false when absent).
  SpawnResult command(const std::vector<std::string>& argv, const std::string& rel) {
    std::string origin = "command:";
    for (const auto& a : argv) origin += " " + a;
    if (!opt_.runner) {
      record(rel, origin, "skipped",
             opt_.fs->is_live() ? "commands are not run here"
                                : "not run: it would describe this machine, not the system under " + opt_.fs->root(),
             0);
      return {};
    }
    if (stopped(rel, origin)) return {};
    mkdirs(path(rel).substr(0, path(rel).rfind('/')));
    SpawnResult r = opt_.runner->run(argv, opt_.command_timeout_s, path(rel));
    redact_file(rel);
    struct stat st {};
    const std::uint64_t bytes = ::stat(path(rel).c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
    if (!r.started) {
      ::unlink(path(rel).c_str());
      record(rel, origin, "skipped", argv[0] + " is not available: " + r.start_error, 0);
    } else if (r.timed_out) {
      record(rel, origin, "truncated", "timed out after " + format_s(opt_.command_timeout_s) + " s", bytes);
    } else if (!r.exited_ok()) {
      record(rel, origin, "ok", r.describe(), bytes);  // its output (an error message) is evidence
    } else {
      record(rel, origin, "ok", "", bytes);
    }
    return r;
  }

  static std::string format_s(double s) {
    std::ostringstream o;
    o << s;
    return o.str();
  }

  static void mkdirs(const std::string& p) {
    std::size_t pos = 0;
    while ((pos = p.find('/', pos + 1)) != std::string::npos) ::mkdir(p.substr(0, pos).c_str(), 0700);
    ::mkdir(p.c_str(), 0700);
  }

  const CollectOptions& opt_;
  std::string dir_;
  Manifest& m_;
};

// A helper executable beside the running one ($NODEPROBE_PROBE_DIR first, as
// the runner looks for probes), or "".
std::string sibling_executable(const std::string& name) {
  if (const char* d = std::getenv("NODEPROBE_PROBE_DIR"); d && *d) return std::string(d) + "/" + name;
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string self(buf, static_cast<std::size_t>(n));
  const std::size_t slash = self.rfind('/');
  return slash == std::string::npos ? std::string() : self.substr(0, slash + 1) + name;
}

// Boot time (epoch seconds) from /proc/stat's btime; 0 when unknown.
double boot_time(const FsRoot& fs) {
  if (auto stat = fs.read("/proc/stat")) {
    const std::size_t p = stat->find("\nbtime ");
    if (p != std::string::npos) return std::atof(stat->c_str() + p + 7);
  }
  return 0;
}

// The kernel ring buffer from /dev/kmsg with wall-clock times (boot time +
// the record's microseconds since boot), one "ISO kernel: message" per line.
bool read_kmsg(const FsRoot& fs, std::string* out, std::string* why) {
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = std::string("/dev/kmsg: ") + std::strerror(errno);
    return false;
  }
  const double btime = boot_time(fs);
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    if (n < 0) {
      if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: overwritten records
      if (errno != EAGAIN) *why = std::string("/dev/kmsg: ") + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    const std::string rec(buf, static_cast<std::size_t>(n));
    const std::size_t semi = rec.find(';');
    if (semi == std::string::npos) continue;
    // "pri,seq,usec,flags;message\n continuation..."
    const std::size_t c1 = rec.find(','), c2 = rec.find(',', c1 + 1);
    double usec = 0;
    if (c1 != std::string::npos && c2 != std::string::npos && c2 < semi) usec = std::atof(rec.c_str() + c2 + 1);
    const std::size_t nl = rec.find('\n', semi);
    const std::string msg = rec.substr(semi + 1, nl == std::string::npos ? std::string::npos : nl - semi - 1);
    char stamp[48];
    const double t = btime + usec / 1e6;
    const std::string iso = iso8601(t);
    std::snprintf(stamp, sizeof stamp, "%.19s.%06dZ", iso.c_str(),
                  static_cast<int>((t - static_cast<double>(static_cast<long long>(t))) * 1e6));
    *out += std::string(stamp) + " kernel: " + redact_secrets(msg) + "\n";
  }
  ::close(fd);
  if (out->empty() && why->empty()) *why = "/dev/kmsg: no records";
  return !out->empty();
}

// The PCI addresses on the way from the host bridge to `dev` ("0000:00:01.0",
// "0000:01:00.0", ..., `dev` itself last), from the real path of its sysfs
// link (/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/...); empty when
// the link cannot be resolved (a flat fixture tree, no sysfs).
std::vector<std::string> pci_path(const FsRoot& fs, const std::string& dev) {
  namespace sfs = std::filesystem;
  std::error_code ec;
  const sfs::path real = sfs::canonical(fs.resolve("/sys/bus/pci/devices/" + dev), ec);
  std::vector<std::string> out;
  if (ec) return out;
  auto is_addr = [](const std::string& n) {
    return n.size() == 12 && n[4] == ':' && n[7] == ':' && n[10] == '.' &&
           std::all_of(n.begin(), n.end(), [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)) || ch == ':' || ch == '.'; });
  };
  for (const auto& part : real)
    if (is_addr(part.string())) out.push_back(part.string());
  if (out.empty() || out.back() != dev) out.clear();
  return out;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string l;
  std::getline(in, l);
  return l;
}

}  // namespace

std::optional<std::uint16_t> acs_control(const std::string& config) {
  auto le = [&](std::size_t off, int bytes) {
    std::uint32_t v = 0;
    for (int b = bytes - 1; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(config[off + static_cast<std::size_t>(b)]);
    return v;
  };
  std::size_t off = 0x100;
  for (int hops = 0; hops < 96 && off >= 0x100 && off + 8 <= config.size(); ++hops) {
    const std::uint32_t h = le(off, 4);
    if (h == 0 || h == 0xffffffffu) break;
    if ((h & 0xffffu) == kAcsCapId) return static_cast<std::uint16_t>(le(off + 6, 2));
    off = (h >> 20) & 0xffcu;
  }
  return std::nullopt;
}

std::string acs_facts(const FsRoot& fs, const std::vector<std::string>& gpus) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& gpu : gpus) {
    const std::vector<std::string> path = pci_path(fs, gpu);
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      const std::string& bridge = path[i];
      if (!seen.insert(bridge + " " + gpu).second) continue;
      const std::string config = fs.read("/sys/bus/pci/devices/" + bridge + "/config").value_or("");
      // Without root the kernel shows the first 64 bytes: no extended capabilities.
      if (config.size() < 0x100) {
        out += "pci_acs_unreadable: " + bridge + "\n";
        continue;
      }
      const auto ctl = acs_control(config);
      if (!ctl) continue;
      char hexv[8];
      std::snprintf(hexv, sizeof hexv, "%04x", static_cast<unsigned>(*ctl));
      out += "pci_acs: " + bridge + " " + gpu + " " + hexv + (i == 0 ? " root_port" : " switch_port") + "\n";
    }
  }
  return out;
}

std::string edac_facts(const FsRoot& fs) {
  const std::string base = "/sys/devices/system/edac/mc";
  // "ce=N ue=N" from the two counters of one directory; nullopt where the
  // corrected counter is absent (not a controller or DIMM).
  const auto counts = [&](const std::string& ce_file, const std::string& ue_file) -> std::optional<std::string> {
    const auto ce = fs.read_int(ce_file);
    if (!ce) return std::nullopt;
    return "ce=" + std::to_string(*ce) + " ue=" + std::to_string(fs.read_int(ue_file).value_or(0));
  };
  std::string out;
  std::vector<std::string> mcs = fs.list_dir(base);
  std::sort(mcs.begin(), mcs.end());
  for (const auto& mc : mcs) {
    if (mc.rfind("mc", 0) != 0) continue;
    const std::string dir = base + "/" + mc + "/";
    const auto mc_counts = counts(dir + "ce_count", dir + "ue_count");
    if (!mc_counts) continue;
    out += "edac: " + mc + " - " + *mc_counts + "\n";
    // DIMMs (dimmN) or, on drivers that count per rank, rankN.
    std::vector<std::string> dimms = fs.list_dir(dir);
    std::sort(dimms.begin(), dimms.end());
    for (const auto& d : dimms) {
      if (d.rfind("dimm", 0) != 0 && d.rfind("rank", 0) != 0) continue;
      const std::string dd = dir + d + "/";
      const auto dimm_counts = counts(dd + "dimm_ce_count", dd + "dimm_ue_count");
      if (!dimm_counts) continue;
      const std::string label = fs.read_line(dd + "dimm_label").value_or("");
      out += "edac: " + mc + " " + d + " " + *dimm_counts + (label.empty() ? "" : " label=" + label) + "\n";
    }
  }
  return out;
}

SpawnResult ProcessRunner::run(const std::vector<std::string>& argv, double timeout_s, const std::string& out_path) {
  SpawnOptions o;
  o.argv = argv;
  o.stdout_path = out_path;
  o.stderr_path = out_path + ".err";
  o.timeout_s = timeout_s;
  o.kill_grace_s = 1;
  o.env_set = {"LC_ALL=C"};
  SpawnResult r = run_process(o);
  if (!r.started && argv[0].find('/') == std::string::npos) {
    for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/local/sbin/"}) {  // sbin is often not on a user's PATH
      o.argv[0] = dir + argv[0];
      if (::access(o.argv[0].c_str(), X_OK) != 0) continue;
      r = run_process(o);
      break;
    }
  }
  // Merge stderr after stdout: error messages are evidence too.
  std::ifstream err(out_path + ".err", std::ios::binary);
  std::stringstream ss;
  ss << err.rdbuf();
  if (!ss.str().empty()) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t rc = ::write(fd, ss.str().data(), ss.str().size());
      (void)rc;  // the command's own output is there already
      ::close(fd);
    }
  }
  ::unlink((out_path + ".err").c_str());
  return r;
}

Json manifest_to_json(const Manifest& m) {
  Json files = Json::array();
  for (const auto& a : m.files)
    files.push_back({{"path", a.path}, {"origin", a.origin}, {"status", a.status}, {"reason", a.reason}, {"bytes", a.bytes}});
  return Json{{"schema", m.schema},
              {"tool", {{"name", "nodeprobe"}, {"version", m.tool_version}}},
              {"created", m.created},
              {"created_epoch", m.created_epoch},
              {"utc_offset_s", m.utc_offset_s},
              {"boot_epoch", m.boot_epoch},
              {"host", {{"hostname", m.hostname}, {"kernel", m.kernel}, {"os", m.os}, {"instance_type", m.instance_type}}},
              {"root", m.root},
              {"files", files}};
}

Manifest manifest_from_json(const Json& j) {
  if (!j.is_object()) throw std::runtime_error("manifest.json is not an object");
  if (j.value("schema", std::string()).rfind("nodeprobe.bundle/1", 0) != 0)
    throw std::runtime_error("manifest.json: not a nodeprobe bundle (schema '" + j.value("schema", std::string()) + "')");
  Manifest m;
  try {
    m.schema = j.at("schema").get<std::string>();
    if (j.contains("tool")) m.tool_version = j.at("tool").value("version", std::string());
    m.created = j.value("created", std::string());
    m.created_epoch = j.value("created_epoch", 0.0);
    m.utc_offset_s = j.value("utc_offset_s", 0L);
    m.boot_epoch = j.value("boot_epoch", 0.0);
    if (j.contains("host")) {
      const Json& h = j.at("host");
      m.hostname = h.value("hostname", std::string());
      m.kernel = h.value("kernel", std::string());
      m.os = h.value("os", std::string());
      m.instance_type = h.value("instance_type", std::string());
    }
    m.root = j.value("root", false);
    if (j.contains("files"))
      for (const auto& f : j.at("files"))
        m.files.push_back({f.at("path").get<std::string>(), f.value("origin", std::string()),
                           f.value("status", std::string("ok")), f.value("reason", std::string()),
                           f.value("bytes", std::uint64_t{0})});
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("manifest.json: malformed: ") + e.what());
  }
  return m;
}

Manifest collect_artifacts(const CollectOptions& opt, const std::string& dir) {
  static const FsRoot kLive("/");
  CollectOptions o = opt;
  if (!o.fs) o.fs = &kLive;
  const FsRoot& fs = *o.fs;
  Manifest m;
  m.tool_version = kVersion;
  m.created_epoch = o.now > 0 ? o.now : static_cast<double>(std::time(nullptr));
  m.created = iso8601(m.created_epoch);
  m.utc_offset_s = local_utc_offset();
  m.boot_epoch = boot_time(fs);
  m.root = ::geteuid() == 0;
  const HostInfo host = collect_host_facts(fs, o.envp);
  m.hostname = host.hostname;
  m.kernel = host.kernel;
  m.os = host.os;
  m.instance_type = host.instance_type;
  Collection c(o, dir, m);
  Collection::mkdirs(dir);

  // ---- kernel log ------------------------------------------------------------------------
  std::string kmsg, why;
  if (fs.is_live() && o.live_kmsg && read_kmsg(fs, &kmsg, &why)) {
    c.put_recorded("kernel/kmsg.log", "/dev/kmsg", kmsg);
  } else {
    const SpawnResult r = c.command({"journalctl", "-k", "-b", "--no-pager", "-q", "-o", "short-iso-precise"},
                                    "kernel/journal-k.log");
    Artifact& a = m.files.back();
    if (r.started && (a.bytes == 0 || first_line(c.path(a.path)).find("No journal files") != std::string::npos)) {
      a.status = "skipped";
      a.reason = "journalctl -k shows nothing (not root and not in the systemd-journal group?)";
    }
    if (!why.empty()) a.reason += (a.reason.empty() ? "" : "; ") + why;
  }
  // ---- system logs -------------------------------------------------------------------------
  // Kernel lines of the syslog that the kernel log above already holds
  // (from its first record on) are left out, so an Xid counts once.
  std::optional<double> kernel_from;
  for (const auto& a : m.files)
    if (a.path.rfind("kernel/", 0) == 0 && a.status == "ok") {
      std::ifstream k(c.path(a.path));
      std::string first;
      std::getline(k, first);
      kernel_from = parse_line_time(first, TimeContext{m.created_epoch, m.utc_offset_s});
    }
  const TimeContext syslog_time{m.created_epoch, m.utc_offset_s};
  auto not_in_kernel_log = [&](const std::string& l) {
    if (!kernel_from || l.find(" kernel: ") == std::string::npos) return true;
    const auto t = parse_line_time(l, syslog_time);
    return !t || *t < *kernel_from - 1;
  };
  if (fs.exists("/var/log/messages")) c.copy_log("/var/log/messages", "logs/messages", not_in_kernel_log);
  else if (fs.exists("/var/log/syslog")) c.copy_log("/var/log/syslog", "logs/syslog", not_in_kernel_log);
  else c.record("logs/messages", "/var/log/messages", "skipped", "neither /var/log/messages nor /var/log/syslog exists", 0);
  c.copy_log("/var/log/audit/audit.log", "logs/audit.log", [](const std::string& l) {
    return l.find("avc:") != std::string::npos || l.find("SELINUX_ERR") != std::string::npos;
  });
  // ---- GPU driver ----------------------------------------------------------------------------
  std::string facts = "# nodeprobe facts (collected " + m.created + ")\n";
  if (auto v = fs.read("/proc/driver/nvidia/version")) {
    c.put_recorded("proc/driver/nvidia/version", "/proc/driver/nvidia/version", *v);
    facts += "nvidia_proc_version: present\n";
  } else {
    facts += "nvidia_proc_version: absent\n";
    c.record("proc/driver/nvidia/version", "/proc/driver/nvidia/version", "skipped",
             "absent: the nvidia kernel module is not loaded", 0);
  }
  const SpawnResult smi = c.command({"nvidia-smi"}, "cmd/nvidia-smi.txt");
  if (smi.exited_ok()) c.command({"nvidia-smi", "-q"}, "cmd/nvidia-smi-q.txt");
  c.command({"modinfo", "nvidia"}, "cmd/modinfo-nvidia.txt");
  // The kernels installed and their module build headers, which DKMS builds
  // the nvidia module against (RPM or dpkg, whichever the node has).
  c.command({"rpm", "-qa", "kernel*"}, "cmd/rpm-kernel.txt");
  c.command({"dpkg", "-l", "linux-image-*", "linux-headers-*"}, "cmd/dpkg-kernel.txt");
  // NVSwitch systems need Fabric Manager running, at the driver's version.
  c.command({"systemctl", "show", "nvidia-fabricmanager", "--property=Id,LoadState,ActiveState,SubState,Result"},
            "cmd/fabricmanager-state.txt");
  c.command({"nv-fabricmanager", "--version"}, "cmd/fabricmanager-version.txt");
  // NVLink state, row remapping, ECC through NVML, in a child with a deadline.
  const std::string nvml_exe = !o.nvml_exe.empty() ? o.nvml_exe : sibling_executable("nodeprobe-nvml");
  if (nvml_exe.empty() || ::access(nvml_exe.c_str(), X_OK) != 0)
    c.record("facts/nvml.json", "nodeprobe-nvml", "skipped", "nodeprobe-nvml is not installed next to nodeprobe", 0);
  else if (!fs.is_live())
    c.record("facts/nvml.json", "nodeprobe-nvml", "skipped", "not the live machine: NVML reads the running driver", 0);
  else
    c.command({nvml_exe}, "facts/nvml.json");
  // PCI: vendor, device, class of every function (readable without root).
  facts += "pci_scan: /sys/bus/pci/devices\n";
  bool nvidia_pci = false;
  std::vector<std::string> gpus;
  for (const auto& d : fs.list_dir("/sys/bus/pci/devices")) {
    const std::string base = "/sys/bus/pci/devices/" + d + "/";
    auto hex = [&](const char* f) {
      std::string v = fs.read_line(base + f).value_or("");
      return v.rfind("0x", 0) == 0 ? v.substr(2) : v;
    };
    const std::string vendor = hex("vendor"), cls = hex("class");
    facts += "pci: " + d + " " + vendor + " " + hex("device") + " " + cls + "\n";
    if (vendor == "10de") nvidia_pci = true;
    if (vendor == "10de" && cls.rfind("03", 0) == 0) gpus.push_back(d);
  }
  // ACS on the bridges above each GPU (extended config space: root only).
  facts += acs_facts(fs, gpus);
  // The IOMMU domain of each GPU's group: DMA / DMA-FQ translate every DMA,
  // identity is passthrough (iommu=pt); no iommu_group without an IOMMU.
  for (const auto& gpu : gpus)
    if (auto type = fs.read_line("/sys/bus/pci/devices/" + gpu + "/iommu_group/type"))
      facts += "gpu_iommu: " + gpu + " " + *type + "\n";
  if (nvidia_pci) c.command({"lspci", "-d", "10de:", "-vv"}, "cmd/lspci-nvidia.txt");
  // Host memory errors EDAC counted since boot, per controller and per DIMM
  // (readable without root; absent without an EDAC driver, as on most VMs).
  facts += edac_facts(fs);
  // Library and toolkit versions from file names.
  for (const char* libdir : {"/usr/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib"}) {
    for (const auto& f : fs.list_dir(libdir))
      if (f.rfind("libnvidia-ml.so.", 0) == 0 && f.size() > 16 && std::count(f.begin(), f.end(), '.') >= 4) {
        facts += "nvml_library: " + f.substr(16) + "\n";
        break;
      }
  }
  if (auto vj = fs.read("/usr/local/cuda/version.json")) {
    try {
      const auto j = nlohmann::json::parse(*vj);
      if (j.contains("cuda")) facts += "cuda_toolkit: " + j.at("cuda").value("version", std::string()) + "\n";
    } catch (...) {
    }
  }
  // ---- EFA / libfabric ------------------------------------------------------------------------
  c.command({"fi_info", "-p", "efa", "-t", "FI_EP_RDM"}, "cmd/fi_info-efa.txt");
  c.command({"fi_info", "-l"}, "cmd/fi_info-list.txt");
  facts += "infiniband_scan: /sys/class/infiniband\n";
  for (const auto& d : fs.list_dir("/sys/class/infiniband")) facts += "infiniband: " + d + "\n";
  // ---- OS facts ------------------------------------------------------------------------------
  facts += "kernel_release: " + fs.read_line("/proc/sys/kernel/osrelease").value_or(host.kernel) + "\n";
  facts += "instance_type: " + host.instance_type + "\n";
  facts += "hostname: " + host.hostname + "\n";
  for (const auto& d : fs.list_dir("/sys/devices/system/cpu")) {
    if (d.rfind("cpu", 0) != 0 || d.size() < 4 || !std::isdigit(static_cast<unsigned char>(d[3]))) continue;
    if (auto g = fs.read_line("/sys/devices/system/cpu/" + d + "/cpufreq/scaling_governor"))
      facts += "scaling_governor: " + d + " " + *g + "\n";
  }
  std::string sysctl;
  for (const auto& s : kSysctls)
    if (auto v = fs.read_line(s[1])) sysctl += std::string(s[0]) + " = " + *v + "\n";
  c.put_recorded("facts/sysctl.txt", "/proc/sys", sysctl);
  for (const char* f : {"/proc/self/limits", "/proc/mounts", "/proc/meminfo", "/proc/cmdline",
                        "/proc/net/softnet_stat", "/etc/os-release"}) {
    const std::string rel = std::string(f).substr(1);
    if (auto v = fs.read(f)) c.put_recorded(rel, f, *v);
    else c.record(rel, f, "skipped", std::string("cannot read ") + f + ": " + FsRoot::why_unreadable(fs.resolve(f)), 0);
  }
  std::string env;
  for (const auto& [k, v] : allowlisted_env(o.envp)) env += k + "=" + redact_secrets(v) + "\n";
  c.put_recorded("facts/env.txt", "environment (allowlisted prefixes only)", env);
  c.put_recorded("facts/host.txt", "/sys, /proc and library directories", facts);
  // ---- probe reports -------------------------------------------------------------------------
  if (!o.limits_exe.empty()) {
    const std::string rel = "report/limits.json";
    Collection::mkdirs(c.path("report"));
    if (o.runner) {
      const SpawnResult r = o.runner->run({o.limits_exe, "--json", c.path(rel), "--quiet"}, 60, c.path(rel) + ".out");
      ::unlink((c.path(rel) + ".out").c_str());
      struct stat st {};
      if (::stat(c.path(rel).c_str(), &st) == 0)
        c.record(rel, "command: nodeprobe-limits --json", "ok", r.exited_ok() ? "" : r.describe(),
                 static_cast<std::uint64_t>(st.st_size));
      else
        c.record(rel, "command: nodeprobe-limits --json", "error", "no report: " + r.describe(), 0);
    }
  }
  if (!o.report_path.empty()) {
    // Parsed and written again: bounded, and redacted field by field (a
    // text-level redaction could break the JSON).
    try {
      c.put_recorded("report/last.json", o.report_path, dump_report(load_report(o.report_path, o.input)), true);
    } catch (const ReportError& e) {
      c.record("report/last.json", o.report_path, "error", e.what(), 0);
    }
  }
  write_file_atomic(dir + "/manifest.json", manifest_to_json(m).dump(2) + "\n");
  return m;
}

}  // namespace nodeprobe::diag
