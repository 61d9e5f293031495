// Structured OS outputs: sysctl, ulimit -a, /proc/<pid>/limits, mounts,
// softnet_stat, fi_info, driver/module versions, nodeprobe's own fact files.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "nodeprobe/size.h"
#include "nodeprobe/host_facts.h"
#include "normalise.h"
#include "sections.h"
#include "text_util.h"

namespace nodeprobe::diag::sections {
namespace {

// Recommended values (FIELD-NOTES.md; the same as nodeprobe-limits).
constexpr unsigned long long kShmmax = 137438953472ULL, kShmall = 33554432ULL;
constexpr unsigned long long kMaxMapCount = 262144, kSomaxconn = 65535, kBacklog = 65535;
constexpr unsigned long long kNofile = 65535, kNproc = 65535;

struct SysctlRule {
  const char* name;
  unsigned long long recommended;
  const char* finding;
};
constexpr SysctlRule kSysctls[] = {
    {"kernel.shmmax", kShmmax, "limits.shm"},
    {"kernel.shmall", kShmall, "limits.shm"},
    {"vm.max_map_count", kMaxMapCount, "limits.max_map_count"},
    {"net.core.somaxconn", kSomaxconn, "limits.somaxconn"},
    {"net.core.netdev_max_backlog", kBacklog, "limits.netdev_backlog"},
};

bool is_hex8(std::string_view w) {
  return w.size() == 8 && std::all_of(w.begin(), w.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Soft-limit judgement shared by ulimit -a and /proc/<pid>/limits.
// `sigpending`: the pending-signals limit of the same listing, or -1. The
// kernel sets RLIMIT_NPROC and RLIMIT_SIGPENDING alike to max_threads/2
// (kernel/fork.c fork_init), so an nproc at or above it is the kernel's own
// default on a small machine, not a limit someone lowered.
void judge_limit(SourceResult& r, const Line& l, const std::string& what, std::string_view value,
                 unsigned long long scale, long long sigpending = -1) {
  const bool unlimited = value == "unlimited" || value == "infinity";
  const long long n = unlimited ? -1 : leading_number(value);
  if (!unlimited && n < 0) return;
  const unsigned long long v = static_cast<unsigned long long>(n) * scale;
  if (what == "memlock" && !unlimited)
    add(r, "limits.memlock", "", Severity::kUnknown, l,
        {{"observed", std::to_string(v) + " bytes"}, {"expected", "unlimited"}});
  else if (what == "nofile" && !unlimited && v < kNofile)
    add(r, "limits.nofile", "", Severity::kUnknown, l,
        {{"observed", std::to_string(v)}, {"expected", ">= " + std::to_string(kNofile)}});
  else if (what == "nproc" && !unlimited && v < kNproc &&
           (sigpending < 0 || v < static_cast<unsigned long long>(sigpending)))
    add(r, "limits.nproc", "", Severity::kUnknown, l,
        {{"observed", std::to_string(v)}, {"expected", ">= " + std::to_string(kNproc) + " or unlimited"}});
}

}  // namespace

std::vector<Line> split_lines(std::string_view doc, bool strip) {
  std::vector<Line> out;
  long no = 1;
  std::size_t p = 0;
  while (p < doc.size()) {
    const void* nl = std::memchr(doc.data() + p, '\n', doc.size() - p);
    std::size_t e = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - doc.data()) : doc.size();
    std::string_view line = doc.substr(p, e - p);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A table or -q output printed through a wrapper (srun --label, kubectl,
    // dmesg, pdsh...): the parsers read it without the wrapper.
    out.push_back({no++, strip ? strip_wrappers(line) : line});
    p = e + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

long long leading_number(std::string_view s) {
  s = trim(s);
  long long v = 0;
  std::size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 18) v = v * 10 + (s[i++] - '0');
  return i == 0 ? -1 : v;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t p = 0;
  while (p < s.size()) {
    while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) ++p;
    std::size_t e = p;
    while (e < s.size() && s[e] != ' ' && s[e] != '\t') ++e;
    if (e > p) out.push_back(s.substr(p, e - p));
    p = e;
  }
  return out;
}

void add(SourceResult& r, const std::string& id, const std::string& cause, Severity severity,
         const Line& line, const Json& facts, const std::string& fold) {
  r.findings.add({id, cause, fold}, severity, {r.name, line.no, clean_text(redact_secrets(line.text))},
                 std::nullopt, facts);
}

namespace {

// One sysctl value against its recommendation; `l` is the line the evidence cites.
void judge_sysctl(SourceResult& r, const Line& l, std::string_view name, std::string_view value) {
  for (const auto& s : kSysctls) {
    if (name != s.name) continue;
    const long long v = leading_number(value);
    if (v < 0 || static_cast<unsigned long long>(v) >= s.recommended) continue;
    add(r, s.finding, "sysctl", Severity::kUnknown, l,
        {{"sysctl", s.name}, {"observed", std::string(value)}, {"expected", ">= " + std::to_string(s.recommended)}});
  }
}

// The sysctl a command line reads when it prints the bare value on the next
// line: "cat /proc/sys/vm/max_map_count" (vm.max_map_count) or
// "sysctl -n vm.max_map_count"; "" for any other line.
std::string value_command_sysctl(std::string_view t) {
  std::string name;
  if (const std::size_t p = t.find(kCatProcSys); p != std::string_view::npos) {
    const std::string_view rest = t.substr(p + kCatProcSys.size());
    name = std::string(rest.substr(0, rest.find_first_of(" \t;|&")));
    std::replace(name.begin(), name.end(), '/', '.');
  } else if (const std::size_t n = t.find(kSysctlValueOnly); n != std::string_view::npos) {
    const std::string_view rest = trim(t.substr(n + kSysctlValueOnly.size()));
    name = std::string(rest.substr(0, rest.find_first_of(" \t;|&")));
  }
  return name;
}

}  // namespace

void sysctl_values(const std::vector<Line>& lines, SourceResult& r) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    if (const std::size_t eq = l.text.find(" = "); eq != std::string_view::npos) {
      judge_sysctl(r, l, trim(l.text.substr(0, eq)), trim(l.text.substr(eq + 3)));
      continue;
    }
    // A command and its output pasted together: the value alone on the next line.
    const std::string name = value_command_sysctl(l.text);
    if (name.empty() || i + 1 >= lines.size()) continue;
    const std::string_view value = trim(lines[i + 1].text);
    if (!value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos)
      judge_sysctl(r, l, name, value);
  }
}

void ulimit_values(const std::vector<Line>& lines, SourceResult& r) {
  long long sigpending = -1;  // "pending signals (-i) N" of the same listing
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);  // an indented paste reads the same
    if (starts_with(t, "pending signals") && contains(t, "-i)"))
      sigpending = leading_number(t.substr(t.rfind(')') + 1));
  }
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    const std::size_t close = t.rfind(')');
    if (close == std::string_view::npos || !contains(t, "(")) continue;
    const std::string_view value = trim(t.substr(close + 1));
    if (starts_with(t, "max locked memory") && contains(t, "-l)"))
      judge_limit(r, l, "memlock", value, contains(t, "kbytes") ? 1024 : 1);
    else if (starts_with(t, "open files") && contains(t, "-n)"))
      judge_limit(r, l, "nofile", value, 1);
    else if (starts_with(t, "max user processes") && contains(t, "-u)"))
      judge_limit(r, l, "nproc", value, 1, sigpending);
  }
}

// Limits as configured rather than as a process has them: pam_limits'
// /etc/security/limits.conf and limits.d lines ("<domain> <type> <item>
// <value>", memlock in KiB; -1, unlimited and infinity are no limit). A hard
// limit below the recommendation caps the soft one too. (systemd's
// LimitNOFILE= is left alone: `systemctl show` prints every unit's default,
// and programs raise their soft limit to it themselves.)
void limit_settings(const std::vector<Line>& lines, SourceResult& r) {
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    if (t.empty() || t[0] == '#') continue;
    const auto w = words(t);
    if (w.size() != 4 || !(w[1] == "soft" || w[1] == "hard" || w[1] == "-")) continue;
    const std::string_view value = w[3] == "-1" ? std::string_view("unlimited") : std::string_view(w[3]);
    if (w[2] == "nofile" || w[2] == "nproc") judge_limit(r, l, std::string(w[2]), value, 1);
    else if (w[2] == "memlock") judge_limit(r, l, "memlock", value, 1024);
  }
}

void proc_limits(const std::vector<Line>& lines, SourceResult& r) {
  long long sigpending = -1;  // "Max pending signals  N  N  signals" of the same table
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);  // an indented paste reads the same
    if (starts_with(t, "Max pending signals")) {
      const auto w = words(t.substr(std::strlen("Max pending signals")));
      if (!w.empty()) sigpending = leading_number(w[0]);
    }
  }
  bool header = false;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    if (starts_with(t, "Limit") && contains(t, "Soft Limit")) {
      header = true;
      continue;
    }
    // "Max locked memory         65536                65536                bytes"
    // (fs/proc/base.c proc_pid_limits: name, soft, hard, unit). Below the
    // header any such row; without it (`grep locked /proc/PID/limits`) only a
    // row of exactly soft, hard and the unit the kernel prints for it.
    auto value_of = [&](std::string_view name, std::string_view unit) {
      auto w = words(t.substr(name.size()));
      if (!header && (w.size() != 3 || w[2] != unit)) w.clear();
      return w;
    };
    if (starts_with(t, "Max locked memory")) {
      const auto w = value_of("Max locked memory", "bytes");
      if (!w.empty()) judge_limit(r, l, "memlock", w[0], 1);
    } else if (starts_with(t, "Max open files")) {
      const auto w = value_of("Max open files", "files");
      if (!w.empty()) judge_limit(r, l, "nofile", w[0], 1);
    } else if (starts_with(t, "Max processes")) {
      const auto w = value_of("Max processes", "processes");
      if (!w.empty()) judge_limit(r, l, "nproc", w[0], 1, sigpending);
    }
  }
}

// How much memory the host had left in a snapshot people paste: top's
// summary ("MiB Mem : 128686.2 total, ..." and "MiB Swap: ... 524.7 avail
// Mem"), free ("Mem:" and "Swap:" rows under a header with "available"),
// /proc/meminfo (MemTotal, MemAvailable, SwapFree). Available memory under
// 3% of the total with no swap to fall back on is a host about to run out.
void memory_snapshot(const std::vector<Line>& lines, SourceResult& r) {
  struct Snap {
    double total = -1, avail = -1, swap_free = -1;
    const Line* at = nullptr;
    std::string tool;
  };
  Snap cur;
  std::vector<std::string_view> free_header;
  auto num = [](std::string_view w) -> double {
    const auto v = parse_size(w);
    return v ? static_cast<double>(*v) : -1.0;
  };
  auto done = [&]() {  // judges the snapshot read so far, then starts a new one
    if (cur.at && cur.total > 0 && cur.avail >= 0 && cur.avail < 0.03 * cur.total && cur.swap_free < 0.03 * cur.total) {
      char detail[160];
      std::snprintf(detail, sizeof detail, "%.1f%% of the memory available (%s)", 100.0 * cur.avail / cur.total,
                    cur.tool.c_str());
      add(r, "host.oom", "memory_exhausted", Severity::kUnknown, *cur.at, {{"detail", std::string(detail)}});
    }
    cur = Snap{};
  };
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    const auto w = words(t);
    if (w.size() >= 4 && (w[1] == "Mem" || w[1] == "Mem:") && w[0].size() == 3 && w[0].substr(1) == "iB") {
      // top: "MiB Mem :  128686.2 total,    571.3 free, ..."
      done();
      const std::size_t k = t.find(" total,");
      if (k != std::string_view::npos) {
        const std::size_t b = t.find_last_of(" :", k - 1);
        cur.total = num(t.substr(b + 1, k - b - 1));
        cur.tool = "top";
      }
    } else if (cur.tool == "top" && contains(t, "Swap:") && contains(t, " avail Mem")) {
      // "MiB Swap:      0.0 total,      0.0 free,      0.0 used.    524.7 avail Mem"
      const std::size_t k = t.find(" avail Mem");
      const std::size_t b = t.find_last_of(' ', t.find_last_not_of(' ', k - 1));
      cur.avail = num(t.substr(b + 1, k - b - 1));
      const std::size_t f = t.find(" free,");
      if (f != std::string_view::npos) {
        const std::size_t fb = t.find_last_of(" ,", t.find_last_not_of(' ', f - 1));
        cur.swap_free = num(t.substr(fb + 1, f - fb - 1));
      }
      cur.at = &l;
      done();
    } else if (!w.empty() && w.front() == "total" && std::find(w.begin(), w.end(), "available") != w.end()) {
      free_header = w;  // free: "total used free shared buff/cache available"
    } else if (!free_header.empty() && w.size() == free_header.size() + 1 && w[0] == "Mem:") {
      done();
      const std::size_t a = static_cast<std::size_t>(std::find(free_header.begin(), free_header.end(), "available") - free_header.begin());
      cur.total = num(w[1]);
      cur.avail = num(w[a + 1]);
      cur.tool = "free";
      cur.at = &l;
    } else if (cur.tool == "free" && w.size() >= 4 && w[0] == "Swap:") {
      cur.swap_free = num(w[3]);
      done();
    } else if (w.size() >= 2 && w[0] == "MemTotal:") {
      done();
      cur.total = num(w[1]);
      cur.tool = "meminfo";
    } else if (cur.tool == "meminfo" && w.size() >= 2 && w[0] == "MemAvailable:") {
      cur.avail = num(w[1]);
      cur.at = &l;
    } else if (cur.tool == "meminfo" && w.size() >= 2 && w[0] == "SwapFree:") {
      cur.swap_free = num(w[1]);
      done();
    }
  }
  done();
}

void mounts(const std::vector<Line>& lines, SourceResult& r) {
  static const char* kSystem[] = {"/", "/boot", "/boot/efi", "/home", "/var", "/tmp", "/usr", "/opt",
                                  "/var/log", "/var/tmp", "/var/lib/docker", "/var/lib/containerd", "/srv"};
  for (const auto& l : lines) {
    if (!starts_with(trim(l.text), "/dev/")) continue;  // cheap screen before splitting
    const auto w = words(l.text);
    std::string_view dev, mnt, fstype, opts;
    if (w.size() == 6 && w[4] == "0" && (w[5] == "0" || w[5] == "1" || w[5] == "2")) {  // /proc/mounts
      dev = w[0], mnt = w[1], fstype = w[2], opts = w[3];
    } else if (w.size() >= 6 && w[1] == "on" && w[3] == "type") {  // mount(8)
      dev = w[0], mnt = w[2], fstype = w[4], opts = w[5];
      if (opts.size() >= 2 && opts.front() == '(' && opts.back() == ')') opts = opts.substr(1, opts.size() - 2);
    } else {
      continue;
    }
    if (!starts_with(dev, "/dev/") || starts_with(dev, "/dev/loop")) continue;
    if (fstype != "xfs" && fstype != "ext4" && fstype != "ext3" && fstype != "btrfs") continue;
    if (std::any_of(std::begin(kSystem), std::end(kSystem), [&](const char* s) { return mnt == s; })) continue;
    if (starts_with(mnt, "/snap") || starts_with(mnt, "/run") || starts_with(mnt, "/var/lib/kubelet") ||
        starts_with(mnt, "/boot"))
      continue;
    if (contains(opts, "noatime")) continue;
    add(r, "storage.mount_options", "", Severity::kUnknown, l,
        {{"mountpoint", std::string(mnt)}, {"device", std::string(dev)}, {"fstype", std::string(fstype)},
         {"options", std::string(opts)}});
  }
}

void softnet(const std::vector<Line>& lines, SourceResult& r) {
  unsigned long long dropped = 0;
  const Line* first = nullptr;
  int rows = 0;
  for (const auto& l : lines) {
    const std::string_view head = trim(l.text);
    if (head.size() < 9 * 9 - 1 || !is_hex8(head.substr(0, 8))) continue;  // cheap screen before splitting
    const auto w = words(l.text);
    if (w.size() < 9 || !std::all_of(w.begin(), w.end(), is_hex8)) continue;
    ++rows;
    const unsigned long long d = std::stoull(std::string(w[1]), nullptr, 16);
    if (d > 0 && !first) first = &l;
    dropped += d;
  }
  if (rows > 0 && dropped > 0 && first)
    add(r, "limits.netdev_backlog", "softnet_drops", Severity::kUnknown, *first,
        {{"dropped", std::to_string(dropped)}});
}

void fi_info(const std::vector<Line>& lines, SourceResult& r) {
  int efa_domains = 0;
  bool saw_output = false, nodata = false;
  std::string provider;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = trim(lines[i].text);
    if (starts_with(t, "provider: ")) {
      saw_output = true;
      provider = std::string(trim(t.substr(10)));
      r.host.fi_providers.insert(provider.substr(0, provider.find(';')));
    } else if (starts_with(t, "domain: ") && starts_with(provider, "efa")) {
      ++efa_domains;
    } else if (contains(t, "fi_getinfo: -61")) {
      nodata = true;
    } else if (!t.empty() && t.back() == ':' && t.find(' ') == std::string_view::npos && i + 1 < lines.size() &&
               starts_with(trim(lines[i + 1].text), "version: ")) {  // fi_info -l
      saw_output = true;
      std::string p(t.substr(0, t.size() - 1));
      r.host.fi_providers.insert(p.substr(0, p.find(';')));
    }
  }
  if (efa_domains > 0) r.host.efa_devices = efa_domains;
  else if (nodata && !saw_output && !r.host.efa_devices) r.host.efa_devices = 0;
}

void versions(const std::vector<Line>& lines, SourceResult& r) {
  for (const auto& l : lines) {
    const std::string_view t = l.text;
    if (starts_with(t, "NVRM version:")) {
      const std::string v = parse_nvidia_driver_version(std::string(t));
      if (!v.empty()) {
        r.host.driver_version = v;
        r.host.driver_loaded = true;
      }
    } else if (starts_with(t, "vermagic:")) {
      const auto w = words(t.substr(9));
      if (!w.empty()) {
        r.host.module_vermagic_kernel = std::string(w[0]);
        r.host.module_on_disk = true;
      }
    } else if (starts_with(t, "version:") && !r.host.module_version) {
      const auto w = words(t.substr(8));
      if (!w.empty()) r.host.module_version = std::string(w[0]);
    } else if (starts_with(t, "modinfo: ERROR: Module nvidia not found")) {
      r.host.module_on_disk = false;
    }
  }
}

namespace {

// One line of a package listing: the kernel package it shows installed, as
// the release uname -r prints and whether it is module build headers (true)
// or a kernel image (false); nothing for any other line. `available`: the
// line is in yum/dnf's "Available Packages" section (not installed).
std::optional<std::pair<std::string, bool>> kernel_package(std::string_view t, const std::vector<std::string_view>& w,
                                                           bool available) {
  static const std::set<std::string_view> kImages = {"kernel", "kernel-core", "kernel-rt-core", "kernel-64k-core"};
  static const std::set<std::string_view> kBuild = {"kernel-devel", "kernel-rt-devel", "kernel-64k-devel"};
  static const std::set<std::string_view> kArches = {"x86_64", "aarch64", "ppc64le", "s390x", "noarch"};
  // dpkg -l ("ii  NAME VERSION ...") and apt list ("NAME/SUITE,now VERSION ARCH [installed]"): the release is in the name
  std::string_view pkg = w[0];
  if (pkg == "ii" && w.size() >= 3) pkg = w[1];
  else if (pkg.size() == 2 && w.size() >= 3) return std::nullopt;  // dpkg states other than installed (rc, un, ...)
  if (const std::size_t slash = pkg.find('/'); slash != std::string_view::npos) {
    if (!contains(t, "[installed")) return std::nullopt;
    pkg = pkg.substr(0, slash);
  }
  for (std::string_view pre : {"linux-image-unsigned-", "linux-image-", "linux-headers-"})
    if (starts_with(pkg, pre) && leading_number(pkg.substr(pre.size())) >= 0)
      return std::make_pair(std::string(pkg.substr(pre.size())), pre == "linux-headers-");
  if (available) return std::nullopt;
  std::string_view name;
  std::string rel;
  if (const std::size_t dot = w[0].rfind('.');
      dot != std::string_view::npos && w.size() >= 2 && kArches.count(w[0].substr(dot + 1)) && leading_number(w[1]) >= 0) {
    name = w[0].substr(0, dot);  // yum/dnf: NAME.ARCH [EPOCH:]VERSION-RELEASE REPO
    std::string_view version = w[1];
    if (const std::size_t colon = version.find(':'); colon != std::string_view::npos) version = version.substr(colon + 1);
    rel = std::string(version) + "." + std::string(w[0].substr(dot + 1));
  } else if (w.size() == 1) {
    for (const auto* set : {&kBuild, &kImages})  // rpm -qa: NAME-VERSION-RELEASE.ARCH
      for (std::string_view n : *set)
        if (rel.empty() && starts_with(w[0], std::string(n) + "-") && leading_number(w[0].substr(n.size() + 1)) >= 0) {
          name = n;
          rel = std::string(w[0].substr(n.size() + 1));
        }
  }
  if (kBuild.count(name)) return std::make_pair(rel, true);
  if (kImages.count(name)) return std::make_pair(rel, false);
  return std::nullopt;
}

}  // namespace

// Kernel packages in a listing people paste from a DKMS failure: yum/dnf
// list installed ("kernel-devel.x86_64  3.10.0-957.el7  @updates"), rpm -qa
// ("kernel-devel-3.10.0-957.el7.x86_64"), dpkg -l ("ii  linux-headers-
// 5.15.0-91-generic  5.15.0-91.101  amd64 ...") and apt list --installed
// ("linux-headers-5.15.0-91-generic/jammy-updates,now 5.15.0-91.101 amd64
// [installed]"). Each is kept as the release uname -r prints. RHEL's
// kernel-headers are the user-space API headers (glibc builds against them),
// not what a module builds against, and kernel-debug-devel is for the debug
// kernel: neither counts. The running kernel, where the same text shows it:
// uname -a ("Linux host 3.10.0-957.el7.x86_64 #1 SMP ...") or the kernel's
// boot line ("Linux version 5.15.0-91-generic (buildd@...) ...").
void kernel_packages(const std::vector<Line>& lines, SourceResult& r) {
  bool available = false;
  for (const auto& l : lines) {
    const std::string_view t = trim(l.text);
    const auto w = words(t);
    if (w.empty()) continue;
    // yum/dnf section headings ("Installed Packages", dnf5's "Available packages", "Available Upgrades")
    if (w.size() == 2 && (w[0] == "Installed" || w[0] == "Available")) available = w[0] == "Available";
    // the boot line ("Linux version REL ...") or uname -a ("Linux HOST REL #N ...")
    if (w[0] == "Linux" && w.size() >= 4 && !r.host.kernel_release && leading_number(w[2]) >= 0 &&
        (w[1] == "version" || starts_with(w[3], "#")))
      r.host.kernel_release = std::string(w[2]);
    const auto pkg = kernel_package(t, w, available);
    if (!pkg) continue;
    (pkg->second ? r.host.kernel_build_trees : r.host.kernel_images).insert(pkg->first);
    if (pkg->second && !r.host.kernel_build_line)
      r.host.kernel_build_line = r.name + ":" + std::to_string(l.no) + ": " + std::string(t);
  }
}

// nodeprobe's own fact files ("key: value" after a marker line).
void node_facts(const std::vector<Line>& lines, SourceResult& r) {
  if (lines.empty() || !starts_with(lines.front().text, "# nodeprobe facts")) return;
  int gpus_on_pci = 0, efa = 0, nvswitches = 0;
  bool pci = false, ib = false;
  std::vector<std::pair<std::string, const Line*>> governors;
  for (const auto& l : lines) {
    const std::size_t c = l.text.find(": ");
    if (c == std::string_view::npos || starts_with(l.text, "#")) continue;
    const std::string key(trim(l.text.substr(0, c)));
    const std::string value(trim(l.text.substr(c + 2)));
    if (key == "kernel_release") r.host.kernel_release = value;
    else if (key == "instance_type" && !value.empty()) r.host.instance_type = value;
    else if (key == "nvml_library") r.host.nvml_lib_version = value;
    else if (key == "cuda_toolkit" && !r.host.cuda_runtime) r.host.cuda_runtime = value;
    else if (key == "pci_scan") pci = true;
    else if (key == "pci") {  // "0000:00:1e.0 10de 1eb8 030200"
      const auto w = words(value);
      if (w.size() >= 4 && w[1] == "10de" && starts_with(w[3], "03")) ++gpus_on_pci;
      if (w.size() >= 4 && w[1] == "10de" && starts_with(w[3], "0680")) ++nvswitches;
    } else if (key == "infiniband_scan") ib = true;
    else if (key == "infiniband" && (starts_with(value, "efa") || starts_with(value, "rdmap"))) ++efa;
    else if (key == "nvidia_proc_version" && value == "absent") r.host.driver_loaded = false;
    else if (key == "scaling_governor") governors.emplace_back(value, &l);
    else if (key == "gpu_iommu") {  // "0000:03:00.0 DMA-FQ"
      const auto w = words(value);
      if (w.size() == 2) r.host.gpu_iommu[std::string(w[0])] = std::string(w[1]);
    } else if (key == "edac") {  // "mc0 - ce=12 ue=0" or "mc0 dimm3 ce=12 ue=0 label=CPU_SrcID#0_MC#0_Chan#1_DIMM#0"
      const auto w = words(value);
      if (w.size() >= 4) {
        EdacCount e;
        e.mc = std::string(w[0]);
        e.dimm = w[1] == "-" ? std::string() : std::string(w[1]);
        for (std::size_t i = 2; i < w.size(); ++i) {
          if (starts_with(w[i], "ce=")) e.ce = std::max(0LL, leading_number(w[i].substr(3)));
          else if (starts_with(w[i], "ue=")) e.ue = std::max(0LL, leading_number(w[i].substr(3)));
        }
        const std::size_t at = value.find(" label=");
        if (at != std::string::npos) e.label = value.substr(at + 7);
        r.host.edac.push_back(std::move(e));
      }
    } else if (key == "pci_acs") {  // "0000:00:01.0 0000:01:00.0 001d switch_port"
      const auto w = words(value);
      if (w.size() >= 4) {
        AcsPort a;
        a.bridge = std::string(w[0]);
        a.gpu = std::string(w[1]);
        a.ctl = static_cast<unsigned>(std::strtoul(std::string(w[2]).c_str(), nullptr, 16));
        a.switch_port = w[3] == "switch_port";
        r.host.acs_ports.push_back(std::move(a));
      }
    }
  }
  if (pci) r.host.gpus_on_pci = gpus_on_pci;
  if (pci) r.host.nvswitches = nvswitches;
  if (ib && !r.host.efa_devices) r.host.efa_devices = efa;
  int slow = 0;
  const Line* first = nullptr;
  std::string governor;
  for (const auto& [g, l] : governors) {
    const std::string gov = g.substr(g.rfind(' ') == std::string::npos ? 0 : g.rfind(' ') + 1);
    if (gov == "performance") continue;
    if (!first) {
      first = l;
      governor = gov;
    }
    ++slow;
  }
  if (first)
    add(r, "cpu.governor", "", Severity::kUnknown, *first,
        {{"governor", governor}, {"cpus_not_performance", std::to_string(slow)}});
}

}  // namespace nodeprobe::diag::sections
