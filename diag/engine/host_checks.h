#pragma once
/// Version and presence checks over the host facts all sources gave:
/// running kernel vs the nvidia module's vermagic, NVML library vs kernel
/// module, CUDA runtime vs the driver's CUDA, GPUs on the PCI bus vs GPUs
/// the driver shows vs the instance type, EFA expected vs present.

#include <optional>
#include <string>

#include "finding_set.h"
#include "observations.h"
#include "playbook.h"

namespace nodeprobe::diag {

/// Adds findings for every inconsistency `h` shows. `instance_type` is the
/// type to judge against ("" when unknown).
void host_checks(const HostObs& h, const std::string& instance_type, const Playbook& pb, FindingSet& out);

/// Whether the node should have EFA (instance type known to have it).
bool efa_expected_for(const std::string& instance_type, const Playbook& pb);

/// Major and minor of "12.2" / "12.2.140" / "12020"; false when unparsable.
bool cuda_version(const std::string& s, int* major, int* minor);

/// A CUDA runtime newer than the driver's CUDA: the cause of
/// gpu.cuda_driver_insufficient ("" for a newer major, "minor_version" for a
/// newer minor of the same major) with the two versions as facts; nullopt
/// where the driver is as new or either is unparsable.
std::optional<std::string> cuda_runtime_newer(const std::string& runtime, const std::string& driver, Json* facts);

}  // namespace nodeprobe::diag
