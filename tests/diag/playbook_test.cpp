// The playbook is data: valid, complete, and every id or cause the code can
// emit has an entry with remedy steps.
#include <gtest/gtest.h>

#include <tuple>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "rules.h"
#include "nodeprobe/finding_ids.h"
#include "playbook.h"

namespace nodeprobe::diag {
namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string playbook_file() { return slurp(std::string(NODEPROBE_PLAYBOOK_DIR) + "/playbook.json"); }
std::string xid_file() { return slurp(std::string(NODEPROBE_PLAYBOOK_DIR) + "/xid.json"); }
std::string instances_file() { return slurp(std::string(NODEPROBE_PLAYBOOK_DIR) + "/../data/instance_types.json"); }

// Causes the C++ code names outside the rule table (structured parsers, host
// checks, context rules). A new cause in code must be added here and in the
// playbook; this list is checked against the sources below.
const std::vector<std::pair<std::string, std::string>> kCodeCauses = {
    {"gpu.not_found", "no_driver"},        {"gpu.not_found", "no_device"},
    {"gpu.not_found", "no_gpu_hardware"},  {"gpu.not_found", "driver_not_loaded"},
    {"gpu.not_found", "missing_gpus"},     {"gpu.not_found", "device_error"}, {"gpu.not_found", "sensor_unreadable"},
    {"gpu.driver_kernel_mismatch", "library_mismatch"},
    {"gpu.driver_kernel_mismatch", "module_kernel_mismatch"},
    {"gpu.driver_kernel_mismatch", "module_missing"},
    {"gpu.driver_kernel_mismatch", "headers_missing"},
    {"gpu.cuda_driver_insufficient", "no_driver"}, {"gpu.cuda_driver_insufficient", "minor_version"},
    {"gpu.count_mismatch", "model_mismatch"},
    {"gpu.pcie_degraded", "width_downgraded"}, {"gpu.pcie_degraded", "speed_downgraded"},
    {"gpu.pcie_degraded", "acs_redirect"}, {"gpu.pcie_degraded", "iommu_translation"}, {"host.oom", "memory_exhausted"},
    {"gpu.compute_slow", "throttled"},     {"gpu.ecc", "uncorrectable"}, {"gpu.ecc", "retirement_pending"},
    {"efa.fallback_tcp", "tcp_only"},      {"efa.missing", "ofi_failed"}, {"efa.missing", "no_provider"},
    {"nccl.network_config", "generic_error"},
    {"nccl.network_config", "secondary"},
    {"nccl.shm", "system_error"},          {"gpu.fabric_manager", "not_needed"},
    {"limits.nofile", "shm_from_nofile"},  {"limits.shm", "sysctl"}, {"limits.max_map_count", "sysctl"},
    {"limits.somaxconn", "sysctl"},        {"limits.netdev_backlog", "sysctl"},
    {"limits.netdev_backlog", "softnet_drops"},
    {"efa.fallback_tcp", "ofi_tcp"},      {"selinux.avc", "permissive"}, {"selinux.avc", "enforcing"},
    {"gpu.ecc", "remap_pending"},          {"gpu.ecc", "remap_failed"},   {"gpu.nvlink", "nvlink_errors"},
    {"gpu.nvlink", "links_inactive"},      {"gpu.pcie_degraded", "aer_corrected"},
    {"gpu.pcie_degraded", "aer_uncorrected"}, {"gpu.fabric_manager", "not_initialized"},
    {"gpu.fabric_manager", "training_failed"}, {"gpu.fabric_manager", "not_running"},
    {"gpu.fabric_manager", "version_mismatch"},
};

TEST(Playbook, EmbeddedCopyIsTheSourceFile) {
  EXPECT_EQ(std::string(embedded_playbook_json()), playbook_file());
  EXPECT_EQ(std::string(embedded_xid_json()), xid_file());
}

TEST(Playbook, EveryVocabularyIdHasAnEntryWithRemedySteps) {
  const Playbook& pb = default_playbook();
  for (const auto& k : finding_vocabulary()) {
    const PlaybookEntry* e = pb.entry(k.id);
    ASSERT_NE(e, nullptr) << k.id;
    EXPECT_FALSE(e->remedy.empty()) << k.id;
    EXPECT_FALSE(e->message.empty()) << k.id;
    EXPECT_EQ(e->severity, k.severity) << k.id << ": playbook and vocabulary disagree on the default severity";
  }
  EXPECT_EQ(pb.entries().size(), finding_vocabulary().size());
}

TEST(Playbook, EveryRuleFindingAndCauseExists) {
  const Playbook& pb = default_playbook();
  for (const auto& r : default_rules().rules()) {
    if (r.finding.empty()) continue;  // signal
    ASSERT_NE(find_finding_kind(r.finding), nullptr) << r.key;
    ASSERT_NE(pb.entry(r.finding), nullptr) << r.key;
    if (!r.cause.empty()) {
      const PlaybookCause* c = pb.cause(r.finding, r.cause);
      ASSERT_NE(c, nullptr) << r.key << " -> " << r.finding << "/" << r.cause;
    }
    // Every finding a rule raises ends with remedy steps (cause's or entry's).
    EXPECT_FALSE(pb.entry(r.finding)->remedy.empty()) << r.key;
  }
}

TEST(Playbook, EveryCauseTheCodeNamesExists) {
  const Playbook& pb = default_playbook();
  for (const auto& [id, cause] : kCodeCauses) EXPECT_NE(pb.cause(id, cause), nullptr) << id << "/" << cause;
  // The list above is complete: every "cause" string literal passed by the
  // structured parsers, host checks and resolvers appears in it.
  std::set<std::string> known;
  for (const auto& [id, cause] : kCodeCauses) known.insert(cause);
  for (const char* f : {"sections_gpu.cpp", "sections_sys.cpp", "host_checks.cpp", "resolvers.cpp", "rule_engine.cpp"}) {
    const std::string src = slurp(std::string(NODEPROBE_SOURCE_DIR) + "/diag/engine/" + f);
    for (const auto& e : pb.entries())
      for (const auto& [ck, cv] : e.causes) {
        (void)cv;
        const std::string quoted = "\"" + ck + "\"";
        if (src.find(quoted) != std::string::npos && !known.count(ck)) {
          // A cause literal used in code that a rule declares is fine too.
          bool from_rule = false;
          for (const auto& r : default_rules().rules()) from_rule |= r.cause == ck;
          EXPECT_TRUE(from_rule) << f << " uses cause " << ck << " not listed in kCodeCauses";
        }
      }
  }
}

TEST(Playbook, XidCatalogueAndInstances) {
  const Playbook& pb = default_playbook();
  EXPECT_EQ(pb.xid(79).name, "GPU has fallen off the bus");
  EXPECT_EQ(pb.xid(79).severity, Severity::kError);
  EXPECT_EQ(pb.xid(13).severity, Severity::kWarn);  // application-caused
  EXPECT_EQ(pb.xid(45).severity, Severity::kInfo);  // follow-on
  EXPECT_FALSE(pb.xid(9999).known);
  EXPECT_EQ(pb.xid(9999).code, 9999);
  ASSERT_NE(pb.instance("p4d.24xlarge"), nullptr);
  EXPECT_EQ(pb.instance("p4d.24xlarge")->gpus, 8);
  EXPECT_TRUE(pb.instance("p4d.24xlarge")->efa);
  EXPECT_FALSE(pb.instance("g4dn.xlarge")->efa);
  EXPECT_EQ(pb.instance("m5.large"), nullptr);
}

// Validation: unknown keys and ids, missing ids and bad templates are errors.
TEST(Playbook, ValidationRejectsBadDocuments) {
  const std::string good = playbook_file(), x = xid_file(), i = instances_file();
  EXPECT_NO_THROW(Playbook::parse(good, x, i));
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    return s.replace(p, from.size(), to);
  };
  EXPECT_THROW(Playbook::parse(edited("\"category\": \"gpu\"", "\"category\": \"gpu\", \"colour\": \"red\""), x, i),
               PlaybookError);  // unknown key
  EXPECT_THROW(Playbook::parse(edited("\"id\": \"gpu.oom\"", "\"id\": \"gpu.out_of_memory\""), x, i),
               PlaybookError);  // unknown id (and gpu.oom then missing)
  EXPECT_THROW(Playbook::parse(edited("\"severity\": \"warn\"", "\"severity\": \"fatal\""), x, i), PlaybookError);
  EXPECT_THROW(Playbook::parse(edited("\"message\": \"Out of GPU memory", "\"message\": \"Out of GPU {memory"), x, i),
               PlaybookError);  // unterminated placeholder
  EXPECT_THROW(Playbook::parse("{\"schema\": \"nodeprobe.playbook/1\", \"entries\": []}", x, i),
               PlaybookError);  // every vocabulary id missing
  EXPECT_THROW(Playbook::parse("not json", x, i), PlaybookError);
  EXPECT_THROW(Playbook::parse(good, "{\"schema\": \"nodeprobe.xid/1\", \"unknown\": {}, \"codes\": {}}", i),
               PlaybookError);
  EXPECT_THROW(Playbook::parse(good, x, "{\"schema\": \"nodeprobe.instance_types/1\", \"instance_types\": {\"p9.huge\": {\"gpu_count\": -1}}}"),
               PlaybookError);
  try {
    Playbook::parse(edited("\"category\": \"gpu\"", "\"category\": \"gpu\", \"colour\": \"red\""), x, i);
  } catch (const PlaybookError& e) {
    EXPECT_NE(std::string(e.what()).find("colour"), std::string::npos) << e.what();
  }
}

TEST(Playbook, TemplatesFillFactsAndDropOptionalSegments) {
  const Json facts = {{"code", "79"}, {"pci", Json::array({"0000:3b:00", "0000:5e:00"})}};
  bool complete = true;
  EXPECT_EQ(fill_template("Xid {code}[ on {pci}][ pid {pid}]", facts, &complete), "Xid 79 on 0000:3b:00, 0000:5e:00");
  EXPECT_TRUE(complete);
  EXPECT_EQ(fill_template("nc -vz {peer} {port}", Json::object(), &complete), "nc -vz <peer> <port>");
  EXPECT_FALSE(complete);
}

// Remedy steps are commands: their brackets are the command's (a JMESPath
// query, a pip extra, a glob), never optional segments. Rendered as segments,
// 'SecurityGroups[].[IpPermissions,IpPermissionsEgress]' lost its brackets.
TEST(Playbook, RemedyStepsKeepTheirBrackets) {
  EXPECT_EQ(fill_step("grep -e '^[0-9a-f]' {pci} /dev/nvidia[0-7]", {{"pci", "0000:3b:00"}}),
            "grep -e '^[0-9a-f]' 0000:3b:00 /dev/nvidia[0-7]");
  EXPECT_EQ(fill_step("nvidia-smi -r -i {pci}", Json::object()), "nvidia-smi -r -i <pci>");
  const Playbook& pb = default_playbook();
  for (const auto& [id, cause, needle] :
       {std::tuple<const char*, const char*, const char*>{"net.unreachable", "efa_unreachable",
                                                           "'SecurityGroups[].[IpPermissions,IpPermissionsEgress]'"},
        {"gpu.not_found", "cuda_libraries_missing", "\"tensorflow[and-cuda]\", \"jax[cuda12]\""},
        {"gpu.count_mismatch", "slurm_gres", "/dev/nvidia[0-7]"}}) {
    Finding f;
    f.id = id;
    pb.render(f, cause);
    EXPECT_TRUE(std::any_of(f.remedy.begin(), f.remedy.end(),
                            [&](const std::string& s) { return s.find(needle) != std::string::npos; }))
        << id << "/" << cause << " lacks " << needle;
  }
}

TEST(Playbook, RenderUsesCauseThenEntryAndKeepsExactFixesFirst) {
  const Playbook& pb = default_playbook();
  Finding f;
  f.id = "limits.nofile";
  f.remedy = {"exact fix from the check"};
  f.facts = {{"observed", "1024"}, {"expected", ">= 65535"}};
  pb.render(f, "");
  EXPECT_EQ(f.title, "Open-files limit (nofile) too low (1024, expected >= 65535)");
  ASSERT_GE(f.remedy.size(), 2u);
  EXPECT_EQ(f.remedy.front(), "exact fix from the check");
  // The generic "set it" step the check's fix replaces is gone.
  EXPECT_EQ(std::count_if(f.remedy.begin(), f.remedy.end(),
                          [](const std::string& s) { return s.find("99-nodeprobe.conf") != std::string::npos; }),
            0);
  EXPECT_EQ(f.severity, Severity::kWarn);
  Finding g;
  g.id = "gpu.not_found";
  pb.render(g, "no_gpu_hardware");
  EXPECT_EQ(g.severity, Severity::kInfo);
  EXPECT_NE(g.title.find("no NVIDIA GPU"), std::string::npos) << g.title;
  EXPECT_FALSE(g.refs.empty());
}

}  // namespace
}  // namespace nodeprobe::diag
