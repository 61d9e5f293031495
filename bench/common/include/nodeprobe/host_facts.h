#pragma once
/// Host facts for the report's `host` block, read under an FsRoot.

#include <map>
#include <string>

#include "nodeprobe/fs_root.h"
#include "nodeprobe/report.h"

namespace nodeprobe {

/// Environment variable prefixes a report may carry (DESIGN.md).
inline constexpr const char* kEnvAllowPrefixes[] = {"NCCL_", "FI_",   "CUDA_", "OMPI_",
                                                   "PMIX_", "UCX_", "OMP_"};

/// True when `name` has an allowlisted prefix and does not look like a secret
/// (TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL anywhere in the name, or any
/// name redact.h's secret_name() knows, such as UCX_AUTH).
bool env_name_allowed(const std::string& name);

/// Filters NAME=VALUE entries (as in environ) to the allowlist; values go
/// through redact_secrets (a token in a URL or a path's query).
std::map<std::string, std::string> allowlisted_env(const char* const* envp);

/// Hostname, kernel, OS release, CPU model and count, memory, instance type
/// (from DMI, only when the vendor is Amazon EC2), NVIDIA driver version (from
/// /proc/driver/nvidia/version when loaded) and the allowlisted environment.
/// GPU, CUDA, NCCL, libfabric and MPI fields are left for probes to fill.
HostInfo collect_host_facts(const FsRoot& fs, const char* const* envp);

/// The NVIDIA kernel module version from /proc/driver/nvidia/version text, or "".
std::string parse_nvidia_driver_version(const std::string& proc_version_text);

/// EC2 instance type from DMI when the system vendor is Amazon EC2, else "".
std::string dmi_instance_type(const FsRoot& fs);

}  // namespace nodeprobe
