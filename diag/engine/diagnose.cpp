#include "diagnose.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "bundle_dir.h"
#include "host_checks.h"
#include "nodeprobe/safe_remove.h"
#include "nodeprobe/stop.h"
#include "nodeprobe/finding_ids.h"
#include "playbook.h"
#include "probe_findings.h"
#include "rule_engine.h"
#include "tar_gz.h"
#include "text_util.h"

namespace nodeprobe::diag {
namespace {

namespace fs = std::filesystem;

// Owned (safe_remove.h): removed on return, on unwinding, and by the stop
// handlers on an emergency exit; never by following a link.
std::unique_ptr<OwnedTempDir> make_temp_dir(const std::string& base_hint, std::string* why) {
  try {
    return std::make_unique<OwnedTempDir>(!base_hint.empty() ? base_hint : temp_parent(), "nodeprobe-diag");
  } catch (const std::exception& e) {
    *why = e.what();
    return nullptr;
  }
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class Diagnosis {
 public:
  Diagnosis(const DiagInputs& in, Report& report)
      : in_(in), report_(report), out_(), pb_(default_playbook()), rules_(load_rules(in, out_)),
        own_engine_(in.engine && in.rule_files.empty() ? nullptr : std::make_unique<RuleEngine>(pb_, rules_)),
        engine_(own_engine_ ? *own_engine_ : *in.engine) {
    now_ = in.now > 0 ? in.now : static_cast<double>(std::time(nullptr));
    instance_ = !in.expect.empty() ? in.expect : report.host.instance_type;
    out_.scanner_available = engine_.available();
  }

  // The built-in rules plus the site's; a bad site file is an input error
  // (the built-in rules still run).
  static RuleSet load_rules(const DiagInputs& in, DiagOutcome& out) {
    RuleSet set = default_rules();
    for (const auto& f : in.rule_files) {
      std::ifstream file(f, std::ios::binary);
      std::stringstream ss;
      ss << file.rdbuf();
      if (!file && !file.eof()) {
        out.input_errors.push_back("--rules " + f + ": cannot read it");
        continue;
      }
      try {
        set.add(RuleSet::parse(ss.str(), f, default_playbook()));
      } catch (const std::exception& e) {
        out.input_errors.push_back("--rules " + clean_text(e.what(), 300));
      }
    }
    return set;
  }

  // `boot`: the collecting host's boot time when the source comes from a
  // node (live or bundle); events before it, or before accept's --since,
  // describe the past.
  AnalysisOptions options(double now, long utc_offset, double boot = 0) const {
    AnalysisOptions o;
    o.time.now = now;
    o.time.utc_offset_s = utc_offset;
    if (in_.since_s) o.since = now - *in_.since_s;
    if (in_.judge_from_boot && boot > 0) {
      o.current_from = boot;
      o.window = "before the current boot";
    }
    if (in_.judge_since_s && (!o.current_from || now - *in_.judge_since_s > *o.current_from)) {
      o.current_from = now - *in_.judge_since_s;
      o.window = "before the --since window";
    }
    o.efa_expected = efa_expected_for(instance_, pb_);
    return o;
  }

  void analyse(const std::string& path, const std::string& name, const std::string& origin,
               const AnalysisOptions& opt, const std::string& note = "") {
    LineBlockReader reader(path, input_limits(InputKind::kLog, in_.input));
    analyse(reader, name, origin, opt, note);
  }

  void analyse(LineBlockReader& reader, const std::string& name, const std::string& origin,
               const AnalysisOptions& opt, const std::string& note = "") {
    if (stop_requested()) {
      skipped(name, origin, "skipped", "not read: " + stop_reason());
      return;
    }
    SourceResult r = engine_.analyze(reader, name, opt);
    r.origin = origin;
    if (!r.error.empty()) out_.input_errors.push_back(r.error);
    Json s = {{"name", r.name}, {"origin", origin}, {"kind", r.kind},
              {"status", r.error.empty() ? "analysed" : (r.bytes > 0 ? "partial" : "error")},
              {"reason", r.error.empty() ? note : r.error}, {"bytes", r.bytes}, {"lines", r.lines},
              {"events", r.events}};
    if (r.gzip) s["gzip"] = true;
    if (r.long_lines) s["long_lines_cut"] = r.long_lines;
    if (r.dropped_old) s["events_before_since"] = r.dropped_old;
    if (r.untimed) s["events_without_time"] = r.untimed;
    if (r.duplicates) s["lines_of_earlier_events"] = r.duplicates;
    if (r.past_events) s["events_before_window"] = r.past_events;
    sources_.push_back(s);
    if (r.bytes > 0 || r.error.empty()) ++out_.sources_analysed;
    findings_.merge(r.findings);
    host_.merge(r.host);
  }

  void keep_error(const std::string& why) {
    if (!why.empty()) out_.input_errors.push_back("cleanup: " + why);
  }

  void skipped(const std::string& name, const std::string& origin, const std::string& status, const std::string& reason) {
    sources_.push_back({{"name", name}, {"origin", origin}, {"status", status}, {"reason", reason}});
    ++out_.sources_skipped;
  }

  // A collection directory (bundle or live): manifest-driven when it has
  // one, read beneath the directory without following links (bundle_dir.h).
  // Without a manifest every regular file is a log; `follow_links` (a --log
  // directory) reads links to files, a bundle never does. An entry that
  // cannot be read is listed with its reason and the rest is read.
  void analyse_dir(const std::string& dir, const std::string& label, bool follow_links) {
    std::optional<BundleDir> bundle;
    try {
      bundle.emplace(dir);
    } catch (const InputError& e) {
      out_.input_errors.push_back(clean_text(e.what(), 300));
      return;
    }
    const InputLimits log_limits = input_limits(InputKind::kLog, in_.input);
    if (bundle->has_manifest()) {
      Manifest m;
      try {
        m = bundle->manifest(in_.input);
      } catch (const std::exception& e) {
        out_.input_errors.push_back(label + ": " + clean_text(e.what(), 200));
        return;
      }
      if (in_.expect.empty() && instance_.empty()) instance_ = m.instance_type;
      HostObs h;
      if (!m.kernel.empty()) h.kernel_release = m.kernel;
      if (!m.instance_type.empty()) h.instance_type = m.instance_type;
      host_.merge(h);
      const AnalysisOptions opt = options(m.created_epoch > 0 ? m.created_epoch : now_, m.utc_offset_s, m.boot_epoch);
      manifest_time_ = m.created;
      for (const auto& a : m.files) {
        const std::string rel = safe_relative_path(a.path);
        if (a.status == "skipped" || a.status == "error") {
          skipped(a.path, a.origin, a.status, a.reason);
          continue;
        }
        if (rel.empty()) {
          skipped(a.path, a.origin, "error", "not a safe relative path");
          out_.input_errors.push_back(label + ": " + clean_text(a.path, 100) + " is not a safe relative path");
          continue;
        }
        std::optional<InputFile> file;
        try {
          file.emplace(bundle->open(rel, log_limits));
        } catch (const InputError& e) {
          const bool gone = std::string(e.what()).find(std::strerror(ENOENT)) != std::string::npos;
          skipped(a.path, a.origin, "error", gone ? "listed in the manifest but missing from the bundle" : e.what());
          out_.input_errors.push_back(label + ": " + (gone ? a.path + " is missing" : clean_text(e.what(), 300)));
          continue;
        }
        LineBlockReader reader(std::move(*file));
        analyse(reader, rel, a.origin, opt, a.status == "truncated" ? a.reason : "");
      }
      return;
    }
    const AnalysisOptions opt = options(now_, local_utc_offset());
    int files = 0;
    const std::vector<DirEntryInfo> entries =
        follow_links ? walk_dir(DirHandle(dir), true) : bundle->entries();
    for (const auto& e : entries) {
      const std::string shown = dir + "/" + e.rel;
      if (!e.regular) {
        skipped(e.rel, "file: " + shown, "skipped", e.reason);
        // A link planted in a bundle is refused, and says so in the exit code.
        if (!follow_links && e.reason.find("symbolic link") != std::string::npos)
          out_.input_errors.push_back(label + ": " + e.rel + " is a symbolic link (not followed inside a bundle)");
        continue;
      }
      ++files;
      if (follow_links) {
        analyse(shown, e.rel, "file: " + shown, opt, "no manifest");
        continue;
      }
      try {
        LineBlockReader reader(bundle->open(e.rel, log_limits));
        analyse(reader, e.rel, "file: " + shown, opt, "no manifest");
      } catch (const InputError& err) {
        skipped(e.rel, "file: " + shown, "error", err.what());
        out_.input_errors.push_back(label + ": " + clean_text(err.what(), 300));
      }
    }
    if (files == 0) out_.input_errors.push_back(label + ": no files to analyse");
  }

  void run() {
    const AnalysisOptions log_opt = options(now_, local_utc_offset());
    for (const auto& p : in_.logs) {
      const std::string name = p == "-" ? "stdin" : p;
      if (p != "-" && is_dir(p)) {
        analyse_dir(p, p, true);
        continue;
      }
      analyse(p, name, p == "-" ? "stdin" : "file: " + p, log_opt);
    }
    if (!in_.bundle.empty()) {
      if (is_dir(in_.bundle)) {
        analyse_dir(in_.bundle, in_.bundle, false);
      } else {
        std::string why;
        const auto tmp = make_temp_dir(in_.tmp_dir, &why);
        if (!tmp) {
          out_.input_errors.push_back("cannot create a temporary directory to unpack " + in_.bundle + ": " + why);
        } else {
          ExtractLimits limits;
          limits.input = input_limits(InputKind::kArchive, in_.input);
          const std::string err = extract_archive(in_.bundle, tmp->path(), limits);
          if (!err.empty()) out_.input_errors.push_back(in_.bundle + ": " + err);
          analyse_dir(tmp->path(), in_.bundle, false);
          keep_error(tmp->remove());
        }
      }
    }
    if (in_.live) {
      std::string why;
      const auto tmp = make_temp_dir(in_.tmp_dir, &why);
      if (!tmp) {
        out_.input_errors.push_back("cannot create a temporary directory for the live collection: " + why);
      } else {
        ProcessRunner real;
        CollectOptions co;
        co.fs = in_.fs;
        // Commands (journalctl, nvidia-smi, ...) describe this machine: under
        // another system's root they are not run (collect records why).
        const bool root_is_live = !in_.fs || in_.fs->is_live();
        co.runner = in_.runner ? in_.runner : root_is_live ? &real : nullptr;
        co.command_timeout_s = in_.command_timeout_s;
        co.limits_exe = in_.limits_exe;
        co.envp = in_.envp;
        co.now = now_;
        collect_artifacts(co, tmp->path());
        analyse_dir(tmp->path(), "live system", false);
        keep_error(tmp->remove());
      }
    }
    std::vector<ProbeResult> probes;
    for (const auto& p : report_.probes)
      if (p.name != "diag") probes.push_back(p);
    add_probe_findings(probes, "probes", findings_);
    if (!report_.host.cuda_runtime.empty()) host_.cuda_runtime = report_.host.cuda_runtime;
    if (instance_.empty() && host_.instance_type) instance_ = *host_.instance_type;
    host_checks(host_, instance_, pb_, findings_);
    findings_.drop_report_duplicates();
    report_.findings = findings_.render(pb_, now_);
    apply_run_folds(report_.findings, rules_.folds());
    report_.action = node_action(report_.findings);
    out_.action = report_.action;
    report_.probes.erase(std::remove_if(report_.probes.begin(), report_.probes.end(),
                                        [](const ProbeResult& p) { return p.name == "diag"; }),
                         report_.probes.end());
    report_.probes.push_back(entry());
  }

  ProbeResult entry() const {
    ProbeResult p;
    p.name = "diag";
    p.config = {{"logs", in_.logs}, {"bundle", in_.bundle}, {"live", in_.live},
                {"since_s", in_.since_s ? Json(*in_.since_s) : Json()}, {"expect", in_.expect}};
    if (in_.judge_since_s) p.config["judge_since_s"] = *in_.judge_since_s;
    if (!in_.rule_files.empty()) p.config["rules"] = in_.rule_files;
    Json host = Json::object();
    auto put = [&](const char* k, const auto& v) {
      if (v) host[k] = *v;
    };
    put("driver_version", host_.driver_version);
    put("driver_cuda", host_.driver_cuda);
    put("nvml_library", host_.nvml_lib_version);
    put("cuda_runtime", host_.cuda_runtime);
    put("kernel_release", host_.kernel_release);
    put("gpus_on_pci", host_.gpus_on_pci);
    put("gpus_visible", host_.gpus_visible);
    put("efa_devices", host_.efa_devices);
    if (!instance_.empty()) host["instance_type"] = instance_;
    p.data = {{"engine", MultiPatternScanner::engine()}, {"sources", sources_}, {"host", host},
              {"rules", rules_.rules().size()}, {"patterns", rules_.pattern_count()}, {"action", out_.action}};
    if (!manifest_time_.empty()) p.data["collected"] = manifest_time_;
    if (!out_.input_errors.empty()) {
      p.status = Status::kError;
      p.reason = clean_text(out_.input_errors.front(), 300);
      if (out_.input_errors.size() > 1) p.reason += " (and " + std::to_string(out_.input_errors.size() - 1) + " more)";
    } else if (out_.sources_analysed == 0 && report_.probes.empty()) {
      p.status = Status::kSkip;
      p.reason = "nothing to analyse";
    } else if (!out_.scanner_available && out_.sources_analysed > 0) {
      p.status = Status::kWarn;  // an incomplete diagnosis must not read as a clean one
      p.reason = "built without RE2: log lines were not scanned, only structured outputs";
    } else {
      p.status = Status::kPass;
    }
    if (!out_.scanner_available) p.data["warning"] = "built without RE2: log lines were not scanned, only structured outputs";
    return p;
  }

  DiagOutcome outcome() const { return out_; }

 private:
  const DiagInputs& in_;
  Report& report_;
  DiagOutcome out_;  // before rules_: loading site rules records input errors
  const Playbook& pb_;
  RuleSet rules_;
  std::unique_ptr<RuleEngine> own_engine_;  // unless the caller lends compiled rules (fuzzing)
  RuleEngine& engine_;
  double now_ = 0;
  std::string instance_, manifest_time_;
  Json sources_ = Json::array();
  FindingSet findings_;
  HostObs host_;
};

}  // namespace

DiagOutcome diagnose(Report& report, const DiagInputs& in) {
  Diagnosis d(in, report);
  d.run();
  return d.outcome();
}

}  // namespace nodeprobe::diag
