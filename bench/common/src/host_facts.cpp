#include "nodeprobe/host_facts.h"

#include "nodeprobe/redact.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

namespace nodeprobe {
namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string os_release_pretty(const FsRoot& fs) {
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    auto text = fs.read(path);
    if (!text) continue;
    std::istringstream in(*text);
    std::string name, version;
    for (std::string line; std::getline(in, line);) {
      auto unquote = [](std::string v) {
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
        return v;
      };
      if (line.rfind("PRETTY_NAME=", 0) == 0) return unquote(line.substr(12));
      if (line.rfind("NAME=", 0) == 0) name = unquote(line.substr(5));
      if (line.rfind("VERSION_ID=", 0) == 0) version = unquote(line.substr(11));
    }
    if (!name.empty()) return name + (version.empty() ? "" : " " + version);
  }
  return "unknown";
}

}  // namespace

bool env_name_allowed(const std::string& name) {
  const bool prefixed = std::any_of(std::begin(kEnvAllowPrefixes), std::end(kEnvAllowPrefixes),
                                    [&](const char* p) { return name.rfind(p, 0) == 0; });
  if (!prefixed) return false;
  const std::string u = upper(name);
  for (const char* secret : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"})
    if (u.find(secret) != std::string::npos) return false;
  return !secret_name(name);  // UCX_AUTH, FI_..._SIG: the one rule set of redact.h
}

std::map<std::string, std::string> allowlisted_env(const char* const* envp) {
  std::map<std::string, std::string> out;
  for (; envp && *envp; ++envp) {
    const std::string kv = *envp;
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string name = kv.substr(0, eq);
    if (env_name_allowed(name)) out[name] = redact_secrets(kv.substr(eq + 1));  // ...?token=X in a path
  }
  return out;
}

std::string parse_nvidia_driver_version(const std::string& text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ..."
  static const std::regex re(R"(Kernel Module(?: for \S+)?\s+([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  const std::string first = text.substr(0, text.find('\n'));
  if (std::regex_search(first, m, re)) return m[1];
  return {};
}

std::string dmi_instance_type(const FsRoot& fs) {
  const auto vendor = fs.read_line("/sys/devices/virtual/dmi/id/sys_vendor");
  if (!vendor || vendor->find("Amazon EC2") == std::string::npos) return {};
  const auto product = fs.read_line("/sys/devices/virtual/dmi/id/product_name");
  return product ? *product : std::string();
}

HostInfo collect_host_facts(const FsRoot& fs, const char* const* envp) {
  HostInfo h;
  struct utsname u {};
  const bool have_uname = fs.is_live() && ::uname(&u) == 0;
  auto hostname = fs.read_line("/proc/sys/kernel/hostname");
  h.hostname = hostname ? *hostname : (have_uname ? u.nodename : "unknown");
  auto kernel = fs.read_line("/proc/sys/kernel/osrelease");
  h.kernel = kernel ? *kernel : (have_uname ? u.release : "unknown");
  h.os = os_release_pretty(fs);
  h.instance_type = dmi_instance_type(fs);

  if (auto cpuinfo = fs.read("/proc/cpuinfo")) {
    std::istringstream in(*cpuinfo);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("processor", 0) == 0) ++h.cpus;
      if (h.cpu_model.empty() && line.rfind("model name", 0) == 0) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) h.cpu_model = trim(line.substr(colon + 1));
      }
    }
  }
  if (h.cpus == 0 && fs.is_live()) h.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));

  if (auto meminfo = fs.read("/proc/meminfo")) {
    std::istringstream in(*meminfo);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("MemTotal:", 0) == 0) {
        const auto tok = split_ws(line.substr(9));
        if (!tok.empty()) h.memory_bytes = std::stoll(tok[0]) * 1024;
        break;
      }
    }
  }
  if (auto v = fs.read("/proc/driver/nvidia/version")) h.driver = parse_nvidia_driver_version(*v);
  h.env = allowlisted_env(envp);
  return h;
}

}  // namespace nodeprobe
