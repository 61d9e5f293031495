// Structured outputs: versions, counts and states read from nvidia-smi,
// lspci, fi_info, sysctl, limits, mounts and nodeprobe reports.
#include <gtest/gtest.h>

#include <set>

#include "playbook.h"
#include "rule_engine.h"

namespace nodeprobe::diag {
namespace {

SourceResult parse(const std::string& text) {
  static RuleEngine e(default_playbook());
  LineBlockReader reader(text, "out.txt");
  AnalysisOptions opt;
  opt.time.now = 1764432000;
  return e.analyze(reader, "out.txt", opt);
}

const char* kSmi = R"(
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM4-40GB  On| 00000000:10:1C.0 Off |                    0 |
| N/A   32C    P0    52W / 400W |      0MiB / 40960MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM4-40GB  On| 00000000:10:1D.0 Off |                    0 |
| N/A   31C    P0    50W / 400W |      0MiB / 40960MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
)";

// Package listings: the kernels installed and those whose module build
// headers are, as uname -r prints them, in every listing people paste.
TEST(Sections, KernelPackagesInEveryListing) {
  // yum list installed (RHEL 7): kernel-headers and kernel-debug-devel do not count
  SourceResult r = parse(
      "Installed Packages\n"
      "kernel.x86_64                            3.10.0-957.el7                                  @anaconda\n"
      "kernel-debug-devel.x86_64        3.10.0-1127.18.2.el7                            @updates\n"
      "kernel-devel.x86_64                   3.10.0-1127.18.2.el7                            @updates\n"
      "kernel-headers.x86_64               3.10.0-957.el7                                  @anaconda\n"
      "Available Packages\n"
      "kernel-devel.x86_64                   3.10.0-957.el7                            base\n");
  EXPECT_EQ(r.host.kernel_images, (std::set<std::string>{"3.10.0-957.el7.x86_64"}));
  EXPECT_EQ(r.host.kernel_build_trees, (std::set<std::string>{"3.10.0-1127.18.2.el7.x86_64"}));
  ASSERT_TRUE(r.host.kernel_build_line);
  EXPECT_NE(r.host.kernel_build_line->find("out.txt:4: kernel-devel.x86_64"), std::string::npos);
  // The other listings: the running kernel where the text shows one, the kernels, the headers.
  struct Listing {
    const char* what;
    std::string text;
    const char* running;
    std::set<std::string> images, builds;
  };
  const Listing listings[] = {
      {"rpm -qa (RHEL 8: kernel-core) with uname -a",
       "Linux gpu-1 4.18.0-513.el8.x86_64 #1 SMP Wed Oct 25 12:00:00 UTC 2023 x86_64 x86_64 x86_64 GNU/Linux\n"
       "kernel-core-4.18.0-513.el8.x86_64\nkernel-devel-4.18.0-477.el8.x86_64\nkernel-headers-4.18.0-513.el8.x86_64\n",
       "4.18.0-513.el8.x86_64", {"4.18.0-513.el8.x86_64"}, {"4.18.0-477.el8.x86_64"}},
      {"dpkg -l: installed (ii) only, the flavoured release from the name; the boot line names the running kernel",
       "[    0.000000] Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #101-Ubuntu SMP\n"
       "ii  linux-headers-5.15.0-91-generic  5.15.0-91.101  amd64  Linux kernel headers for version 5.15.0 on 64 bit x86 SMP\n"
       "rc  linux-headers-5.15.0-88-generic  5.15.0-88.98   amd64  Linux kernel headers for version 5.15.0 on 64 bit x86 SMP\n"
       "ii  linux-image-5.15.0-91-generic    5.15.0-91.101  amd64  Signed kernel image generic\n"
       "ii  linux-headers-generic            5.15.0.91.88   amd64  Generic Linux kernel headers\n",
       "5.15.0-91-generic", {"5.15.0-91-generic"}, {"5.15.0-91-generic"}},
      {"apt list --installed",
       "linux-headers-6.8.0-1019-aws/noble-updates,now 6.8.0-1019.20 amd64 [installed,automatic]\n"
       "linux-image-6.8.0-1021-aws/noble-updates,now 6.8.0-1021.23 amd64 [installed,automatic]\n"
       "linux-headers-6.8.0-1021-aws/noble-updates 6.8.0-1021.23 amd64 [upgradable from: 6.8.0-1019.20]\n",
       nullptr, {"6.8.0-1021-aws"}, {"6.8.0-1019-aws"}},
  };
  for (const Listing& l : listings) {
    r = parse(l.text);
    if (l.running) {
      ASSERT_TRUE(r.host.kernel_release) << l.what;
      EXPECT_EQ(*r.host.kernel_release, l.running) << l.what;
    }
    EXPECT_EQ(r.host.kernel_images, l.images) << l.what;
    EXPECT_EQ(r.host.kernel_build_trees, l.builds) << l.what;
  }
}

TEST(Sections, NvidiaSmiTable) {
  const SourceResult r = parse(kSmi);
  EXPECT_EQ(r.kind, "nvidia-smi");
  ASSERT_TRUE(r.host.gpus_visible);
  EXPECT_EQ(*r.host.gpus_visible, 2);
  EXPECT_EQ(*r.host.smi_driver_version, "535.54.03");
  EXPECT_EQ(*r.host.driver_cuda, "12.2");
  ASSERT_EQ(r.host.gpu_models.size(), 2u);
  EXPECT_EQ(r.host.gpu_models[0], "NVIDIA A100-SXM4-40GB");
  EXPECT_TRUE(r.findings.empty());
  std::string err = kSmi;
  err.replace(err.find("      0%      Default"), 21, "    ERR!      Default");
  EXPECT_TRUE(parse(err).findings.has("gpu.not_found", "device_error"));
}

// From R610 the header says "KMD Version" and "CUDA UMD Version" (the old
// names stay in -q, deprecated, and the new ones win); every row is read
// as before.
TEST(Sections, NvidiaSmiR610VersionNames) {
  std::string smi = kSmi;
  const std::string old = "Driver Version: 535.54.03    CUDA Version: 12.2";
  smi.replace(smi.find(old), old.size(), "KMD Version: 610.43.02     CUDA UMD Version: 13.3");
  SourceResult r = parse(smi);
  EXPECT_EQ(r.kind, "nvidia-smi");
  ASSERT_TRUE(r.host.gpus_visible);
  EXPECT_EQ(*r.host.gpus_visible, 2);
  EXPECT_EQ(*r.host.smi_driver_version, "610.43.02");
  EXPECT_EQ(*r.host.driver_cuda, "13.3");
  r = parse(
      "==============NVSMI LOG==============\n"
      "Driver Version                            : 610.43.02\n"
      "KMD Version                               : 610.43.03\n"
      "CUDA Version                              : 13.2\n"
      "CUDA UMD Version                          : 13.3\n"
      "Attached GPUs                             : 1\n");
  EXPECT_EQ(*r.host.smi_driver_version, "610.43.03");
  EXPECT_EQ(*r.host.driver_cuda, "13.3");
}

// A program's own CUDA driver and runtime versions, printed as a pair: a
// newer runtime major is the driver's fault; a newer minor runs through
// minor-version compatibility (info). A runtime without the program's own
// driver line (collect_env's toolkit beside nvidia-smi) is no pair.
TEST(Sections, CudaDriverAndRuntimeVersionPair) {
  const auto got = [](const std::string& text) {
    const SourceResult r = parse(text);
    for (const auto& [key, a] : r.findings.all())
      if (key.id == "gpu.cuda_driver_insufficient") return key.cause + "/" + std::string(to_string(a.severity));
    return std::string("none");
  };
  EXPECT_EQ(got("00:00:00 [2022-05-03 15:10:57.644] Cuda driver version: 11.2\n"
                "00:00:00 [2022-05-03 15:10:57.644] Cuda runtime API version: 11.4\n"
                "00:00:00 [2022-05-03 15:10:57.644] No devices are set\n"),
            "minor_version/info");
  EXPECT_EQ(got("  CUDA Driver Version / Runtime Version          11.4 / 12.2\n"), "/unknown");
  EXPECT_EQ(got("CUDA Runtime Version: 12010\nCUDA Driver Version: 12000\n"), "minor_version/info");
  EXPECT_EQ(got("Installed CUDA runtime version: 11.7\nInstalled CUDA driver version: 12.2\n"), "none");
  EXPECT_EQ(got("  CUDA Driver Version / Runtime Version          12.2 / 12.2\n"), "none");
  EXPECT_EQ(got(std::string(kSmi).replace(std::string(kSmi).find("12.2"), 4, "12.0") +
                "CUDA runtime version: 12.1.105\nNvidia driver version: 535.54.03\n"),
            "none");
  EXPECT_EQ(got("NVIDIA driver version: 352.39\nCUDA Runtime version: 7.5.0\n"), "none");
}

// A GPU's rows pasted without the table's header still say which GPU is in
// an error state (not how many GPUs there are); an unreadable power draw
// alone is one sensor that did not answer: info, with the field named.
TEST(Sections, NvidiaSmiRowsWithoutHeader) {
  const char* fan = R"(nvidia-smi
[...]
|  14  NVIDIA RTX 4000 Ada Gene...    On  |   00000000:CC:00.0 Off |                  Off |
|ERR!   68C    P2             99W /  130W |       1MiB /  20475MiB |     93%      Default |
)";
  SourceResult r = parse(fan);
  Accum* a = r.findings.find("gpu.not_found", "device_error");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->severity, Severity::kUnknown);  // the playbook's: error
  EXPECT_NE(a->facts.dump().find("\"14\""), std::string::npos) << a->facts.dump();
  EXPECT_FALSE(r.host.gpus_visible);
  const char* power = R"(|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |                    0 |
| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |
)";
  r = parse(power);
  EXPECT_FALSE(r.findings.has("gpu.not_found", "device_error"));
  a = r.findings.find("gpu.not_found", "sensor_unreadable");
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->facts.dump().find("power draw"), std::string::npos) << a->facts.dump();
  // The same row under a header is judged the same way.
  std::string full = kSmi;
  full.replace(full.find("52W / 400W"), 10, "ERR! / 400W");
  r = parse(full);
  EXPECT_FALSE(r.findings.has("gpu.not_found", "device_error"));
  EXPECT_TRUE(r.findings.has("gpu.not_found", "sensor_unreadable"));
}

TEST(Sections, NvidiaSmiQuery) {
  const SourceResult r = parse(R"(==============NVSMI LOG==============
Driver Version                            : 535.54.03
CUDA Version                              : 12.2
Attached GPUs                             : 1
GPU 00000000:10:1C.0
    Product Name                          : NVIDIA A100-SXM4-40GB
    Retired Pages
        Pending Page Blacklist            : Yes
    Clocks Event Reasons
        Idle                              : Not Active
        SW Thermal Slowdown               : Active
    ECC Errors
        Volatile
            SRAM Uncorrectable            : 0
            DRAM Uncorrectable            : 3
        Aggregate
            DRAM Uncorrectable            : 9
)");
  EXPECT_EQ(*r.host.gpus_visible, 1);
  EXPECT_TRUE(r.findings.has("gpu.ecc", "retirement_pending"));
  EXPECT_TRUE(r.findings.has("gpu.ecc", "uncorrectable"));
  EXPECT_TRUE(r.findings.has("gpu.compute_slow", "throttled"));
}

// The sections people paste from nvidia-smi -q without the NVSMI LOG header.
TEST(Sections, NvidiaSmiQueryPastedSections) {
  EXPECT_TRUE(parse("    ECC Errors\n        Volatile\n            SRAM Uncorrectable            : 0\n"
                    "            DRAM Uncorrectable            : 4\n")
                  .findings.has("gpu.ecc", "uncorrectable"));
  EXPECT_TRUE(parse("    Clocks Event Reasons\n        Idle                              : Not Active\n"
                    "        SW Thermal Slowdown               : Active\n")
                  .findings.has("gpu.compute_slow", "throttled"));
  // R410-era nvidia-smi: "Pending" under "Retired Pages" (later "Pending Page
  // Blacklist"); the same key under "Remapped Rows" is remap_pending.
  EXPECT_TRUE(parse("    Retired Pages\n        Single Bit ECC              : 0\n"
                    "        Double Bit ECC              : 2\n        Pending                     : Yes\n")
                  .findings.has("gpu.ecc", "retirement_pending"));
  EXPECT_TRUE(parse("    Retired Pages\n        Single Bit ECC              : 0\n"
                    "        Double Bit ECC              : 0\n        Pending                     : No\n")
                  .findings.empty());
  EXPECT_TRUE(parse("        GPU Link Info\n            PCIe Generation\n                Max                       : 4\n"
                    "                Current                   : 4\n            Link Width\n"
                    "                Max                       : 16x\n                Current                   : 8x\n")
                  .findings.has("gpu.pcie_degraded", "width_downgraded"));
  // Healthy sections stay quiet.
  EXPECT_TRUE(parse("    ECC Errors\n        Volatile\n            DRAM Correctable              : 12\n"
                    "            DRAM Uncorrectable            : 0\n    Clocks Throttle Reasons\n"
                    "        Idle                              : Active\n        SW Power Cap                      : Active\n"
                    "        HW Slowdown                       : Not Active\n        GPU Link Info\n"
                    "            PCIe Generation\n                Max                       : 4\n"
                    "                Current                   : 4\n            Link Width\n"
                    "                Max                       : 16x\n                Current                   : 16x\n")
                  .findings.empty());
}

TEST(Sections, LspciOnlyNvidiaDevicesCount) {
  const SourceResult r = parse(R"(00:05.0 Ethernet controller: Amazon.com, Inc. Elastic Network Adapter (ENA)
	LnkSta:	Speed 8GT/s (ok), Width x1 (downgraded)
10:1c.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 40GB] (rev a1)
	LnkCap:	Port #0, Speed 16GT/s, Width x16, ASPM not supported
	LnkSta:	Speed 16GT/s (ok), Width x16 (ok)
)");
  EXPECT_TRUE(r.findings.empty()) << "the ENA's x1 link is not a GPU problem";
  EXPECT_EQ(*r.host.gpus_on_pci, 1);
}

TEST(Sections, FiInfo) {
  SourceResult r = parse("provider: efa\n    fabric: EFA-fe80::1\n    domain: rdmap16s27-rdm\n    version: 120.10\n");
  EXPECT_EQ(*r.host.efa_devices, 1);
  EXPECT_TRUE(r.host.fi_providers.count("efa"));
  r = parse("fi_getinfo: -61 (No data available)\n");
  EXPECT_EQ(*r.host.efa_devices, 0);
  r = parse("tcp:\n    version: 118.10\nshm:\n    version: 118.10\n");
  EXPECT_TRUE(r.host.fi_providers.count("tcp"));
  EXPECT_FALSE(r.host.efa_devices);
}

TEST(Sections, SysctlLimitsAndMounts) {
  SourceResult r = parse("net.core.somaxconn = 65535\nvm.max_map_count = 262144\nkernel.shmmax = 68719476736\n");
  EXPECT_TRUE(r.findings.has("limits.shm", "sysctl"));
  EXPECT_FALSE(r.findings.has("limits.somaxconn"));
  EXPECT_FALSE(r.findings.has("limits.max_map_count"));
  // A command pasted with its output: the bare value on the next line.
  r = parse("$ sudo cat /proc/sys/vm/max_map_count\n65530 \n");
  ASSERT_TRUE(r.findings.has("limits.max_map_count", "sysctl"));
  r = parse("[user@node ~]$ sysctl -n net.core.somaxconn\n4096\n");
  EXPECT_TRUE(r.findings.has("limits.somaxconn", "sysctl"));
  r = parse("cat /proc/sys/vm/max_map_count\n1048576\n");
  EXPECT_FALSE(r.findings.has("limits.max_map_count"));
  r = parse("cat /proc/sys/vm/max_map_count\nPermission denied 65530\n");  // not a bare value
  EXPECT_FALSE(r.findings.has("limits.max_map_count"));
  r = parse("Limit                     Soft Limit           Hard Limit           Units\n"
            "Max open files            65535                65535                files\n"
            "Max locked memory         unlimited            unlimited            bytes\n");
  EXPECT_TRUE(r.findings.empty());
  // nproc at or above the pending-signals limit of the same listing is the
  // kernel's default (both max_threads/2), not a lowered limit; below it, or
  // with no pending-signals line, the recommended value decides.
  const std::pair<const char*, bool> nproc_cases[] = {
      {"pending signals                 (-i) 15710\n"
       "open files                      (-n) 65536\n"
       "max user processes              (-u) 32000\n",
       false},
      {"pending signals                 (-i) 63414\n"
       "open files                      (-n) 65536\n"
       "max user processes              (-u) 4096\n",
       true},
      {"open files                      (-n) 65536\nmax user processes              (-u) 32000\n", true},
      {"Limit                     Soft Limit           Hard Limit           Units\n"
       "Max processes             4096                 256483               processes\n"
       "Max pending signals       256483               256483               signals\n",
       true},
      {"Limit                     Soft Limit           Hard Limit           Units\n"
       "Max processes             15710                15710                processes\n"
       "Max pending signals       15710                15710                signals\n",
       false},
  };
  for (const auto& [text, flagged] : nproc_cases) EXPECT_EQ(parse(text).findings.has("limits.nproc"), flagged) << text;
  // pam_limits' limits.conf: the configured values (memlock in KiB), comments skipped.
  const std::pair<const char*, const char*> conf_cases[] = {
      {"# <domain> <type> <item> <value>\n#*               soft    nofile          1024\n*  soft  nofile  1048576\n* hard nofile 1048576\n", ""},
      {"*               hard    nofile          100\n", "limits.nofile"},
      {"@gpu\t-\tmemlock\t64\n", "limits.memlock"},
      {"* soft memlock unlimited\n* hard memlock -1\nroot soft nproc infinity\n", ""},
      {"slurm soft nproc 4096\n", "limits.nproc"},
      {"# nofile - max number of open file descriptors\n", ""},
  };
  for (const auto& [text, id] : conf_cases) {
    const SourceResult c = parse(text);
    if (*id == 0) EXPECT_TRUE(c.findings.empty()) << text;
    else EXPECT_TRUE(c.findings.has(id)) << text;
  }
  r = parse("/dev/nvme1n1 on /data type xfs (rw,noatime,nodiratime,attr2)\n/dev/nvme2n1 on /scratch type ext4 (rw,relatime)\n");
  ASSERT_TRUE(r.findings.has("storage.mount_options"));
  EXPECT_EQ(r.findings.all().begin()->second.facts.at("mountpoint"), "/scratch");
}

// Memory snapshots (top, free, /proc/meminfo): under 3% available and no
// swap left is a host about to run out; a busy host with room is quiet.
TEST(Sections, MemorySnapshots) {
  const std::pair<const char*, bool> cases[] = {
      {"top - 01:20:22 up  1:01,  1 user,  load average: 51.09, 19.76, 12.06\n"
       "MiB Mem :  64000.0 total,    301.3 free,  63500.8 used,     198.1 buff/cache\n"
       "MiB Swap:      0.0 total,      0.0 free,      0.0 used.    402.7 avail Mem\n",
       true},
      {"MiB Mem :  64000.0 total,    301.3 free,  33500.8 used,   30198.1 buff/cache\n"
       "MiB Swap:   8192.0 total,   8192.0 free,      0.0 used.  29902.7 avail Mem\n",
       false},
      {"MiB Mem :  64000.0 total,    301.3 free,  63500.8 used,     198.1 buff/cache\n"
       "MiB Swap:  32768.0 total,  30000.0 free,   2768.0 used.    402.7 avail Mem\n",
       false},  // swapping, not out
      {"               total        used        free      shared  buff/cache   available\n"
       "Mem:           125Gi       124Gi       310Mi       1.0Mi       690Mi       820Mi\n"
       "Swap:             0B          0B          0B\n",
       true},
      {"              total        used        free      shared  buff/cache   available\n"
       "Mem:      131771264    20112312     1203140       10240   110455812   110132100\n"
       "Swap:             0           0           0\n",
       false},
      {"MemTotal:       131771264 kB\nMemFree:          1203140 kB\nMemAvailable:    1003140 kB\n"
       "SwapTotal:             0 kB\nSwapFree:              0 kB\n",
       true},
      {"MemTotal:       131771264 kB\nMemFree:          1203140 kB\nMemAvailable:   90003140 kB\n"
       "SwapTotal:             0 kB\nSwapFree:              0 kB\n",
       false},
  };
  for (const auto& [text, low] : cases)
    EXPECT_EQ(parse(text).findings.has("host.oom", "memory_exhausted"), low) << text;
}

// nvidia-smi --query-gpu CSV (header or noheader after its command line),
// dcgmi dmon's XIDER column and -q's GPU Recovery Action, judged like -q.
TEST(Sections, NvidiaSmiQueryCsvDcgmiDmonAndRecoveryAction) {
  // A fact seen more than once is an array (pci, gpu); the first value is enough here.
  auto fact = [](const Accum* a, const char* k) {
    const Json& v = a->facts.contains(k) ? a->facts.at(k) : Json();
    return v.is_string() ? v.get<std::string>() : v.is_array() && !v.empty() ? v.front().get<std::string>() : "";
  };
  SourceResult r = parse("index, name, retired_pages.pending, remapped_rows.pending, remapped_rows.failure\n"
                         "0, NVIDIA A100-SXM4-80GB, No, Yes, No\n1, NVIDIA A100-SXM4-80GB, No, No, No\n");
  EXPECT_TRUE(r.findings.has("gpu.ecc", "remap_pending"));
  EXPECT_FALSE(r.findings.has("gpu.ecc", "remap_failed"));
  EXPECT_FALSE(r.findings.has("gpu.ecc", "retirement_pending"));
  r = parse("$ nvidia-smi --query-gpu=index,gpu_recovery_action --format=csv,noheader\n0, None\n1, Reboot\n");
  const Accum* x = r.findings.find("gpu.xid");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(fact(x, "code"), "154");
  EXPECT_EQ(fact(x, "xid_node_action"), "reboot");
  EXPECT_EQ(fact(x, "pci"), "1");
  r = parse("clocks_event_reasons.hw_slowdown, clocks_event_reasons.sw_power_cap, ecc.errors.uncorrected.volatile.total\n"
            "Active, Not Active, 0\nNot Active, Active, 2\n");
  EXPECT_TRUE(r.findings.has("gpu.compute_slow", "throttled"));
  EXPECT_TRUE(r.findings.has("gpu.ecc", "uncorrectable"));
  // Healthy answers, and rows of another table under the header, stay quiet.
  r = parse("index, gpu_recovery_action, retired_pages.pending, clocks_throttle_reasons.hw_slowdown\n"
            "0, None, No, Not Active\n1, None, No, Not Active\nprocess list follows, pid, name, Yes\n");
  EXPECT_TRUE(r.findings.empty());
  r = parse("#Entity    XIDER        \nID                      \nGPU 0      0            \nGPU 1      120          \n");
  x = r.findings.find("gpu.xid", "gsp");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(fact(x, "code"), "120");
  EXPECT_TRUE(parse("#Entity    XIDER\nID\nGPU 0      0\nGPU 1      0\n").findings.empty());
  r = parse("==============NVSMI LOG==============\n\nDriver Version                            : 570.86.15\n\n"
            "GPU 00000000:18:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n"
            "    GPU Recovery Action                   : Reset\n");
  x = r.findings.find("gpu.xid");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(fact(x, "xid_node_action"), "reset-gpu");
  EXPECT_EQ(fact(x, "pci"), "00000000:18:00.0");
}

TEST(Sections, NodeprobeReportChecksBecomeFindings) {
  const std::string report = R"({"schema": "nodeprobe.report/1", "tool": {"name": "nodeprobe-limits", "version": "0.1.0", "git": ""},
    "run": {"id": "x", "label": "", "argv": [], "started": "2026-01-01T00:00:00Z", "finished": ""},
    "host": {"hostname": "h", "kernel": "4.18.0", "os": "", "instance_type": "g5.xlarge", "cpus": 4, "memory": 1, "gpus": [],
             "driver": "", "cuda_runtime": "12.4", "nccl": "", "libfabric": "", "mpi": "", "env": {}},
    "probes": [{"name": "limits", "status": "warn", "reason": "", "duration_s": 0.1, "config": {}, "metrics": [],
      "checks": [{"id": "limits.somaxconn", "status": "warn", "observed": "128", "expected": ">= 65535",
                  "fix": "echo 'net.core.somaxconn = 65535' >> /etc/sysctl.d/99-nodeprobe.conf && sysctl --system", "finding": "limits.somaxconn"}]}],
    "findings": [], "verdict": "warn"})";
  const SourceResult r = parse(report);
  EXPECT_EQ(r.kind, "report");
  ASSERT_TRUE(r.findings.has("limits.somaxconn"));
  EXPECT_EQ(*r.host.instance_type, "g5.xlarge");
  EXPECT_EQ(*r.host.cuda_runtime, "12.4");
  const auto findings = r.findings.render(default_playbook());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].remedy.front(), "echo 'net.core.somaxconn = 65535' >> /etc/sysctl.d/99-nodeprobe.conf && sysctl --system");
  EXPECT_EQ(findings[0].probe, "limits");
  // A broken report is an input error, not a crash.
  EXPECT_FALSE(parse("{\"schema\": \"nodeprobe.report/1\", \"probes\": [").error.empty());
}

}  // namespace
}  // namespace nodeprobe::diag
