// Bundles: the tar.gz format, hostile and broken archives, the collector on a
// fixture system, secrets, and "diag --bundle gives the live findings".
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "collector.h"
#include "diagnose.h"
#include "nodeprobe/report_json.h"
#include "tar_gz.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

void put(const std::string& root, const std::string& rel, const std::string& content) {
  fs::create_directories(fs::path(root + "/" + rel).parent_path());
  write_file(root + "/" + rel, content);
}

TEST(TarGz, RoundTrip) {
  TempDir d;
  put(d.path(), "src/big.bin", std::string(300000, 'q'));
  const std::string deep = "top/" + std::string(60, 'a') + "/" + std::string(60, 'b') + "/file.txt";  // > 100 bytes: ustar prefix
  {
    TarGzWriter w(d.file("b.tar.gz"));
    w.add_directory("top");
    w.add_bytes("top/small.txt", "hello\n");
    w.add_bytes(deep, "deep\n");
    w.add_file("top/big.bin", d.file("src/big.bin"));
    w.add_bytes("top/empty", "");
    w.finish();
  }
  fs::create_directory(d.file("out"));
  EXPECT_EQ(extract_archive(d.file("b.tar.gz"), d.file("out")), "");
  EXPECT_EQ(read_file(d.file("out/top/small.txt")), "hello\n");
  EXPECT_EQ(read_file(d.file("out/" + deep)), "deep\n");
  EXPECT_EQ(read_file(d.file("out/top/big.bin")), std::string(300000, 'q'));
  EXPECT_EQ(read_file(d.file("out/top/empty")), "");
}

TEST(TarGz, HostileAndBrokenArchives) {
  TempDir d;
  {
    TarGzWriter w(d.file("evil.tar.gz"));
    w.add_bytes("../../escape.txt", "x");
    w.finish();
  }
  fs::create_directory(d.file("out"));
  EXPECT_NE(extract_archive(d.file("evil.tar.gz"), d.file("out")).find("unsafe name"), std::string::npos);
  EXPECT_FALSE(fs::exists(d.path() + "/../escape.txt"));
  EXPECT_EQ(safe_relative_path("/etc/passwd"), "");
  EXPECT_EQ(safe_relative_path("a/../b"), "");
  EXPECT_EQ(safe_relative_path("./a/b.txt"), "a/b.txt");

  {
    TarGzWriter w(d.file("ok.tar.gz"));
    w.add_bytes("x/log.txt", std::string(200000, 'z'));
    w.finish();
  }
  const std::string full = read_file(d.file("ok.tar.gz"));
  write_file(d.file("cut.tar.gz"), full.substr(0, full.size() / 2));
  fs::create_directory(d.file("out2"));
  const std::string err = extract_archive(d.file("cut.tar.gz"), d.file("out2"));
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;

  write_file(d.file("notatar"), std::string(2048, 'A'));
  EXPECT_NE(extract_archive(d.file("notatar"), d.file("out2")).find("not a tar archive"), std::string::npos);
  EXPECT_NE(extract_archive(d.file("missing.tar.gz"), d.file("out2")).find("No such file"), std::string::npos);
}

// Commands by name -> what they print and their exit code.
class FakeRunner : public CommandRunner {
 public:
  struct Out {
    std::string text;
    int code = 0;
    bool exists = true;
  };
  std::map<std::string, Out> commands;
  std::vector<std::string> ran;
  SpawnResult run(const std::vector<std::string>& argv, double, const std::string& out_path) override {
    std::string line;
    for (const auto& a : argv) line += a + " ";
    ran.push_back(line);
    SpawnResult r;
    auto it = commands.find(argv[0]);
    if (it == commands.end() || !it->second.exists) {
      r.start_error = "No such file or directory";
      return r;
    }
    write_file(out_path, it->second.text);
    r.started = true;
    r.exit_code = it->second.code;
    return r;
  }
};

struct FixtureNode {
  TempDir root;
  FakeRunner runner;
  FsRoot fs{root.path()};
  std::vector<std::string> env = {"NCCL_DEBUG=INFO", "AWS_SECRET_ACCESS_KEY=topsecret1", "NCCL_API_TOKEN=topsecret2",
                                  "HOME=/root"};
  std::vector<char*> envp;
  FixtureNode() {
    const std::string r = root.path();
    put(r, "proc/sys/kernel/osrelease", "4.18.0-513.el8.x86_64\n");
    put(r, "proc/sys/kernel/hostname", "gpu-node-1\n");
    put(r, "proc/stat", "cpu 1 2 3\nbtime 1764400000\n");
    put(r, "proc/sys/vm/max_map_count", "65530\n");
    put(r, "proc/sys/net/core/somaxconn", "4096\n");
    put(r, "proc/self/limits", "Limit                     Soft Limit           Hard Limit           Units\n"
                               "Max open files            1024                 4096                 files\n");
    put(r, "proc/mounts", "/dev/nvme0n1p1 / xfs rw,relatime 0 0\n");
    put(r, "sys/bus/pci/devices/0000:00:1e.0/vendor", "0x10de\n");
    put(r, "sys/bus/pci/devices/0000:00:1e.0/device", "0x1eb8\n");
    put(r, "sys/bus/pci/devices/0000:00:1e.0/class", "0x030200\n");
    put(r, "var/log/messages",
        "Nov 29 15:00:01 gpu-node-1 kernel: NVRM: Xid (PCI:0000:00:1e): 79, pid=4242, GPU has fallen off the bus.\n"
        "Nov 29 15:00:02 gpu-node-1 app[77]: login password=hunter2 accepted\n");
    put(r, "var/log/audit/audit.log",
        "type=EXECVE msg=audit(1764428400.1:5): argc=3 a0=\"curl\" a1=\"-H\" a2=\"Authorization: Bearer sk-live-999\"\n"
        "type=AVC msg=audit(1764428400.2:6): avc:  denied  { read } for  pid=9 comm=\"python\" path=\"/dev/nvidia0\" "
        "scontext=system_u:system_r:container_t:s0 tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file permissive=0\n");
    runner.commands["nvidia-smi"] = {"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                                     "Make sure that the latest NVIDIA driver is installed and running.\n", 9};
    runner.commands["modinfo"] = {"modinfo: ERROR: Module nvidia not found.\n", 1};
    runner.commands["fi_info"] = {"fi_getinfo: -61 (No data available)\n", 1};
    runner.commands["journalctl"] = {"2025-11-29T15:00:01.000000+0000 gpu-node-1 kernel: NVRM: Xid (PCI:0000:00:1e): 79, pid=4242, GPU has fallen off the bus.\n", 0};
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  DiagInputs inputs() {
    DiagInputs in;
    in.fs = &fs;
    in.runner = &runner;
    in.envp = envp.data();
    in.now = 1764432000;
    in.tmp_dir = root.path();
    return in;
  }
  // `nodeprobe diag` on this node, live.
  Report diagnose_live(DiagOutcome* outcome = nullptr) {
    DiagInputs in = inputs();
    in.live = true;
    Report r;
    const DiagOutcome out = diagnose(r, in);
    if (outcome) *outcome = out;
    return r;
  }
};

// `nodeprobe diag --bundle BUNDLE` (a tar.gz or its directory), unpacking into work.
Report diagnose_bundle(const std::string& bundle, const TempDir& work, DiagOutcome* outcome = nullptr) {
  DiagInputs in;
  in.bundle = bundle;
  in.tmp_dir = work.path();
  Report r;
  const DiagOutcome out = diagnose(r, in);
  if (outcome) *outcome = out;
  return r;
}

std::string findings_json(const Report& r) {
  Json j = r.findings;
  return j.dump(1);
}

// Collects the fixture node into work/c and packs it as work/NAME, every
// member under PREFIX.
void collect_bundle(FixtureNode& node, TempDir& work, const std::string& name = "bundle.tar.gz",
                    const std::string& prefix = "nodeprobe-bundle/") {
  CollectOptions co;
  co.fs = &node.fs;
  co.runner = &node.runner;
  co.envp = node.envp.data();
  co.now = 1764432000;
  const Manifest m = collect_artifacts(co, work.file("c"));
  TarGzWriter w(work.file(name));
  w.add_file(prefix + "manifest.json", work.file("c/manifest.json"));
  for (const auto& a : m.files)
    if (a.status == "ok" || a.status == "truncated") w.add_file(prefix + a.path, work.file("c/" + a.path));
  w.finish();
}

// A PCIe config space (4096 bytes, as root reads it) whose extended
// capabilities are AER at 0x100 and, when acs_ctl >= 0, ACS at 0x148.
std::string pcie_config(int acs_ctl) {
  std::string c(4096, '\0');
  auto put32 = [&](std::size_t off, std::uint32_t v) {
    for (int b = 0; b < 4; ++b) c[off + static_cast<std::size_t>(b)] = static_cast<char>((v >> (8 * b)) & 0xffu);
  };
  put32(0x100, 0x0001u | (1u << 16) | ((acs_ctl >= 0 ? 0x148u : 0u) << 20));  // AER, version 1, next
  if (acs_ctl >= 0) {
    put32(0x148, 0x000du | (1u << 16));                                 // ACS, last
    put32(0x14c, 0x007fu | (static_cast<std::uint32_t>(acs_ctl) << 16));  // capability, control
  }
  return c;
}

// A root port, a PCIe switch (upstream port and two downstream ports) and a
// GPU below each downstream port, linked from /sys/bus/pci/devices as sysfs does.
void add_pcie_switch(const std::string& root, int downstream_acs, const std::string& root_config) {
  const std::string top = "sys/devices/pci0000:00/0000:00:01.0";
  const std::string sw = top + "/0000:01:00.0";
  const std::vector<std::pair<std::string, std::string>> devs = {
      {top, "060400"}, {sw, "060400"}, {sw + "/0000:02:08.0", "060400"}, {sw + "/0000:02:10.0", "060400"},
      {sw + "/0000:02:08.0/0000:03:00.0", "030200"}, {sw + "/0000:02:10.0/0000:04:00.0", "030200"}};
  fs::create_directories(root + "/sys/bus/pci/devices");
  for (const auto& [dir, cls] : devs) {
    const std::string addr = fs::path(dir).filename().string();
    const bool bridge = cls == "060400";
    put(root, dir + "/vendor", bridge ? "0x10b5\n" : "0x10de\n");
    put(root, dir + "/device", bridge ? "0x8747\n" : "0x2330\n");
    put(root, dir + "/class", "0x" + cls + "\n");
    if (bridge)
      put(root, dir + "/config", addr == "0000:00:01.0" ? root_config : addr == "0000:01:00.0" ? pcie_config(-1)
                                                                                              : pcie_config(downstream_acs));
    if (!bridge) put(root, dir + "/iommu_group/type", "DMA-FQ\n");
    fs::create_directory_symlink("../../../" + dir.substr(4), root + "/sys/bus/pci/devices/" + addr);
  }
}

TEST(Collector, AcsControlFromConfigSpace) {
  EXPECT_EQ(acs_control(pcie_config(0x1d)), std::optional<std::uint16_t>(0x1d));
  EXPECT_EQ(acs_control(pcie_config(0)), std::optional<std::uint16_t>(0));
  EXPECT_EQ(acs_control(pcie_config(-1)), std::nullopt);
  EXPECT_EQ(acs_control(std::string(64, '\x01')), std::nullopt);  // without root: 64 bytes
  std::string loop = pcie_config(-1);
  loop[0x102] = 0x01;
  loop[0x103] = 0x10;  // next = 0x100: a loop ends, not hangs
  EXPECT_EQ(acs_control(loop), std::nullopt);
}

// ACS redirect on the switch between two GPUs: a warning, named the same live
// and from the node's bundle; without root (64-byte config) nothing is claimed.
TEST(Collector, AcsRedirectOnASwitchIsOneVerdictLiveAndFromTheBundle) {
  for (const int ctl : {0x001d, 0x0001}) {
    FixtureNode node;
    add_pcie_switch(node.root.path(), ctl, pcie_config(0x001f));
    const Report live = node.diagnose_live();
    const Finding* acs = nullptr;
    for (const auto& f : live.findings)
      if (f.id == "gpu.pcie_degraded" && f.facts.value("cause", "") == "acs_redirect") acs = &f;
    if (ctl == 0x0001) {
      EXPECT_EQ(acs, nullptr) << "Source Validation alone redirects nothing";
      continue;
    }
    ASSERT_NE(acs, nullptr);
    EXPECT_EQ(acs->severity, Severity::kWarn);
    bool iommu = false;
    for (const auto& f : live.findings) iommu |= f.facts.value("cause", "") == "iommu_translation";
    EXPECT_TRUE(iommu) << "two GPUs in DMA-FQ domains: " << findings_json(live);
    EXPECT_EQ(acs->facts.value("bridges", ""), "2");
    EXPECT_EQ(acs->facts.value("gpus", ""), "2");
    TempDir work;
    collect_bundle(node, work);
    const std::string facts = read_file(work.file("c/facts/host.txt"));
    EXPECT_NE(facts.find("pci_acs: 0000:00:01.0 0000:03:00.0 001f root_port"), std::string::npos) << facts;
    EXPECT_NE(facts.find("pci_acs: 0000:02:08.0 0000:03:00.0 001d switch_port"), std::string::npos) << facts;
    EXPECT_EQ(facts.find("pci_acs: 0000:01:00.0"), std::string::npos) << "the upstream port has no ACS";
    EXPECT_NE(facts.find("gpu_iommu: 0000:04:00.0 DMA-FQ"), std::string::npos) << facts;
    EXPECT_EQ(findings_json(diagnose_bundle(work.file("bundle.tar.gz"), work)), findings_json(live));
  }
  FixtureNode node;
  add_pcie_switch(node.root.path(), 0x001d, std::string(64, '\0'));
  for (const char* b : {"0000:01:00.0", "0000:02:08.0", "0000:02:10.0"})
    write_file(node.root.path() + "/sys/devices/pci0000:00/0000:00:01.0/" +
                   (std::string(b) == "0000:01:00.0" ? std::string() : "0000:01:00.0/") + b + "/config",
               std::string(64, '\0'));
  EXPECT_EQ(acs_facts(node.fs, {"0000:03:00.0"}),
            "pci_acs_unreadable: 0000:00:01.0\npci_acs_unreadable: 0000:01:00.0\npci_acs_unreadable: 0000:02:08.0\n");
}

TEST(Collector, LiveDiagnosisOnAFixtureNode) {
  FixtureNode node;
  DiagOutcome out;
  const Report rep = node.diagnose_live(&out);
  EXPECT_TRUE(out.input_errors.empty());
  std::map<std::string, const Finding*> by;
  for (const auto& f : rep.findings) by[f.id] = &f;
  ASSERT_TRUE(by.count("gpu.xid"));
  EXPECT_EQ(by["gpu.xid"]->severity, Severity::kError);
  EXPECT_EQ(by["gpu.xid"]->count, 1) << "the syslog copy of a kernel-log line must not count twice";
  ASSERT_TRUE(by.count("gpu.not_found"));
  EXPECT_EQ(by["gpu.not_found"]->severity, Severity::kError);  // a GPU on the bus, no driver
  ASSERT_TRUE(by.count("gpu.driver_kernel_mismatch"));         // and no module for the kernel
  ASSERT_TRUE(by.count("selinux.avc"));
  ASSERT_TRUE(by.count("limits.nofile"));
  ASSERT_TRUE(by.count("limits.max_map_count"));
  // The diag entry lists what was read and what was skipped, with reasons.
  const ProbeResult& d = rep.probes.back();
  EXPECT_EQ(d.name, "diag");
  bool lspci_skipped = false;
  for (const auto& s : d.data.at("sources"))
    if (s.value("name", "") == "cmd/lspci-nvidia.txt") lspci_skipped = s.value("status", "") == "skipped";
  EXPECT_TRUE(lspci_skipped);
  // Every spawned command had an argv (no shell).
  for (const auto& c : node.runner.ran) EXPECT_EQ(c.find("sh -c"), std::string::npos) << c;
}

// The package manager's list of kernels: module build headers only for a
// kernel the node does not run is named live and from the bundle alike, from
// rpm or dpkg (whichever answers); with no NVIDIA GPU on the bus it is not judged.
TEST(Collector, HeadersForAnotherKernelAreOneVerdictLiveAndFromTheBundle) {
  for (const bool rpm : {true, false}) {
    SCOPED_TRACE(rpm ? "rpm" : "dpkg");
    FixtureNode node;
    if (rpm) {
      node.runner.commands["rpm"] = {"kernel-core-4.18.0-513.el8.x86_64\nkernel-4.18.0-513.el8.x86_64\n"
                                     "kernel-devel-4.18.0-477.el8.x86_64\nkernel-headers-4.18.0-513.el8.x86_64\n", 0};
    } else {
      write_file(node.root.path() + "/proc/sys/kernel/osrelease", "5.10.0-30-amd64\n");
      node.runner.commands["dpkg"] = {
          "Desired=Unknown/Install/Remove/Purge/Hold\n"
          "| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend\n"
          "|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)\n"
          "||/ Name                         Version      Architecture Description\n"
          "+++-============================-============-============-=================================\n"
          "ii  linux-headers-5.10.0-28-amd64 5.10.209-2   amd64        Header files for Linux 5.10.0-28-amd64\n"
          "ii  linux-image-5.10.0-30-amd64  5.10.218-1   amd64        Linux 5.10 for 64-bit PCs (signed)\n", 0};
    }
    // A module built for the running kernel is on disk (else module_missing is the finding of the id).
    const std::string running = rpm ? "4.18.0-513.el8.x86_64" : "5.10.0-30-amd64";
    node.runner.commands["modinfo"] = {"filename:       /lib/modules/" + running + "/updates/dkms/nvidia.ko\n"
                                       "version:        535.54.03\nvermagic:       " + running +
                                           " SMP mod_unload modversions\n", 0};
    const Report live = node.diagnose_live();
    const Finding* headers = nullptr;
    for (const auto& f : live.findings)
      if (f.facts.value("cause", "") == "headers_missing") headers = &f;
    ASSERT_NE(headers, nullptr) << findings_json(live);
    EXPECT_EQ(headers->severity, Severity::kWarn);
    EXPECT_EQ(headers->facts.value("running_kernel", ""), running);
    TempDir work;
    collect_bundle(node, work);
    EXPECT_EQ(findings_json(diagnose_bundle(work.file("bundle.tar.gz"), work)), findings_json(live));
    // The same node without its GPU: nothing to build a module for.
    fs::remove_all(node.root.path() + "/sys/bus/pci/devices/0000:00:1e.0");
    const Report no_gpu = node.diagnose_live();
    for (const auto& f : no_gpu.findings) EXPECT_NE(f.facts.value("cause", ""), "headers_missing") << findings_json(no_gpu);
  }
}

TEST(Collector, EdacMemoryErrorCountsAreOneVerdictLiveAndFromTheBundle) {
  FixtureNode node;
  const std::string mc = node.root.path() + "/sys/devices/system/edac/mc/";
  // A node whose EDAC driver counted nothing says nothing about memory.
  write_file(mc + "mc0/ce_count", "0\n");
  write_file(mc + "mc0/ue_count", "0\n");
  for (const char* d : {"0", "1"}) {
    write_file(mc + "mc0/dimm" + d + "/dimm_ce_count", "0\n");
    write_file(mc + "mc0/dimm" + d + "/dimm_ue_count", "0\n");
    write_file(mc + "mc0/dimm" + d + "/dimm_label", std::string("CPU_SrcID#0_MC#0_Chan#") + d + "_DIMM#0\n");
  }
  const auto memory = [](const Report& r) -> const Finding* {
    for (const auto& f : r.findings)
      if (f.id == "host.machine_check") return &f;
    return nullptr;
  };
  EXPECT_EQ(memory(node.diagnose_live()), nullptr);
  // Live and from a bundle of the same node: the memory finding, with its cause, severity and DIMM.
  const auto judged = [&](const char* cause, Severity severity, const char* dimm, const char* count) {
    const Report live = node.diagnose_live();
    const Finding* f = memory(live);
    ASSERT_NE(f, nullptr) << findings_json(live);
    EXPECT_EQ(f->facts.value("cause", ""), cause);
    EXPECT_EQ(f->severity, severity);
    EXPECT_EQ(f->facts.value("dimm", ""), dimm);
    EXPECT_EQ(f->facts.value("count", ""), count);
    TempDir work;
    collect_bundle(node, work);
    EXPECT_EQ(findings_json(diagnose_bundle(work.file("bundle.tar.gz"), work)), findings_json(live));
  };
  // Corrected errors on one DIMM: named, warn, with the DIMM that has the most.
  write_file(mc + "mc0/ce_count", "14\n");
  write_file(mc + "mc0/dimm1/dimm_ce_count", "12\n");
  write_file(mc + "mc0/dimm0/dimm_ce_count", "2\n");
  judged("memory_corrected", Severity::kWarn, "CPU_SrcID#0_MC#0_Chan#1_DIMM#0", "14");
  // One uncorrected error outranks them: error, action replace.
  write_file(mc + "mc0/ue_count", "1\n");
  write_file(mc + "mc0/dimm0/dimm_ue_count", "1\n");
  judged("memory_uncorrected", Severity::kError, "CPU_SrcID#0_MC#0_Chan#0_DIMM#0", "1");
}

TEST(Collector, BundleGivesTheFindingsOfTheLiveDiagnosisAndHoldsNoSecrets) {
  FixtureNode node;
  const Report live = node.diagnose_live();

  TempDir work;
  collect_bundle(node, work);
  // No secret anywhere in what was collected.
  for (const auto& e : fs::recursive_directory_iterator(work.file("c"))) {
    if (!e.is_regular_file()) continue;
    const std::string content = read_file(e.path().string());
    for (const char* secret : {"hunter2", "topsecret1", "topsecret2", "sk-live-999"})
      EXPECT_EQ(content.find(secret), std::string::npos) << secret << " in " << e.path();
  }
  const std::string env = read_file(work.file("c/facts/env.txt"));
  EXPECT_NE(env.find("NCCL_DEBUG=INFO"), std::string::npos);
  EXPECT_EQ(env.find("HOME"), std::string::npos);

  for (const std::string& bundle : {work.file("bundle.tar.gz"), work.file("c")}) {
    DiagOutcome out;
    const Report from_bundle = diagnose_bundle(bundle, work, &out);
    EXPECT_TRUE(out.input_errors.empty()) << out.input_errors.front();
    EXPECT_EQ(findings_json(from_bundle), findings_json(live)) << bundle;
  }
}

// A bundle carries accept's report beside the logs it was derived from: the
// report's findings read again must not count those events twice, nor make
// an earlier window's event a current one (issue 20: one event, one count).
TEST(Collector, AReportBesideItsLogsAddsNothing) {
  TempDir d;
  const double now = 1764432000;  // 2025-11-29T16:00:00Z
  write_file(d.file("messages"),
             "2025-11-27T10:00:00+0000 h kernel: python3 invoked oom-killer: gfp_mask=0x100cca, order=0, oom_score_adj=0\n"
             "2025-11-27T10:00:00+0000 h kernel: Out of memory: Killed process 31337 (python3) total-vm:9876kB, anon-rss:8765kB\n"
             "2025-11-27T10:05:00+0000 h kernel: NVRM: Xid (PCI:0000:10:1c): 79, pid=4242, GPU has fallen off the bus.\n"
             "2025-11-29T15:50:00+0000 h kernel: Out of memory: Killed process 2718 (pt_main_thread) total-vm:6123kB, anon-rss:5234kB\n");
  auto diagnose_logs = [&](std::vector<std::string> logs) {
    DiagInputs in;
    in.logs = std::move(logs);
    in.judge_since_s = 3600;
    in.now = now;
    in.tmp_dir = d.path();
    Report r;
    diagnose(r, in);
    return r;
  };
  const Report logs = diagnose_logs({d.file("messages")});
  Json j = logs;
  write_file(d.file("report.json"), j.dump(1));
  const Report both = diagnose_logs({d.file("messages"), d.file("report.json")});
  auto summary = [](const Report& r) {
    std::vector<std::string> s;
    for (const auto& f : r.findings)
      s.push_back(f.id + "/" + std::string(to_string(f.severity)) + " x" + std::to_string(f.count) + " " + f.title);
    return s;
  };
  EXPECT_EQ(summary(both), summary(logs)) << findings_json(both);
  int oom_now = 0, oom_past = 0;
  for (const auto& f : both.findings)
    if (f.id == "host.oom") (f.facts.value("past", std::string()) == "yes" ? oom_past : oom_now) += 1;
  EXPECT_EQ(oom_now, 1);
  EXPECT_EQ(oom_past, 1);
  EXPECT_EQ(both.action, logs.action);
}

TEST(Collector, TruncatedBundleIsAnInputErrorWithAPartialDiagnosis) {
  FixtureNode node;
  TempDir work;
  collect_bundle(node, work, "b.tar.gz", "");
  const std::string full = read_file(work.file("b.tar.gz"));
  write_file(work.file("cut.tar.gz"), full.substr(0, full.size() * 2 / 3));
  DiagOutcome out;
  const Report rep = diagnose_bundle(work.file("cut.tar.gz"), work, &out);
  ASSERT_FALSE(out.input_errors.empty());
  EXPECT_EQ(rep.probes.back().status, Status::kError);
  EXPECT_FALSE(rep.probes.back().reason.empty());
  (void)dump_report(rep);  // still a valid report
}

}  // namespace
}  // namespace nodeprobe::diag
