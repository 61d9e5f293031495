// nodeprobe reports as input, the section dispatcher and kind detection.
#include <algorithm>
#include <optional>
#include <set>

#include "nodeprobe/finding_ids.h"
#include "nodeprobe/report_json.h"
#include "probe_findings.h"
#include "normalise.h"
#include "rule_engine.h"
#include "sections.h"
#include "text_util.h"

namespace nodeprobe::diag {

void add_probe_findings(const std::vector<ProbeResult>& probes, const std::string& source, FindingSet& set) {
  for (const auto& p : probes) {
    for (const auto& c : p.checks) {
      if (c.finding.empty() || (c.status != Status::kWarn && c.status != Status::kFail)) continue;
      if (!find_finding_kind(c.finding)) continue;  // an id this build does not know
      Accum a;
      a.key = {c.finding, "", ""};
      a.severity = c.status == Status::kFail ? Severity::kError : Severity::kWarn;
      a.count = 1;
      a.probe = p.name;
      std::string text = p.name + " " + c.id + ": observed " + c.observed + ", expected " + c.expected;
      if (!c.detail.empty()) text += " (" + c.detail + ")";
      a.first.push_back({source, 0, clean_text(text)});
      a.facts = {{"probe", p.name}, {"check", c.id}, {"observed", clean_text(c.observed, 120)},
                 {"expected", clean_text(c.expected, 120)}};
      if (!c.fix.empty()) a.remedy.push_back(c.fix);
      set.merge(a);
    }
    const bool crashed = p.status == Status::kError && p.reason.rfind("crashed", 0) == 0;
    if (p.status != Status::kTimeout && !crashed) continue;
    Accum a;
    a.key = {crashed ? "probe.crash" : "probe.timeout", "", p.name};
    a.severity = Severity::kError;
    a.count = 1;
    a.probe = p.name;
    a.first.push_back({source, 0, clean_text(p.name + ": " + p.reason)});
    a.facts = {{"probe", p.name}, {"reason", clean_text(p.reason, 200)}};
    set.merge(a);
  }
}

namespace sections {

void nodeprobe_report(std::string_view doc, SourceResult& r) {
  const std::size_t b = doc.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos || doc[b] != '{' || doc.find("nodeprobe.report/") == std::string_view::npos)
    return;
  Report rep;
  try {
    rep = parse_report(std::string(doc), r.name);
  } catch (const std::exception& e) {
    r.error = clean_text(e.what(), 300);
    return;
  }
  add_probe_findings(rep.probes, r.name, r.findings);
  std::set<std::string> checked;  // ids the report's checks carry
  for (const auto& kv : r.findings.all()) checked.insert(kv.first.id);
  for (const auto& p : rep.probes)  // the gemm probe's NVML inventory
    if (p.data.is_object() && p.data.contains("nvml")) nvml_inventory(p.data.at("nvml"), r.name, r);
  // Findings the writer derived that no check carries, each in its own
  // window (an earlier boot's stays earlier). Where the bundle also holds the
  // logs they came from, those logs win (FindingSet::drop_report_duplicates).
  const TimeContext tc;
  for (const auto& f : rep.findings) {
    if (!find_finding_kind(f.id) || checked.count(f.id)) continue;
    if (f.id.rfind("probe.", 0) == 0) continue;
    const Json facts = f.facts.is_object() ? f.facts : Json::object();
    Accum a;
    a.key = {f.id, facts.value("cause", std::string()), facts.value("code", std::string()),
             facts.value("past", std::string()) == "yes"};
    a.from_report = true;
    a.severity = a.key.past ? Severity::kUnknown : f.severity;
    a.count = std::max(1L, f.count);
    a.probe = f.probe;
    if (!f.first_seen.empty()) a.first_time = parse_line_time(f.first_seen, tc);
    if (!f.last_seen.empty()) a.last_time = parse_line_time(f.last_seen, tc);
    for (const auto& e : f.evidence)
      if (a.first.size() < FindingSet::kKeepFirst) a.first.push_back({r.name, e.line, clean_text(e.text)});
    a.facts = f.facts.is_object() ? f.facts : Json::object();
    a.remedy = f.remedy;
    r.findings.merge(a);
  }
  const HostInfo& h = rep.host;
  if (!h.instance_type.empty()) r.host.instance_type = h.instance_type;
  if (!h.cuda_runtime.empty()) r.host.cuda_runtime = h.cuda_runtime;
  if (!h.kernel.empty()) r.host.kernel_release = h.kernel;
  if (!h.driver.empty() && !r.host.driver_version) r.host.driver_version = h.driver;
}

}  // namespace sections

void parse_sections(std::string_view doc, const std::string& source, const Playbook& pb, SourceResult& r) {
  (void)pb;
  using namespace sections;
  // A log of JSON records, one per line (docker json-file, journalctl -o
  // json, fluent-bit): the tables and command outputs are in their messages.
  std::string decoded;
  {
    const std::size_t b = doc.find_first_not_of(" \t\r\n");
    const std::size_t e = b == std::string_view::npos ? b : doc.find('\n', b);
    if (b != std::string_view::npos &&
        is_json_record(doc.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b)) &&
        doc.find("\"nodeprobe.") == std::string_view::npos) {
      decoded.reserve(doc.size());
      for (std::size_t p = 0; p < doc.size();) {
        const std::size_t nl = std::min(doc.find('\n', p), doc.size());
        const std::string_view line = doc.substr(p, nl - p);
        p = nl + 1;
        if (!needs_unwrap(line)) {
          decoded.append(line);
          decoded += '\n';
          continue;
        }
        for (const std::string& piece : unwrap(line)) {
          decoded += piece;
          decoded += '\n';
        }
      }
      doc = decoded;
    }
  }
  auto has = [&](std::string_view m) { return doc.find(m) != std::string_view::npos; };
  // A limits.conf item: the word after a blank (one pass over the document per item).
  auto has_item = [&](std::string_view item) {
    for (std::size_t p = doc.find(item); p != std::string_view::npos; p = doc.find(item, p + 1))
      if (p > 0 && (doc[p - 1] == ' ' || doc[p - 1] == '\t')) return true;
    return false;
  };
  if (has("nodeprobe.report/")) {
    nodeprobe_report(doc, r);
    return;  // a report is JSON: nothing else to parse
  }
  if (has("\"nodeprobe.nvml/1\"")) {
    const Json j = Json::parse(doc, nullptr, false);
    if (!j.is_discarded()) nvml_inventory(j, source, r);
    return;
  }
  // The document's lines with wrappers off, split once for the parsers below that want them.
  std::optional<std::vector<Line>> stripped;
  auto stripped_lines = [&]() -> const std::vector<Line>& {
    if (!stripped) stripped = split_lines(doc, true);
    return *stripped;
  };
  if (has("Id=nvidia-fabricmanager") || has("Fabric Manager version is")) fabric_manager(stripped_lines(), r);
  if (has("#wrong")) nccl_tests_table(stripped_lines(), r);
  if (has("NvLink Link Status")) dcgmi_nvlink(stripped_lines(), r);
  if (has("XIDER")) dcgmi_dmon(stripped_lines(), pb, r);
  if (has("gpu_recovery_action") || has("retired_pages.") || has("remapped_rows.") || has("ecc.errors.uncorrected.") ||
      has("clocks_throttle_reasons.") || has("clocks_event_reasons."))
    nvidia_smi_csv(stripped_lines(), pb, r);
  // nvidia-smi's table, or its GPU rows pasted without the header ("| 1MiB /  20475MiB |")
  const bool smi = has("NVIDIA-SMI ") || (has("MiB /") && has("|")), smil = has("(UUID: GPU-");
  // -q output, whole or the sections people paste (Remapped Rows, Retired Pages, ECC Errors,
  // Clocks Event/Throttle Reasons, GPU Link Info)
  const bool smiq = has("NVSMI LOG") || has("Remapped Rows") || has("Pending Page Blacklist") ||
                    has("Retired Pages") || has("Remapping Failure Occurred") || has("ECC Errors") ||
                    has("Clocks Event Reasons") || has("Clocks Throttle Reasons") || has("GPU Link Info");
  const bool lspci = has("LnkSta:"), sysctl = has(" = ") || has(kCatProcSys) || has(kSysctlValueOnly), ulimit = has("(kbytes, -l)") || has("(-n)");
  const bool limits = has("Soft Limit") || has("Max locked memory") || has("Max open files") || has("Max processes"),
             limit_conf = has_item("nofile") || has_item("memlock") || has_item("nproc"),
             mnt = has("/dev/"), fi = has("provider: ") || has("fi_getinfo") || has("version: ");
  const bool ver = has("NVRM version:") || has("vermagic:") || has("modinfo: ERROR"), facts = has("# nodeprobe facts");
  const bool kpkg = has("kernel-devel") || has("kernel-rt-devel") || has("linux-headers-");
  const bool mem = has(" avail Mem") || has("MemAvailable:") || (has("available") && has("Mem:"));
  const bool cudaver = (has("untime version") || has("untime Version") || has("untime API version")) &&
                       (has("river version") || has("river Version"));
  const bool soft = doc.size() < (1u << 20) && !doc.empty();
  if (!(smi || smiq || smil || lspci || sysctl || ulimit || limits || limit_conf || mnt || fi || ver || facts || mem || kpkg ||
        cudaver || soft))
    return;
  // Wrappers off only where a table, listing or -q output may be read: the
  // generic markers (a "/dev/" path, " = ", a small file) are everywhere and
  // their parsers read whole words.
  const bool strip = smi || smiq || smil || lspci || ulimit || limits || limit_conf || fi || ver || facts || mem || kpkg || cudaver;
  const std::vector<Line> raw = strip ? std::vector<Line>() : split_lines(doc, false);
  const std::vector<Line>& lines = strip ? stripped_lines() : raw;
  if (smi) nvidia_smi_table(lines, r);
  if (smiq) nvidia_smi_query(lines, pb, r);
  if (smil) nvidia_smi_list(lines, r);
  if (lspci) lspci_links(lines, r);
  if (sysctl) sysctl_values(lines, r);
  if (ulimit) ulimit_values(lines, r);
  if (limits) proc_limits(lines, r);
  if (limit_conf) limit_settings(lines, r);
  if (mnt) mounts(lines, r);
  if (soft) softnet(lines, r);
  if (fi) fi_info(lines, r);
  if (ver) versions(lines, r);
  if (kpkg) kernel_packages(lines, r);
  if (facts) node_facts(lines, r);
  if (mem) memory_snapshot(lines, r);
  if (cudaver) cuda_version_pair(lines, r);
}

std::string detect_kind(std::string_view head) {
  if (head.empty()) return "empty";
  std::size_t binary = 0;
  const std::size_t n = std::min<std::size_t>(head.size(), 4096);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(head[i]);
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) ++binary;
  }
  if (binary * 20 > n) return "binary";
  auto has = [&](std::string_view m) { return head.find(m) != std::string_view::npos; };
  const std::size_t b = head.find_first_not_of(" \t\r\n");
  if (b != std::string_view::npos && head[b] == '{' && has("nodeprobe.report/")) return "report";
  if (b != std::string_view::npos && head[b] == '{' && has("\"schema\": \"nodeprobe.")) return "nodeprobe-json";
  if (has("# nodeprobe facts")) return "facts";
  if (has("NVSMI LOG")) return "nvidia-smi-q";
  if (has("NVIDIA-SMI ") && (has("Driver Version") || has("KMD Version"))) return "nvidia-smi";
  if (has("(UUID: GPU-")) return "nvidia-smi-L";
  if (has("NVRM version:")) return "nvidia-proc-version";
  if (has("vermagic:")) return "modinfo";
  if (has("provider: ") || has("fi_getinfo: -61")) return "fi_info";
  if (has("----\ntime->") || has("type=AVC msg=audit(") || has("type=SYSCALL msg=audit(")) return "audit";
  if (has(" NCCL INFO ") || has(" NCCL WARN ") || has("] NCCL INFO")) return "nccl";
  if (has("Soft Limit") && has("Max open files")) return "proc-limits";
  if (has("(kbytes, -l)")) return "ulimit";
  if (has("LnkSta:")) return "lspci";
  if (has("analyzing CPU")) return "cpupower";
  if (has(" kernel: ")) return "syslog";
  if (head.size() > 2 && head[0] == '[' && has("] ") && head.find('.') < 16) return "kernel-log";
  if (has("net.core.") || has("vm.max_map_count = ") || has("kernel.shmmax = ")) return "sysctl";
  if (has("Traceback (most recent call last)") || has("torch.")) return "application";
  return "text";
}

}  // namespace nodeprobe::diag
