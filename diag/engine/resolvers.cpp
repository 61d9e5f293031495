// Context rules: what a line means depends on the lines around it.
#include <algorithm>
#include <set>

#include "rule_engine.h"
#include "text_util.h"

namespace nodeprobe::diag {
namespace {

bool has_signal(const SourceResult& r, const std::string& key) { return r.signals.count(key) > 0; }

void add_from_signal(SourceResult& r, const std::string& id, const std::string& cause, Severity sev,
                     const std::string& signal, const Json& facts = Json::object()) {
  const Signal& s = r.signals.at(signal);
  r.findings.add({id, cause, ""}, sev, s.first, std::nullopt, facts);
}

using IdCause = std::pair<std::string, std::string>;

// A fold is due when a finding it folds is present and one of its `when`
// references names another present finding (not one the fold itself takes).
bool fold_due(const Fold& f, const std::vector<IdCause>& present) {
  const auto folded = [&](const IdCause& p) { return f.finding.matches(p.first, p.second); };
  if (std::none_of(present.begin(), present.end(), folded)) return false;
  for (const FindingRef& w : f.when)
    for (const IdCause& p : present)
      if (w.matches(p.first, p.second) && !folded(p)) return true;
  return false;
}

// The folds of the rule data (rules.json "folds"): all judged on one snapshot
// of the findings as the rules and the resolvers left them, then applied in
// order: each folded cause is dropped, or rekeyed into the fold's `into`.
void apply_folds(FindingSet& findings, const std::vector<Fold>& folds) {
  if (folds.empty() || findings.empty()) return;
  std::vector<IdCause> present;
  for (const auto& kv : findings.all()) present.emplace_back(kv.first.id, kv.first.cause);
  std::vector<const Fold*> due;
  for (const auto& f : folds)
    if (!f.run_level() && fold_due(f, present)) due.push_back(&f);
  for (const Fold* f : due) {
    std::set<std::string> causes;
    for (const auto& kv : findings.all())
      if (f->finding.matches(kv.first.id, kv.first.cause)) causes.insert(kv.first.cause);
    for (const auto& c : causes) {
      if (f->into.id.empty())
        findings.erase_cause(f->finding.id, c);
      else if (f->into.id != f->finding.id || f->into.cause != c)
        findings.rekey(f->finding.id, c, f->into.id, f->into.cause);
    }
  }
}

}  // namespace

void resolve_source(SourceResult& r, const AnalysisOptions& opt, const RuleSet& rules) {
  if (opt.efa_expected) r.fired.insert("nccl.efa_intent");  // the instance type says EFA
  // Rules that need context: raised when it is there and nothing explains
  // them away, else their fallback.
  const auto fired = [&](const std::string& k) { return r.fired.count(k) > 0; };
  for (auto& [key, set] : r.pending) {
    const Rule* rule = rules.find(key);
    if (!rule) continue;
    const bool ok = (rule->needs.empty() || std::any_of(rule->needs.begin(), rule->needs.end(), fired)) &&
                    std::none_of(rule->explained_by.begin(), rule->explained_by.end(), fired);
    if (!ok && !rule->has_fallback()) continue;
    const bool graver = ok && std::any_of(rule->escalate_when.begin(), rule->escalate_when.end(), fired) &&
                        std::none_of(rule->escalate_unless.begin(), rule->escalate_unless.end(), fired);
    for (const auto& kv : set.all()) {
      Accum a = kv.second;
      if (!ok) {
        if (a.key.id != rule->finding) continue;
        if (!rule->otherwise_cause.empty()) a.key.cause = rule->otherwise_cause;
        a.severity = rule->otherwise_severity;
      } else if (graver && a.key.id == rule->finding) {
        a.severity = rule->escalate_severity;
      }
      r.findings.merge(a);
    }
  }
  r.pending.clear();

  // A root port's AER header names the device it heard from ("error received:
  // 0000:05:00.0"); where that device's own lines show a driver that is not a
  // GPU's (pcie.aer_other_device), the header is that device's too, not a GPU's.
  if (const Accum* other = r.findings.find("gpu.pcie_degraded", "aer_other_device")) {
    std::set<std::string> theirs;
    for (const auto& e : other->events)
      if (!e.key.empty()) theirs.insert(e.key);
    for (const char* cause : {"aer_corrected", "aer_uncorrected"}) {
      const Accum* a = r.findings.find("gpu.pcie_degraded", cause);
      if (a && !a->events.empty() && a->count <= static_cast<long>(a->events.size()) &&
          std::all_of(a->events.begin(), a->events.end(),
                      [&](const EventRec& e) { return theirs.count(e.key) > 0; }))
        r.findings.erase_cause("gpu.pcie_degraded", cause);
    }
  }

  // SELinux records without permissive=: the mode the same log shows decides.
  if (r.findings.has("selinux.avc", ""))
    r.findings.rekey("selinux.avc", "", "selinux.avc",
                     has_signal(r, "selinux.mode_permissive") ? "permissive" : "enforcing");

  // NCCL transport: "NET/IB : No device found" followed by sockets is normal
  // on a TCP-only node and a failure where EFA/IB was expected. Sockets the
  // user chose (NCCL_NET=Socket) are no fallback at all.
  const bool sockets = has_signal(r, "nccl.socket_used") && !has_signal(r, "nccl.socket_chosen");
  const bool ofi_ok = has_signal(r, "nccl.ofi_ok");
  const bool ofi_failed = has_signal(r, "nccl.ofi_failed");
  const bool expected = opt.efa_expected || has_signal(r, "nccl.efa_intent");
  // EFA wanted and the plugin found no provider, or found one that then
  // failed to come up: EFA is missing, whatever NCCL fell back to.
  if (ofi_failed && expected &&
      (!ofi_ok || r.signals.at("nccl.ofi_failed").last_line > r.signals.at("nccl.ofi_ok").first.line))
    add_from_signal(r, "efa.missing", "ofi_failed", Severity::kUnknown, "nccl.ofi_failed");
  // Without a sign that EFA was wanted the same lines are what aws-ofi-nccl
  // prints on every instance type without EFA: named, as info, so the log
  // reads as "no EFA here" and not as a failure; sockets are its consequence.
  else if (ofi_failed && !expected && !ofi_ok)
    add_from_signal(r, "efa.missing", "no_provider", Severity::kUnknown, "nccl.ofi_failed");
  if (sockets && !ofi_ok) {
    if (expected)
      add_from_signal(r, "efa.fallback_tcp", "", Severity::kUnknown, "nccl.socket_used");
    else if (has_signal(r, "nccl.ib_none") && !ofi_failed)
      add_from_signal(r, "efa.fallback_tcp", "tcp_only", Severity::kUnknown, "nccl.socket_used");
  }
  // fi_getinfo/fi_info found no EFA provider on a node that has or wants EFA
  // (the instance type, the user's own fi_info -p efa, the EFA provider's log
  // lines about its devices): the devices are not usable there.
  // Without that sign it is what every node without EFA prints: named, as
  // info, like the plugin's own "no provider" above.
  if (has_signal(r, "efa.absent") && !r.findings.has("efa.missing"))
    add_from_signal(r, "efa.missing", expected ? "" : "no_provider", Severity::kUnknown, "efa.absent");
  // aws-ofi-nccl picked a TCP provider where EFA was expected, or where the
  // job runs the EFA software stack (installer paths, an AWS-branch plugin, an
  // instance type whose interconnect is EFA: signal efa.aws_stack).
  // Not a fallback where the user chose TCP (FI_PROVIDER=tcp, NCCL_NET=Socket)
  // or the communicator spans one node (the network carries no collective).
  const bool tcp_meant = has_signal(r, "nccl.ofi_tcp_chosen") || has_signal(r, "nccl.socket_chosen") ||
                         has_signal(r, "nccl.single_node");
  if (has_signal(r, "nccl.ofi_tcp") && (expected || has_signal(r, "efa.aws_stack")) && !tcp_meant && !ofi_ok)
    add_from_signal(r, "efa.fallback_tcp", "ofi_tcp", Severity::kUnknown, "nccl.ofi_tcp",
                    r.signals.at("nccl.ofi_tcp").facts);

  // The NVML library version printed after a mismatch belongs to it.
  if (has_signal(r, "nvml.lib_version")) {
    const Json& sf = r.signals.at("nvml.lib_version").facts;
    if (Accum* a = r.findings.find("gpu.driver_kernel_mismatch", "library_mismatch"))
      if (sf.contains("nvml_version") && !a->facts.contains("nvml_version"))
        a->facts["nvml_version"] = sf.at("nvml_version");
    if (sf.contains("nvml_version") && !r.host.nvml_lib_version)
      r.host.nvml_lib_version = sf.at("nvml_version").get<std::string>();
  }
  if (has_signal(r, "nccl.ifname")) {
    const Json& sf = r.signals.at("nccl.ifname").facts;
    if (Accum* a = r.findings.find("nccl.network_config", "no_interface"))
      if (sf.contains("ifname")) a->facts["ifname"] = sf.at("ifname");
  }

  // A bare ncclSystemError / internal error explains itself only when nothing
  // more specific (socket, shm, limits, GPU) is in the same log. Without
  // NCCL_DEBUG its WARN (which call failed) is not printed. With network
  // lines in the log it is taken as the network; without any, the job ran on
  // one node, where NCCL's system calls are its shared-memory ones
  // (shm_open/fallocate/mmap of /dev/shm in src/transport/shm.cc and the
  // proxy's shared buffers): in a container that is the 64 MB /dev/shm or a
  // private IPC namespace, the fix every such thread reports (--ipc=host).
  // ncclUnhandledCudaError ("unhandled cuda error") is a CUDA call NCCL made
  // that failed: its own id, nccl.cuda_error, whose steps look for the CUDA
  // error and the GPU, not the network.
  // NCCL's own WARN naming a CUDA call it made with an invalid argument
  // (job.unexplained_failure/cuda_api_error) is the more specific reading of
  // an "unhandled cuda error": a programming error or an NCCL bug.
  if (has_signal(r, "nccl.generic") &&
      !r.findings.has_prefix({"nccl.", "limits.", "efa.", "gpu.", "host.", "net.", "selinux."}) &&
      !r.findings.has("job.unexplained_failure", "cuda_api_error")) {
    const bool network = has_signal(r, "nccl.socket_used") || has_signal(r, "nccl.ifname") ||
                         has_signal(r, "nccl.ib_none") || has_signal(r, "nccl.ofi_ok") ||
                         has_signal(r, "nccl.ofi_failed") || has_signal(r, "nccl.efa_intent");
    // The code the line named: ncclSystemError ("system", "2") or ncclUnhandledCudaError ("cuda" in
    // any case: the rule's extract), a CUDA call that failed inside NCCL, not the network.
    const std::string code = r.signals.at("nccl.generic").facts.value("code", std::string());
    const bool cuda_error = ci_equal(code, "cuda");
    const bool system_error = !code.empty() && !cuda_error;
    if (cuda_error)
      add_from_signal(r, "nccl.cuda_error", "", Severity::kUnknown, "nccl.generic");
    else if (!network && system_error)
      add_from_signal(r, "nccl.shm", "system_error", Severity::kUnknown, "nccl.generic");
    else
      add_from_signal(r, "nccl.network_config", "generic_error", Severity::kUnknown, "nccl.generic");
  }

  // Fabric Manager failing where there is no NVSwitch to manage (its own
  // NV_WARN_NOTHING_TO_DO, or GPUs that never sit on an NVSwitch board) is not
  // a fault: FM is only needed on NVSwitch systems. CUDA's 802 ("system not
  // yet initialized") or an NVSwitch board in the same log keep it an error.
  if ((has_signal(r, "fm.nothing_to_do") || has_signal(r, "gpu.no_nvswitch_board")) &&
      !has_signal(r, "gpu.nvswitch_board") && !r.findings.has("gpu.fabric_manager", "not_initialized") &&
      !r.findings.has("gpu.fabric_manager", "version_mismatch")) {
    r.findings.rekey("gpu.fabric_manager", "not_running", "gpu.fabric_manager", "not_needed");
    r.findings.rekey("gpu.fabric_manager", "training_failed", "gpu.fabric_manager", "not_needed");
  }

  apply_folds(r.findings, rules.folds());

  // The run asked for the CPU (--device cpu, device='cpu', CUDA_VISIBLE_DEVICES
  // empty or -1): libraries that probe for a GPU and say none or no driver was
  // found are doing what was asked. Still named, as info, with the reason.
  if (has_signal(r, "run.cpu_requested") && r.findings.has("gpu.not_found"))
    r.findings.set_severity("gpu.not_found", Severity::kInfo, "gpu_not_wanted",
                            "the run asked for the CPU: " + clean_text(r.signals.at("run.cpu_requested").first.text, 240));
}

// The run-level folds of the rule data (a fold with `when_severity`): a
// finding dropped where any other finding of the whole run, from any of its
// sources, is at least that severe. The built-in one: a job's failure
// (job.unexplained_failure) that a warn or error finding explains (the
// kernel log explaining the job log).
void apply_run_folds(std::vector<Finding>& findings, const std::vector<Fold>& folds) {
  for (const Fold& f : folds) {
    if (!f.run_level()) continue;
    const auto folded = [&](const Finding& x) {
      return f.finding.matches(x.id, x.facts.value("cause", std::string()));
    };
    const bool due = std::any_of(findings.begin(), findings.end(), [&](const Finding& x) {
      return !folded(x) && severity_rank(x.severity) >= severity_rank(f.when_severity);
    });
    if (due) findings.erase(std::remove_if(findings.begin(), findings.end(), folded), findings.end());
  }
}

}  // namespace nodeprobe::diag
