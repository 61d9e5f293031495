#pragma once
/// Which instance type is this? --expect first, then DMI (the hypervisor's
/// SMBIOS tables say "Amazon EC2" and name the type on Nitro), then the
/// instance metadata service (IMDSv2) with a 1 s budget, but only when DMI
/// says the machine is on EC2, only on the live system, and never when
/// NODEPROBE_NO_IMDS is set (tests set it; they also use fixture roots).

#include <functional>
#include <optional>
#include <string>

#include "nodeprobe/fs_root.h"

namespace nodeprobe::diag {

/// True when DMI says the machine runs on EC2: sys_vendor "Amazon EC2"
/// (Nitro), or a Xen BIOS version containing "amazon" (older p3/g3 hosts).
bool dmi_says_ec2(const FsRoot& fs);

/// The instance type DMI names (Nitro: product_name "p4d.24xlarge"), or "".
std::string dmi_type(const FsRoot& fs);

/// True when `s` looks like an EC2 instance type ("p4d.24xlarge", "g5.xlarge").
bool looks_like_instance_type(const std::string& s);

/// Where IMDS listens. Tests point this at a local fake server.
struct ImdsEndpoint {
  std::string ipv4 = "169.254.169.254";  ///< numeric IPv4 only: no DNS
  int port = 80;
};

/// The IMDSv2 exchange over a plain TCP socket: PUT /latest/api/token, then
/// GET /latest/meta-data/instance-type with the token, both within
/// `timeout_s` in total. nullopt with `error` set on any failure or timeout.
std::optional<std::string> imds_instance_type(const ImdsEndpoint& ep, double timeout_s,
                                              std::string* error);

/// True when the environment forbids IMDS (NODEPROBE_NO_IMDS set, not "0").
bool imds_disabled_by_env();

struct InstanceIdentity {
  std::string type;    ///< "" when unknown
  std::string source;  ///< "--expect", "dmi", "imds" or ""
  bool on_ec2 = false;
  std::string note;    ///< why the type is unknown, or what IMDS said
};

/// Calls the metadata service; injectable so tests can prove it is not called.
using ImdsQuery = std::function<std::optional<std::string>(std::string* error)>;

/// Decides the instance type. `imds_allowed` is the caller's live-system and
/// opt-out decision; IMDS is queried only when it is true AND DMI says EC2 AND
/// DMI did not name the type already.
InstanceIdentity detect_instance(const FsRoot& fs, const std::string& expect, bool imds_allowed,
                                 const ImdsQuery& imds);

}  // namespace nodeprobe::diag
