#pragma once
/// Internal: helpers shared by the structured parsers (sections_*.cpp).

#include <string>
#include <string_view>
#include <vector>

#include "observations.h"
#include "playbook.h"

namespace nodeprobe::diag::sections {

struct Line {
  long no;  ///< 1-based
  std::string_view text;
};

/// The lines of `doc`; with `strip`, each without the wrappers a line
/// arrives in (strip_wrappers: the text's own indentation kept).
std::vector<Line> split_lines(std::string_view doc, bool strip = true);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view p);
bool contains(std::string_view s, std::string_view p);
/// Leading unsigned integer, or -1.
long long leading_number(std::string_view s);
/// The words of `s`, split on spaces and tabs.
std::vector<std::string_view> words(std::string_view s);

/// Adds a structured observation (no timestamp: it describes the present).
void add(SourceResult& r, const std::string& id, const std::string& cause, Severity severity,
         const Line& line, const Json& facts, const std::string& fold = "");

// Parsers; each looks for its own markers and does nothing when absent.
void nvidia_smi_table(const std::vector<Line>& lines, SourceResult& r);
void nvidia_smi_query(const std::vector<Line>& lines, const Playbook& pb, SourceResult& r);
void nvidia_smi_list(const std::vector<Line>& lines, SourceResult& r);
// A program's own CUDA driver and runtime versions printed as a pair
// (deviceQuery's "CUDA Driver Version / Runtime Version", "CUDA driver
// version: X" beside "CUDA runtime version: Y"): a runtime newer than the driver.
void cuda_version_pair(const std::vector<Line>& lines, SourceResult& r);
void lspci_links(const std::vector<Line>& lines, SourceResult& r);
// The commands that print a sysctl's bare value on the next line
// (sysctl_values reads both; report_sections looks for them first).
inline constexpr std::string_view kCatProcSys = "cat /proc/sys/";
inline constexpr std::string_view kSysctlValueOnly = "sysctl -n ";
void nvidia_smi_csv(const std::vector<Line>& lines, const Playbook& pb, SourceResult& r);
void dcgmi_dmon(const std::vector<Line>& lines, const Playbook& pb, SourceResult& r);
void sysctl_values(const std::vector<Line>& lines, SourceResult& r);
void memory_snapshot(const std::vector<Line>& lines, SourceResult& r);
void ulimit_values(const std::vector<Line>& lines, SourceResult& r);
void proc_limits(const std::vector<Line>& lines, SourceResult& r);
/// pam_limits' limits.conf lines (nofile, nproc, memlock).
void limit_settings(const std::vector<Line>& lines, SourceResult& r);
void mounts(const std::vector<Line>& lines, SourceResult& r);
void softnet(const std::vector<Line>& lines, SourceResult& r);
void fi_info(const std::vector<Line>& lines, SourceResult& r);
void versions(const std::vector<Line>& lines, SourceResult& r);
/// Kernel images and module build headers a package listing shows installed.
void kernel_packages(const std::vector<Line>& lines, SourceResult& r);
void node_facts(const std::vector<Line>& lines, SourceResult& r);
void fabric_manager(const std::vector<Line>& lines, SourceResult& r);
/// `dcgmi nvlink --link-status`: a link shown D (Down) on a GPU.
void dcgmi_nvlink(const std::vector<Line>& lines, SourceResult& r);
/// nccl-tests result tables: a non-zero #wrong column is a wrong collective.
void nccl_tests_table(const std::vector<Line>& lines, SourceResult& r);
/// NVML's view of the GPUs (nodeprobe-nvml's JSON, or the gemm probe's
/// data.nvml in a report): NVLink links down, rows pending remap or failed.
void nvml_inventory(const Json& nvml, const std::string& source, SourceResult& r);
void nodeprobe_report(std::string_view doc, SourceResult& r);

}  // namespace nodeprobe::diag::sections
