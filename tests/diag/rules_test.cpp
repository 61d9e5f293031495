// Rules, folding, time windows and the look-alikes the playbook tells apart.
#include <gtest/gtest.h>

#include <map>

#include "playbook.h"
#include "rule_engine.h"

namespace nodeprobe::diag {
namespace {

struct Result {
  SourceResult source;
  std::vector<Finding> findings;
  const Finding* get(const std::string& id) const {
    for (const auto& f : findings)
      if (f.id == id) return &f;
    return nullptr;
  }
  // Finding `id` with cause `cause` (an id may carry several causes).
  const Finding* get(const std::string& id, const std::string& cause) const {
    for (const auto& f : findings)
      if (f.id == id && f.facts.value("cause", std::string()) == cause) return &f;
    return nullptr;
  }
  std::string ids() const {
    std::string s;
    for (const auto& f : findings) s += f.id + "(" + std::string(to_string(f.severity)) + ") ";
    return s;
  }
  // The cause fact of finding `id`, "(none)" when it was not raised.
  std::string cause(const std::string& id) const {
    const Finding* f = get(id);
    return f ? f->facts.value("cause", std::string()) : std::string("(none)");
  }
};

// Nothing to act on: every finding (if any) is info.
void expect_only_info(const Result& r) {
  for (const auto& f : r.findings) EXPECT_EQ(f.severity, Severity::kInfo) << f.id << ": " << f.title;
}

RuleEngine& engine() {
  static RuleEngine e(default_playbook());
  return e;
}

Result analyze(const std::string& text, AnalysisOptions opt = {}) {
  if (opt.time.now == 0) opt.time.now = 1764432000;  // 2025-11-29T16:00:00Z
  LineBlockReader reader(text, "test.log");
  Result r;
  r.source = engine().analyze(reader, "test.log", opt);
  r.findings = r.source.findings.render(default_playbook());
  return r;
}

TEST(Rules, XidRepeatedTenThousandTimesIsOneFindingWithCountAndTimes) {
  std::string text;
  for (int i = 0; i < 10000; ++i)
    text += "2025-11-29T10:" + std::string(i / 600 < 10 ? "0" : "") + std::to_string(i / 600) + ":00Z host kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=" +
            std::to_string(1000 + i) + ", GPU has fallen off the bus.\n";
  const Result r = analyze(text);
  ASSERT_EQ(r.findings.size(), 1u) << r.ids();
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.id, "gpu.xid");
  EXPECT_EQ(f.count, 10000);
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.first_seen, "2025-11-29T10:00:00Z");
  EXPECT_EQ(f.last_seen, "2025-11-29T10:16:00Z");
  EXPECT_LE(f.evidence.size(), 4u);
  EXPECT_EQ(f.evidence.front().line, 1);
  EXPECT_EQ(f.evidence.back().line, 10000);
  EXPECT_EQ(f.facts.at("code"), "79");
  EXPECT_NE(f.title.find("fallen off the bus"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("reboot"), std::string::npos) << f.title;  // the catalogue's action
}

TEST(Rules, DifferentXidCodesAreDifferentFindings) {
  const Result r = analyze(
      "NVRM: Xid (PCI:0000:cb:00): 13, pid=1, name=python, Graphics SM Warp Exception\n"
      "NVRM: Xid (PCI:0000:cb:00): 48, pid=1, name=python, DBE (Double Bit Error) ECC Error\n"
      "NVRM: Xid (PCI:0000:cb:00): 13, pid=2, name=python, Graphics SM Warp Exception\n");
  int n13 = 0, n48 = 0;
  for (const auto& f : r.findings) {
    if (f.id != "gpu.xid") continue;  // Xid 48 is also gpu.ecc
    if (f.facts.value("code", "") == "13") {
      ++n13;
      EXPECT_EQ(f.severity, Severity::kWarn);
      EXPECT_EQ(f.count, 2);
    }
    if (f.facts.value("code", "") == "48") {
      ++n48;
      EXPECT_EQ(f.severity, Severity::kError);
    }
  }
  EXPECT_EQ(n13, 1);
  EXPECT_EQ(n48, 1);
  ASSERT_NE(r.get("gpu.ecc"), nullptr) << r.ids();  // a double-bit error is a memory fault too
  EXPECT_EQ(r.get("gpu.ecc")->facts.value("cause", ""), "uncorrectable");
}

TEST(Rules, NvlinkXidIsAnErrorOnlyWhenItsTextSaysFatal) {
  const Result nonfatal = analyze(
      "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008)\n");
  ASSERT_NE(nonfatal.get("gpu.xid"), nullptr) << nonfatal.ids();
  EXPECT_EQ(nonfatal.get("gpu.xid")->severity, Severity::kWarn);
  const Result fatal = analyze(
      "NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000)\n");
  ASSERT_NE(fatal.get("gpu.xid"), nullptr) << fatal.ids();
  EXPECT_EQ(fatal.get("gpu.xid")->severity, Severity::kError);
}

// Xid 120 in the kernel log is the gsp cause, as it is from nvidia-smi's and
// dcgmi's tables (xid.json's "cause"): one cause whatever the source, so a
// bundle's tables and the live kernel log tell the same remedy.
TEST(Rules, GspXidHasTheGspCauseFromTheKernelLogToo) {
  const Result r = analyze(
      "NVRM: Xid (PCI:0000:1b:00): 120, pid=2411, name=python3, GSP task timeout @ pc:0x7cd5b0c, task: 1\n");
  ASSERT_NE(r.get("gpu.xid"), nullptr) << r.ids();
  EXPECT_EQ(r.get("gpu.xid")->facts.value("cause", ""), "gsp");
  EXPECT_EQ(r.get("gpu.xid")->facts.value("code", ""), "120");
  const Result other = analyze("NVRM: Xid (PCI:0000:1b:00): 79, pid=1, GPU has fallen off the bus.\n");
  ASSERT_NE(other.get("gpu.xid"), nullptr) << other.ids();
  EXPECT_EQ(other.get("gpu.xid")->facts.value("cause", ""), "");
}

TEST(Rules, SocketWarningsThatAreRetriesAreNotErrors) {
  // A net plugin's retries that then connect (google/nccl-fastsocket#4).
  const Result r = analyze(
      "h1:4024:4048 [0] net_fastsocket.cc:765 NCCL WARN Cannot get incoming CPU.\n"
      "h0:4300:4325 [0] net_fastsocket.cc:785 NCCL WARN Maximum retry reached for accept 3.\n"
      "h0:4300:4325 [0] NCCL INFO NET/FastSocket : Connected after 1000 retries.\n");
  EXPECT_EQ(r.get("nccl.network_config"), nullptr) << r.ids();
  const Result bad = analyze(
      "h0:1:2 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : "
      "Software caused connection abort\n");
  ASSERT_NE(bad.get("nccl.network_config"), nullptr) << bad.ids();
  EXPECT_NE(bad.get("nccl.network_config")->facts.dump().find("10.0.0.2"), std::string::npos);
}

TEST(Rules, SinceDropsOldEventsAndKeepsUntimedOnes) {
  const std::string text =
      "2025-11-20T10:00:00Z host kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
      "2025-11-29T15:30:00Z host kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE\n"
      "OSError: [Errno 24] Too many open files\n";
  AnalysisOptions opt;
  opt.time.now = 1764432000;
  opt.since = opt.time.now - 3600;  // the last hour
  const Result r = analyze(text, opt);
  EXPECT_EQ(r.source.dropped_old, 1);
  EXPECT_EQ(r.source.untimed, 1);
  for (const auto& f : r.findings) EXPECT_NE(f.facts.value("code", ""), "79") << "the old Xid must not count";
  EXPECT_NE(r.get("limits.nofile"), nullptr);
}

// "Cannot allocate memory" look-alikes: each goes to its own finding.
TEST(Rules, CannotAllocateMemoryLookAlikes) {
  struct Case {
    const char* line;
    const char* id;
  } cases[] = {
      {"misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory", "limits.memlock"},
      {"RuntimeError: unable to mmap 29764 bytes from file </torch_1_2_3>: Cannot allocate memory (12)", "limits.max_map_count"},
      {"Out of memory: Killed process 25315 (python3) total-vm:53312244kB, anon-rss:31451456kB", "host.oom"},
      {"libfabric:1:2::efa:mr:efa_mr_regattr():632<warn> Unable to register MR: Cannot allocate memory", "efa.mr_registration"},
      {"DefaultCPUAllocator: can't allocate memory: you tried to allocate 402653184 bytes. Error code 12 (Cannot allocate memory).", "host.oom"},
  };
  for (const auto& c : cases) {
    const Result r = analyze(std::string(c.line) + "\n");
    ASSERT_EQ(r.findings.size(), 1u) << c.line << " -> " << r.ids();
    EXPECT_EQ(r.findings[0].id, c.id) << c.line;
  }
}

TEST(Rules, SocketFallbackIsNormalOnTcpNodesAndAFailureWhereEfaWasExpected) {
  const std::string log =
      "h:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO Using network Socket\n";
  const Result tcp = analyze(log);
  expect_only_info(tcp);
  ASSERT_NE(tcp.get("efa.fallback_tcp"), nullptr);
  AnalysisOptions efa;
  efa.efa_expected = true;
  const Result bad = analyze(log, efa);
  ASSERT_NE(bad.get("efa.fallback_tcp"), nullptr) << bad.ids();
  EXPECT_EQ(bad.get("efa.fallback_tcp")->severity, Severity::kWarn);
  // The log itself can say EFA was expected (the plugin runs on a p4d).
  const Result intent = analyze("h:1:1 [0] NCCL INFO NET/OFI Running on p4d.24xlarge platform\n" + log);
  EXPECT_EQ(intent.get("efa.fallback_tcp")->severity, Severity::kWarn);
  // EFA in use: nothing to say.
  EXPECT_EQ(analyze("h:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa\nh:1:1 [0] NCCL INFO Using network AWS Libfabric\n", efa)
                .findings.size(),
            0u);
}

TEST(Rules, OfiWithoutAnEfaProviderIsNamedAndOnlyAFailureWhereEfaWasExpected) {
  const std::string log =
      "h:1:1 [0] ofi_init:1288 NCCL WARN NET/OFI Only EFA provider is supported\n"
      "h:1:1 [0] ofi_init:1339 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n"
      "h:1:1 [0] NCCL INFO Using network Socket\n";
  const Result plain = analyze(log);
  const Finding* m = plain.get("efa.missing");
  ASSERT_NE(m, nullptr) << plain.ids();
  EXPECT_EQ(m->severity, Severity::kInfo);
  EXPECT_EQ(m->facts.value("cause", std::string()), "no_provider");
  EXPECT_EQ(plain.get("efa.fallback_tcp"), nullptr) << "the sockets are its consequence, not a second finding";
  AnalysisOptions efa;
  efa.efa_expected = true;
  const Result bad = analyze(log, efa);
  ASSERT_NE(bad.get("efa.missing"), nullptr);
  EXPECT_EQ(bad.get("efa.missing")->severity, Severity::kError);
}

TEST(Rules, ADescriptorLimitBehindASocketErrorIsTheCause) {
  const Result r = analyze(
      "h:1:9 [0] misc/socket.cc:600 NCCL WARN socketTryAccept: exceeded error retry count after 20 attempts, Too many open files\n"
      "h:1:9 [0] bootstrap.cc:210 NCCL WARN bootstrapRecv failed for peer 3\n");
  const Finding* n = r.get("limits.nofile");
  ASSERT_NE(n, nullptr) << r.ids();
  EXPECT_EQ(n->severity, Severity::kError) << "a limit that broke the job is as serious as the break";
  EXPECT_EQ(r.findings.front().id, "limits.nofile") << r.ids();
  if (const Finding* net = r.get("nccl.network_config")) {
    EXPECT_EQ(net->severity, Severity::kInfo) << r.ids();
  }
}

TEST(Rules, CudaInitFailureUnderAnUnconfiguredFabricFoldsUnderIt) {
  const Result r = analyze(
      "terminate called after throwing an instance of 'std::runtime_error'\n"
      "  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized\n"
      "  what():  Error (gpu_burn-drv.cpp:298): OS call failed or operation not supported on this OS\n");
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().id, "gpu.fabric_manager") << r.ids();
  if (const Finding* nf = r.get("gpu.not_found")) {
    EXPECT_EQ(nf->severity, Severity::kInfo) << r.ids();
  }
  // Other gpu.not_found causes are no consequence of the fabric: the entry's own list applies.
  const Result nodrv = analyze("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
                               "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized\n");
  ASSERT_NE(nodrv.get("gpu.not_found"), nullptr) << nodrv.ids();
  EXPECT_EQ(nodrv.get("gpu.not_found")->severity, Severity::kError) << nodrv.ids();
}

TEST(Rules, CudaErrorsPrintedByNumberOnly) {
  EXPECT_NE(analyze("cudaGetDeviceCount() call failed with error 804\n").get("gpu.cuda_driver_insufficient"), nullptr);
  EXPECT_NE(analyze("[802] Call to cuInit results in UNKNOWN_CUDA_ERROR\n").get("gpu.fabric_manager"), nullptr);
  EXPECT_NE(analyze("cuInit returned 100\n").get("gpu.not_found"), nullptr);
  // Numbers in other places of a CUDA line are no error codes.
  EXPECT_TRUE(analyze("h:1:1 [0] NCCL INFO cudaDriverVersion 12040\n").findings.empty());
  EXPECT_TRUE(analyze("CUDA Version: 12.2, 804 MiB used\n").findings.empty());
}

TEST(Rules, TheCudaErrorFactIsTheErrorNotTheCheckedCondition) {
  // DGL's CUDA_CALL prints the condition it checked (cudaSuccess or
  // cudaErrorCudartUnloading) before the error that happened.
  const Result r = analyze(
      "dgl._ffi.base.DGLError: [10:22:33] /opt/dgl/src/runtime/cuda/cuda_device_api.cc:117: Check failed: e == cudaSuccess || "
      "e == cudaErrorCudartUnloading: CUDA: an illegal memory access was encountered\n");
  const auto* f = r.get("job.unexplained_failure");
  ASSERT_NE(f, nullptr) << r.ids();
  EXPECT_EQ(f->facts.value("cuda_error", std::string()), "an illegal memory access was encountered");
}

TEST(Rules, AKernelFaultWithoutAnXidIsTheProgramsAndWithOneTheGpus) {
  // No Xid beside it: the program's failure with no node-level cause, not an
  // Xid the driver never reported.
  const Result alone = analyze("RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(alone.get("gpu.xid"), nullptr) << alone.ids();
  EXPECT_EQ(alone.cause("job.unexplained_failure"), "cuda_fault") << alone.ids();
  expect_only_info(alone);
  // An Xid 13 at the same time names the GPU; the job's reading gives way.
  const Result with_xid = analyze(
      "NVRM: Xid (PCI:0000:cb:00): 13, pid=1, name=python, Graphics SM Warp Exception\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  ASSERT_NE(with_xid.get("gpu.xid"), nullptr) << with_xid.ids();
  EXPECT_NE(with_xid.cause("job.unexplained_failure"), "cuda_fault") << with_xid.ids();
  // 226, the GPU's own containment of the fault, stays the GPU's.
  const Result contained = analyze("RuntimeError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error\n");
  EXPECT_EQ(contained.cause("gpu.xid"), "contained") << contained.ids();
  EXPECT_EQ(contained.get("job.unexplained_failure"), nullptr) << contained.ids();
}

TEST(Rules, HashcatsTemperatureAbortIsTheNodeUnlessTheRunChoseTheLimit) {
  // hashcat stops at --hwmon-temp-abort (90 C by default): a GPU that hot is
  // the node's cooling, unless the command line set the limit itself.
  const Result hot = analyze("Temperature limit on GPU #1 reached, aborting\n");
  EXPECT_EQ(hot.cause("gpu.compute_slow"), "throttled") << hot.ids();
  const Result chosen = analyze(
      "./hashcat -a3 -m 0 hash.txt --quiet --hwmon-temp-abort=30 ?a?a?a?a\n"
      "Temperature limit on GPU #1 reached, aborting\n");
  EXPECT_EQ(chosen.get("gpu.compute_slow"), nullptr) << chosen.ids();
  // A limit of 80 C or more that is reached is still a hot GPU.
  const Result high = analyze(
      "./hashcat -a3 -m 0 hash.txt --hwmon-temp-abort=95 ?a?a?a?a\n"
      "Temperature limit on GPU #1 reached, aborting\n");
  EXPECT_EQ(high.cause("gpu.compute_slow"), "throttled") << high.ids();
}

TEST(Rules, ATracebackCutBeforeItsExceptionIsStillTheProgramsFailure) {
  const std::string frames =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 12, in <module>\n"
      "    main()\n";
  const Result cut = analyze(frames);
  EXPECT_EQ(cut.cause("job.unexplained_failure"), "traceback") << cut.ids();
  expect_only_info(cut);
  // With its exception line the exception is read instead.
  const Result whole = analyze(frames + "ValueError: bad config\n");
  EXPECT_EQ(whole.cause("job.unexplained_failure"), "uncaught_exception") << whole.ids();
  // Any other failure of the program named in the same log explains it: a
  // library's own error that no list of rule keys had to name.
  const Result beside = analyze(frames +
      "xformers 0.0.26.post1 requires torch==2.3.0, but you have torch 2.2.1+cu121 which is incompatible.\n");
  EXPECT_NE(beside.get("job.unexplained_failure", "package_conflict"), nullptr) << beside.ids();
  EXPECT_EQ(beside.get("job.unexplained_failure", "traceback"), nullptr) << beside.ids();
}

TEST(Rules, AnMpiLibcudaProbeIsInfoAndNeverSoftensAProgramsOwnNoDriverError) {
  const std::string probe =
      "The library attempted to open the following supporting CUDA libraries,\n"
      "but each of them failed.  CUDA-aware support is disabled.\n"
      "libcuda.so.1: cannot open shared object file: No such file or directory\n"
      "/usr/lib64/libcuda.so.1: cannot open shared object file: No such file or directory\n";
  const Result alone = analyze(probe);
  EXPECT_NE(alone.get("gpu.not_found", "mpi_cuda_probe"), nullptr) << alone.ids();
  expect_only_info(alone);
  // The program's own load failure, or the container runtime's, beside the probe stays an error.
  for (const char* own : {"ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n",
                          "nvidia-container-cli: initialization error: nvml error: driver not loaded\n",
                          "./app: error while loading shared libraries: libcuda.so.1: cannot open shared object file: "
                          "No such file or directory\n"}) {
    const Result both = analyze(probe + own);
    const Finding* f = both.get("gpu.not_found", "no_driver");
    ASSERT_NE(f, nullptr) << own << both.ids();
    EXPECT_EQ(f->severity, Severity::kError) << own;
  }
  // Open MPI 5's CUDA components that did not load are ignored by it, and by us.
  const Result dso = analyze(
      "[n:1] mca_base_component_repository_open: unable to open mca_accelerator_cuda: libcuda.so.1: cannot open "
      "shared object file: No such file or directory (ignored)\n");
  expect_only_info(dso);
  // The bare dlerror without the probe's notice is the driver library missing.
  const Result bare = analyze("libcuda.so.1: cannot open shared object file: No such file or directory\n");
  const Finding* b = bare.get("gpu.not_found", "no_driver");
  ASSERT_NE(b, nullptr) << bare.ids();
  EXPECT_EQ(b->severity, Severity::kError);
}

TEST(Rules, ADkmsMakeLogIsAFailedBuildOnlyWhereItsBuildFailed) {
  const std::string head =
      "DKMS (dkms-3.2.1) make.log for nvidia/575.51.02 for kernel 6.15.0-2-cachyos (x86_64)\n"
      "Building module(s)\n";
  EXPECT_TRUE(analyze(head + "# exit code: 0\n").findings.empty());
  const Result failed = analyze(head + "make: *** [Makefile:140: modules] Error 2\n# exit code: 2\n");
  EXPECT_EQ(failed.cause("gpu.driver_kernel_mismatch"), "dkms_build_failed") << failed.ids();
}

TEST(Rules, AnExpeditedRcuStallUnderTheDefaultTimeoutIsTheThresholdNotAStuckCpu) {
  // Linux 5.19 set CONFIG_RCU_EXP_CPU_STALL_TIMEOUT to 20 ms on some configs (a 21-jiffy report); the default 21 s
  // timeout cannot report fewer than 2100 jiffies at any HZ from 100.
  for (const char* n : {"21", "153"})
    EXPECT_EQ(analyze(std::string("rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 0-... } ") + n +
                      " jiffies s: 29 root: 0x1/.\n")
                  .get("host.cpu_stall"),
              nullptr)
        << n;
  const Result real =
      analyze("rcu: INFO: rcu_sched detected expedited stalls on CPUs/tasks: { 2-.... } 21002 jiffies s: 1137 root: 0x1/.\n");
  EXPECT_NE(real.get("host.cpu_stall"), nullptr) << real.ids();
}

TEST(Rules, PipsDependencyConflictIsARiskNamedAtInfoNotAFailure) {
  const Result r = analyze(
      "Successfully installed torch-2.2.1\n"
      "xformers 0.0.26.post1 requires torch==2.3.0, but you have torch 2.2.1+cu121 which is incompatible.\n");
  EXPECT_EQ(r.cause("job.unexplained_failure"), "package_conflict") << r.ids();
  expect_only_info(r);
}

// A failed RegisterTask is the coordinator's rendezvous only where the
// status line and the RPC line are both there; the RPC's name alone, or a
// restart race's ABORTED beside another call's retry, is not.
TEST(Rules, AJaxRegisterTaskTimeoutNeedsItsStatusAndItsRpc) {
  const std::string rpc = "RPC: /tensorflow.CoordinationService/RegisterTask\n";
  EXPECT_EQ(analyze(rpc).get("net.unreachable"), nullptr) << analyze(rpc).ids();
  EXPECT_EQ(analyze("DEADLINE_EXCEEDED: Deadline Exceeded\n").get("net.unreachable"), nullptr);
  const Result timed_out = analyze("DEADLINE_EXCEEDED: Deadline Exceeded\n" + rpc);
  EXPECT_EQ(timed_out.cause("net.unreachable"), "rendezvous") << timed_out.ids();
  const Result race = analyze(
      "jaxlib.xla_extension.XlaRuntimeError: ABORTED: Duplicate task registration with task_name=/job:jax_worker/replica:0/task:1\n" +
      rpc + "W0101 gcs.cc:10] checkpoint upload UNAVAILABLE: Socket closed, will retry\n");
  EXPECT_EQ(race.get("net.unreachable"), nullptr) << race.ids();
}

TEST(Rules, NoSpaceFromAnRdmaDeviceIsNotAFullDisk) {
  for (const char* line :
       {"W0717 18:50:07.754983 3957032 rdma_context.cpp:199] The buffer length exceeds device max_mr_size, shrink it "
        "to 68719476736: No space left on device [28]\n",
        "ibv_create_qp failed: No space left on device\n"})
    EXPECT_EQ(analyze(line).get("storage.full"), nullptr) << line << analyze(line).ids();
  EXPECT_NE(analyze("OSError: [Errno 28] No space left on device: '/ckpt/step_100.pt'\n").get("storage.full"), nullptr);
  // A file named after a verb is still a full disk.
  EXPECT_NE(analyze("cp: error writing '/scratch/ibv_dump/ibv_qp_states.log': No space left on device\n").get("storage.full"),
            nullptr);
}

TEST(Rules, PinnedHostMemoryIsHostMemoryThoughCudaCallsItOutOfMemory) {
  // cudaMallocHost/cuMemAllocHost allocate page-locked host RAM; their
  // "out of memory" is the host's, not the GPU's.
  for (const char* line :
       {"cudaMallocHost of size 536870912 bytes failedCUDA error #2 (cudaErrorMemoryAllocation): out of memory.\n",
        "Unknown error happened during execution: cuMemAllocHost_v2 failed with error code: CUDA_ERROR_OUT_OF_MEMORY\n"}) {
    const Result r = analyze(line);
    EXPECT_NE(r.get("host.oom"), nullptr) << line << r.ids();
    EXPECT_EQ(r.get("gpu.oom"), nullptr) << line << r.ids();
  }
  const Result gpu = analyze("RuntimeError: cudaMalloc failed: out of memory\n");
  EXPECT_NE(gpu.get("gpu.oom"), nullptr) << gpu.ids();
}

TEST(Rules, ContainerPermissionDeniedIsSelinuxOnlyWhereTheLogShowsEnforcing) {
  const std::string denied =
      "docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container "
      "process caused \"permission denied\": unknown.\n";
  EXPECT_EQ(analyze(denied).get("selinux.avc"), nullptr) << "file modes or seccomp can say the same";
  const Result enf = analyze("$ getenforce\nEnforcing\n" + denied);
  ASSERT_NE(enf.get("selinux.avc"), nullptr) << enf.ids();
  EXPECT_EQ(enf.get("selinux.avc")->facts.value("cause", std::string()), "container_denied");
  // sealert's report and audit2allow's output are denials too.
  EXPECT_NE(analyze("Target Objects                /dev/nvidia0 [ chr_file ]\n").get("selinux.avc"), nullptr);
  EXPECT_NE(analyze("allow xserver_t container_runtime_exec_t:file entrypoint;\n").get("selinux.avc"), nullptr);
}

TEST(Rules, AnchoredPatternsSeeTheMessageBehindItsPrefix) {
  // nvidia-smi -q pasted through kubectl logs --timestamps and --prefix:
  // the section layout the anchored patterns need starts after the wrapper.
  const Result ts = analyze(
      "2024-05-01T10:00:00.000000001Z     Fabric\n"
      "2024-05-01T10:00:00.000000002Z         State                             : In Progress\n");
  EXPECT_NE(ts.get("gpu.fabric_manager"), nullptr) << ts.ids();
  const Result pod = analyze("[pod/trainer-0/main]         HW Slowdown                       : Active\n");
  EXPECT_NE(pod.get("gpu.compute_slow"), nullptr) << pod.ids();
  EXPECT_TRUE(analyze("[pod/trainer-0/main]         HW Slowdown                       : Not Active\n").findings.empty());
  EXPECT_TRUE(analyze("May  1 10:00:00 node1 kernel: State : In Progress\n").findings.empty())
      << "no Fabric section: another tool's state line";
}

TEST(Rules, AvcPermissiveIsInfoWouldBeBlockedEnforcingAnError) {
  const std::string deny =
      "type=AVC msg=audit(1730072197.188:289): avc:  denied  { read } for  pid=1 comm=\"python\" path=\"/dev/nvidia0\" "
      "scontext=system_u:system_r:container_t:s0 tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file permissive=";
  const Result permissive = analyze(deny + "1\n");
  const Finding* p = permissive.get("selinux.avc");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->severity, Severity::kInfo);
  EXPECT_NE(p->title.find("would be blocked when enforcing"), std::string::npos) << p->title;
  EXPECT_EQ(p->action, "none");
  // Without permissive= (older kernels, sealert summaries) the log's mode decides.
  const std::string old = "type=AVC msg=audit(1730072197.188:289): avc:  denied  { read } for  pid=1 comm=\"python\" "
                          "scontext=a_t tcontext=b_t tclass=chr_file\n";
  EXPECT_EQ(analyze(old).get("selinux.avc")->severity, Severity::kError);
  EXPECT_EQ(analyze("Current mode:                   permissive\n" + old).get("selinux.avc")->severity, Severity::kInfo);
  const Result enforcing = analyze(deny + "0\n");
  const Finding* f = enforcing.get("selinux.avc");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->title.find("python"), std::string::npos) << f->title;
  bool module = false;
  for (const auto& s : f->remedy) module |= s.find("audit2allow -M nodeprobe_python") != std::string::npos;
  EXPECT_TRUE(module);
}

TEST(Rules, ASigkillTheServiceManagerSentAfterAStopTimeoutIsNotTheOomKiller) {
  const std::string killed = "Mar 04 10:13:31 gpu-node-3 systemd[1]: train.service: Main process exited, code=killed, status=9/KILL\n";
  const Result alone = analyze(killed);
  ASSERT_NE(alone.get("host.oom"), nullptr) << alone.ids();
  EXPECT_EQ(alone.get("host.oom")->severity, Severity::kWarn);
  // systemd escalated its own stop (TimeoutStopSec): the SIGKILL is the stop's.
  const Result stop = analyze(
      "Mar 04 10:13:31 gpu-node-3 systemd[1]: train.service: State 'stop-sigterm' timed out. Killing.\n"
      "Mar 04 10:13:31 gpu-node-3 systemd[1]: train.service: Killing process 48213 (python3) with signal SIGKILL.\n" +
      killed);
  ASSERT_NE(stop.get("host.oom"), nullptr) << stop.ids();
  EXPECT_EQ(stop.get("host.oom")->severity, Severity::kInfo);
  // supervisord likewise after stopwaitsecs.
  const Result sup = analyze(
      "2024-03-04 10:12:11,125 WARN killing 'trainer' (48213) with SIGKILL\n"
      "2024-03-04 10:12:01,123 WARN exited: trainer (terminated by SIGKILL; not expected)\n");
  ASSERT_NE(sup.get("host.oom"), nullptr) << sup.ids();
  EXPECT_EQ(sup.get("host.oom")->severity, Severity::kInfo);
}

TEST(Rules, TooManyOpenFilesBehindASharedMemoryError) {
  const Result r = analyze(
      "RuntimeError: unable to open shared memory object </torch_30997_2076642173> in read-write mode\n"
      "OSError: [Errno 24] Too many open files\n");
  EXPECT_EQ(r.get("limits.shm"), nullptr) << r.ids();
  ASSERT_NE(r.get("limits.nofile"), nullptr);
  EXPECT_EQ(r.get("limits.nofile")->facts.value("cause", ""), "shm_from_nofile");
  // Without the nofile error the shared-memory error stands on its own.
  EXPECT_NE(analyze("RuntimeError: unable to open shared memory object </torch_1> in read-write mode\n").get("limits.shm"),
            nullptr);
}

TEST(Rules, NoDevicesVsNoDriverVsLibraryMismatch) {
  EXPECT_EQ(analyze("No devices were found\n").get("gpu.not_found")->facts.value("cause", ""), "no_device");
  EXPECT_EQ(analyze("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n")
                .get("gpu.not_found")->facts.value("cause", ""),
            "no_driver");
  const Result mm = analyze("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.144\n");
  EXPECT_EQ(mm.get("gpu.not_found"), nullptr);
  ASSERT_NE(mm.get("gpu.driver_kernel_mismatch"), nullptr);
  EXPECT_EQ(mm.get("gpu.driver_kernel_mismatch")->facts.value("nvml_version", ""), "550.144");
}

TEST(Rules, MultiLineApiMismatchFacts) {
  const Result r = analyze(
      "[   12.014918] NVRM: API mismatch: the client has the version 570.153.02, but\n"
      "               NVRM: this kernel module has the version 570.144.  Please\n"
      "               NVRM: make sure that this kernel module and all NVIDIA driver\n");
  const Finding* f = r.get("gpu.driver_kernel_mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->facts.value("client_version", ""), "570.153.02");
  EXPECT_EQ(f->facts.value("module_version", ""), "570.144");
  EXPECT_NE(f->title.find("570.153.02"), std::string::npos) << f->title;
}

TEST(Rules, InsufficientDriverWithNoDriverAtAll) {
  const Result r = analyze(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
      "CUDA driver version is insufficient for CUDA runtime version\n");
  EXPECT_EQ(r.get("gpu.cuda_driver_insufficient")->facts.value("cause", ""), "no_driver");
}

TEST(Rules, EvidenceIsRedactedAndValidUtf8) {
  const Result r = analyze("Too many open files password=hunter2 \xff\xfe end\n");
  const Finding* f = r.get("limits.nofile");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence[0].text.find("hunter2"), std::string::npos);
  EXPECT_NE(f->evidence[0].text.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(Rules, GarbageGivesNoFinding) {
  std::string junk;
  for (int i = 0; i < 100000; ++i) junk += static_cast<char>((i * 7919) % 256);
  const Result r = analyze(junk);
  EXPECT_TRUE(r.findings.empty()) << r.ids();
  EXPECT_EQ(r.source.kind, "binary");
}

}  // namespace
}  // namespace nodeprobe::diag

namespace nodeprobe::diag {
namespace {

// Look-alikes (issue 13 item 5): each must stay quiet.
TEST(LookAlikes, SocketTransportChosenOnPurposeIsNotAFallback) {
  const std::string log =
      "h:1:1 [0] NCCL INFO NCCL_NET set by environment to Socket\n"
      "h:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO Using network Socket\n";
  EXPECT_EQ(analyze(log).get("efa.fallback_tcp"), nullptr) << analyze(log).ids();
  AnalysisOptions efa;
  efa.efa_expected = true;  // even on an EFA instance type: the user chose sockets
  EXPECT_EQ(analyze(log, efa).get("efa.fallback_tcp"), nullptr);
}

TEST(LookAlikes, KilledInOtherContextsIsNotAnOom) {
  for (const char* line : {"[1]+  Killed                  sleep 1000\n", "Killed by signal 15.\n",
                           "oom_score_adj set to -1000 for nodeprobe\n", "Killed 3 stale sessions of user ubuntu\n",
                           "INFO: killed 3 stale workers after the epoch\n", "exit code -90\n"}) {
    const Result r = analyze(line);
    EXPECT_EQ(r.get("host.oom"), nullptr) << line;
  }
}

// The shell's own report of a SIGKILL'ed foreground job (a line "Killed",
// also glued to a progress bar, or in another locale) and Python's -9 return
// codes: a probable OOM kill, a warning until the kernel's record says so.
TEST(Rules, ShellReportOfSigkillIsAProbableOom) {
  for (const char* log : {"config loaded.\nKilled\n", "100%|####| 3000001/3000001 [03:33<00:00, 14061.26it/s]Killed\n",
                          "**Killed**\n", "已杀死\n", "ERROR: error code -9\n",
                          "subprocess.CalledProcessError: Command 'x' returned non-zero exit status -9.\n"}) {
    const Result r = analyze(log);
    const Finding* f = r.get("host.oom");
    ASSERT_NE(f, nullptr) << log << r.ids();
    EXPECT_EQ(f->severity, Severity::kWarn) << log;
  }
  // With the kernel's record the record is the finding.
  const Result k = analyze("Killed\n[ 1.0] Out of memory: Killed process 7 (python) total-vm:1kB, anon-rss:1kB\n");
  ASSERT_NE(k.get("host.oom"), nullptr);
  EXPECT_EQ(k.get("host.oom")->severity, Severity::kError) << k.ids();
}

// A bare ncclSystemError names no call: one node (no network lines) is
// NCCL's shared memory; with the interface listing of a multi-node job it
// stays the network.
TEST(Rules, BareNcclSystemErrorIsShmOnOneNodeNetworkAcrossNodes) {
  const std::string bare = "RuntimeError: NCCL Error 2: unhandled system error\n";
  EXPECT_NE(analyze(bare).get("nccl.shm"), nullptr) << analyze(bare).ids();
  const Result net = analyze("h:1:1 [0] NCCL INFO NET/Socket : Using [0]bond0:192.168.1.161<0> [1]br-05ab:172.19.0.1<0>\n" + bare);
  EXPECT_NE(net.get("nccl.network_config"), nullptr) << net.ids();
  EXPECT_EQ(net.get("nccl.shm"), nullptr) << net.ids();
  // An internal error is not a system call: still the generic network cause.
  EXPECT_EQ(analyze("ncclInternalError: Internal check failed.\n").get("nccl.shm"), nullptr);
}

// A bare "unhandled cuda error" is a CUDA call that failed inside NCCL: its
// own finding id (not a cause of nccl.network_config, whose title is the
// network's), whose steps look for the CUDA error and the GPU, not the
// socket interface; on one node or several alike.
TEST(Rules, BareNcclUnhandledCudaErrorIsTheCudaCallNotTheNetwork) {
  for (const char* bare :
       {"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n",
        "torch.distributed.DistBackendError: NCCL error: ncclUnhandledCudaError: Call to CUDA function failed.\n"}) {
    for (const std::string& net : {std::string(), std::string("h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n")}) {
      SCOPED_TRACE(net + std::string(bare));
      const Result r = analyze(net + std::string(bare));
      const auto* f = r.get("nccl.cuda_error");
      ASSERT_NE(f, nullptr) << r.ids();
      EXPECT_EQ(f->severity, Severity::kError) << r.ids();
      EXPECT_EQ(r.get("nccl.network_config"), nullptr) << r.ids();
      EXPECT_EQ(r.get("nccl.shm"), nullptr) << r.ids();
      std::string steps;
      for (const auto& s : f->remedy) steps += s + "\n";
      EXPECT_NE(steps.find("NVRM: Xid"), std::string::npos) << steps;
      EXPECT_EQ(steps.find("NCCL_SOCKET_IFNAME"), std::string::npos) << steps;
    }
  }
}

// A rule that yields also wins over another yielding rule that gives way to
// its finding: the exception line that names a build without the GPU's
// architecture is that finding (generic tier), not also the job's exception;
// two rules that give way to each other both speak.
TEST(Rules, AYieldingRuleSilencesARuleThatGivesWayToIt) {
  const Result r = analyze("RuntimeError: This cuDF installation is missing the necessary PTX files that are <=50.\n");
  EXPECT_EQ(r.cause("gpu.not_found"), "arch_unsupported") << r.ids();
  EXPECT_EQ(r.get("job.unexplained_failure"), nullptr) << r.ids();
}

// Two ranks on one GPU is the job's launch (NCCL's ncclInvalidUsage), not the
// network: job.unexplained_failure/cuda_api_error, no nccl.network_config.
TEST(Rules, TwoRanksOnOneGpuAreTheLaunchNotTheNetwork) {
  for (const char* line :
       {"init.cc:904 NCCL WARN Duplicate GPU detected : rank 15 and rank 7 both on CUDA device e4000\n",
        "node1:1234:1300 [0] init.cc:1500 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set "
        "NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this feature.\n"}) {
    const Result r = analyze(line);
    EXPECT_EQ(r.cause("job.unexplained_failure"), "cuda_api_error") << line << r.ids();
    EXPECT_EQ(r.get("nccl.network_config"), nullptr) << line << r.ids();
  }
  // The rest of NCCL's configuration checks stay the network's.
  EXPECT_EQ(analyze("node1:1:1 [0] init.cc:100 NCCL WARN Error: network IB not found.\n").cause("nccl.network_config"),
            "config_error");
}

// A program that says it disabled its CUDA back-end is its CPU fallback
// (info), and the cuInit "no CUDA-capable device" it quotes is that fallback
// too; the same cuInit text alone stays the no-device error.
TEST(Rules, ANoDeviceLineQuotedByACpuFallbackIsTheFallback) {
  const Result drjit = analyze(
      "jit_cuda_init(): cuInit failed, disabling CUDA backend.\n"
      "There are two common explanations for this type of failure:\n"
      " The specific error message produced by cuInit was\n"
      "   \"no CUDA-capable device is detected\"\n");
  expect_only_info(drjit);
  ASSERT_NE(drjit.get("gpu.not_found"), nullptr) << drjit.ids();
  EXPECT_EQ(drjit.cause("gpu.not_found"), "no_gpu_found") << drjit.ids();
  const Result alone = analyze("RuntimeError: cuInit failed: no CUDA-capable device is detected\n");
  ASSERT_NE(alone.get("gpu.not_found"), nullptr) << alone.ids();
  EXPECT_EQ(alone.cause("gpu.not_found"), "no_device") << alone.ids();
  EXPECT_EQ(alone.get("gpu.not_found")->severity, Severity::kError) << alone.ids();
}

// pyrender's EGL platform refusing device 0 means EGL lists no GPU at all;
// the same ValueError outside pyrender's egl.py says nothing about a GPU.
// A CUDA-compiled kernel that was not found (a slower fallback) is no
// missing GPU either (held-out set QD's look-alike).
TEST(Rules, PyrenderEglDeviceZeroNeedsItsTraceback) {
  const Result egl = analyze(
      "  File \"/opt/venv/lib/python3.10/site-packages/pyrender/platforms/egl.py\", line 83, in get_device_by_index\n"
      "    raise ValueError('Invalid device ID ({})'.format(device_id, len(devices)))\n"
      "ValueError: Invalid device ID (0)\n");
  ASSERT_NE(egl.get("gpu.not_found"), nullptr) << egl.ids();
  EXPECT_EQ(egl.cause("gpu.not_found"), "no_gpu_found") << egl.ids();
  const Result bare = analyze("ValueError: Invalid device ID (0)\n");
  EXPECT_EQ(bare.get("gpu.not_found"), nullptr) << bare.ids();
  const Result rope = analyze("Warning, cannot find cuda-compiled version of RoPE2D, using a slow pytorch version instead\n");
  EXPECT_EQ(rope.get("gpu.not_found"), nullptr) << rope.ids();
  const Result gpu = analyze("RuntimeError: could not find a CUDA-enabled GPU\n");
  EXPECT_NE(gpu.get("gpu.not_found"), nullptr) << gpu.ids();
}

// Fabric Manager with nothing to manage is info on a board without NVSwitch,
// and stays an error on an NVSwitch system or where CUDA waits for it (802).
TEST(Rules, FabricManagerNotNeededWithoutNvswitch) {
  const std::string no_switch = "nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch "
                                "driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n";
  const std::string fm = no_switch + "systemd[1]: nvidia-fabricmanager.service: Control process exited, status=1/FAILURE\n";
  const Result none = analyze(fm);
  expect_only_info(none);
  ASSERT_NE(none.get("gpu.fabric_manager"), nullptr) << none.ids();
  const Result geforce = analyze("|   0  NVIDIA GeForce ...  Off  | 00000000:05:00.0 Off |                  N/A |\n"
                                 "Job for nvidia-fabricmanager.service failed because the control process exited with error code.\n"
                                 "systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.\n");
  expect_only_info(geforce);
  const Result hgx = analyze("|   0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |\n" + fm);
  ASSERT_NE(hgx.get("gpu.fabric_manager"), nullptr);
  EXPECT_EQ(hgx.get("gpu.fabric_manager")->severity, Severity::kError) << hgx.ids();
  const Result cuda = analyze(fm + "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized\n");
  EXPECT_EQ(cuda.get("gpu.fabric_manager")->severity, Severity::kError) << cuda.ids();
}

TEST(Rules, AerOnANonGpuDeviceIsInfoEvenOnAGpuNode) {
  const std::string nv = "[Mon Mar  4 10:11:00 2024] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n";
  // A NIC's corrected error on a GPU node: the root port's header names the NIC.
  const Result nic = analyze(nv +
      "[Mon Mar  4 10:12:01 2024] pcieport 0000:00:1c.0: AER: Corrected error received: 0000:05:00.0\n"
      "[Mon Mar  4 10:12:01 2024] igb 0000:05:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
      "[Mon Mar  4 10:12:01 2024] igb 0000:05:00.0:    [ 0] RxErr                  (First)\n");
  expect_only_info(nic);
  ASSERT_NE(nic.get("gpu.pcie_degraded"), nullptr) << nic.ids();
  // The GPU's own report in the same log is still the GPU's.
  const Result gpu = analyze(nv +
      "[Mon Mar  4 10:12:01 2024] pcieport 0000:00:1c.0: AER: Corrected error received: 0000:05:00.0\n"
      "[Mon Mar  4 10:12:01 2024] igb 0000:05:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
      "[Mon Mar  4 10:12:09 2024] pcieport 0000:00:03.0: AER: Corrected error message received from 0000:3b:00.0\n"
      "[Mon Mar  4 10:12:09 2024] nvidia 0000:3b:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)\n");
  ASSERT_NE(gpu.get("gpu.pcie_degraded"), nullptr) << gpu.ids();
  EXPECT_EQ(gpu.get("gpu.pcie_degraded")->severity, Severity::kWarn) << gpu.ids();
}

TEST(Rules, FirmwareFirstAerIsUncorrectedWhenItsUncorSeverityLineIsThere) {
  const Result r = analyze(
      "[Mon Mar  4 10:11:00 2024] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
      "[Mon Mar  4 10:12:01 2024] {1}[Hardware Error]: event severity: fatal\n"
      "[Mon Mar  4 10:12:01 2024] {1}[Hardware Error]:   section_type: PCIe error\n"
      "[Mon Mar  4 10:12:01 2024] nvidia 0000:3b:00.0: AER: aer_status: 0x00004000, aer_mask: 0x00000000\n"
      "[Mon Mar  4 10:12:01 2024] nvidia 0000:3b:00.0: AER: aer_layer=Transaction Layer, aer_agent=Requester ID\n"
      "[Mon Mar  4 10:12:01 2024] nvidia 0000:3b:00.0: AER: aer_uncor_severity: 0x00062030\n");
  ASSERT_NE(r.get("gpu.pcie_degraded"), nullptr) << r.ids();
  EXPECT_EQ(r.get("gpu.pcie_degraded")->severity, Severity::kError) << r.ids();
  // A fatal report is pcie.aer's and pcie.aer_fatal's: one event, not two.
  const Result fatal = analyze(
      "[Mon Mar  4 10:12:01 2024] pcieport 0000:80:01.0: AER: Uncorrectable (Fatal) error message received from 0000:3b:00.0\n"
      "[Mon Mar  4 10:12:01 2024] nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Inaccessible, (Unregistered Agent ID)\n");
  ASSERT_NE(fatal.get("gpu.pcie_degraded"), nullptr) << fatal.ids();
  EXPECT_EQ(fatal.get("gpu.pcie_degraded")->count, 1) << fatal.ids();
}

TEST(Rules, ASigkillAfterSystemdOomdIsOomdsKill) {
  const Result r = analyze(
      "Mar 04 10:12:01 gpu-node-3 systemd-oomd[812]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/train.scope due to memory pressure for /user.slice/user-1000.slice/user@1000.service being 72.34% > 50.00% for > 20s with reclaim activity\n"
      "Mar 04 10:12:01 gpu-node-3 systemd[1]: train.scope: systemd-oomd killed 12 process(es) in this unit.\n"
      "train-1 exited with code 137\n");
  ASSERT_NE(r.get("host.oom"), nullptr) << r.ids();
  EXPECT_EQ(r.get("host.oom")->facts.value("cause", std::string()), "oomd") << r.ids();
}

// A named cause leads the entry's default only where both read one report:
// the header of a cgroup OOM report and the kill line after it (the default
// host.oom rule's) make a cgroup OOM; a pod's OOMKilled status beside a
// kernel report that says the kill was global (cgroup v2 counts any OOM kill
// in memory.events) leaves the kernel's verdict.
TEST(Rules, ANamedOomCauseLeadsOnlyWhereItReadTheKernelsReport) {
  const std::map<std::string, std::string> cause_of_log{
      {"memorymonster invoked oom-killer: gfp_mask=0xd0, order=0, oom_score_adj=0\n"
       "Memory cgroup stats for /mem2: cache:0KB rss:980KB rss_huge:0KB mapped_file:0KB writeback:20KB\n"
       "Memory cgroup out of memory: Kill process 13536 (memorymonster) score 996 or sacrifice child\n"
       "Killed process 13536 (memorymonster) total-vm:33558652kB, anon-rss:920kB, file-rss:452kB\n",
       "cgroup"},
      {"Mar 03 10:00:01 node1 kernel: python invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0\n"
       "Mar 03 10:00:01 node1 kernel: oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/kubepods.slice/kubepods-burstable.slice/cri-containerd-abc.scope,task=python,pid=4242,uid=0\n"
       "Mar 03 10:00:01 node1 kernel: Out of memory: Killed process 4242 (python) total-vm:98765432kB, anon-rss:87654321kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:180000kB oom_score_adj:0\n"
       "    Last State:     Terminated\n"
       "      Reason:       OOMKilled\n"
       "      Exit Code:    137\n",
       ""},
  };
  for (const auto& [log, cause] : cause_of_log) {
    const Result r = analyze(log);
    ASSERT_NE(r.get("host.oom"), nullptr) << r.ids();
    EXPECT_EQ(r.cause("host.oom"), cause) << r.ids();
  }
}

TEST(LookAlikes, HealthyNcclInitAndToolOutputStayQuiet) {
  const Result r = analyze(
      "h:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory\n"
      "h:1:1 [0] NCCL INFO NET/Plugin : No plugin found, using internal implementation\n"
      "h:1:1 [0] NCCL INFO Failed to initialize NET plugin IB\n"
      "h:1:1 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<40513> returned Connection refused, retrying (1/34)\n"
      "h:1:1 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
      "h:1:1 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 busId 1e0 - Init COMPLETE\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "   134217728      33554432     float     sum      -1   1234.5  108.72  190.26      0   1230.1  109.11  190.94      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 190.5\n"
      "|  No running processes found                                                           |\n"
      "[    1.234567] nvidia: module verification failed: signature and/or required key missing - tainting kernel\n"
      "[    1.234568] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
      "[    1.234569] pcieport 0000:00:01.0: AER: enabled with IRQ 24\n"
      "type=AVC msg=audit(1730072197.188:289): avc:  granted  { setenforce } for  pid=1 comm=\"systemd\" scontext=a_t tcontext=b_t tclass=security\n");
  expect_only_info(r);
}

// Held-out set D (issue 13): the decision is the log's context, not the line.
TEST(Rules, AwsOfiTcpProviderIsAFallbackUnderTheEfaStackUnlessChosenOrOneNode) {
  const std::string tcp = "h:1:1 [0] NCCL INFO NET/OFI Selected Provider is tcp (found 1 nics)\n";
  // Nothing says EFA: named at all only where it was expected.
  EXPECT_EQ(analyze(tcp).get("efa.fallback_tcp"), nullptr);
  EXPECT_EQ(analyze("h:1:1 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.16.0\n" + tcp).get("efa.fallback_tcp"),
            nullptr)
      << "a master-branch plugin is no sign of the EFA stack";
  const std::string stack = "/opt/amazon/openmpi/bin/mpirun -np 16 ./all_reduce_perf\n"
                            "h:1:1 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.12.1-aws\n";
  const Result fb = analyze(stack + tcp);
  ASSERT_NE(fb.get("efa.fallback_tcp"), nullptr) << fb.ids();
  EXPECT_EQ(fb.get("efa.fallback_tcp")->severity, Severity::kWarn);
  // TCP chosen on purpose, or one node (no network traffic): quiet.
  EXPECT_EQ(analyze("FI_PROVIDER=tcp\n" + stack + tcp).get("efa.fallback_tcp"), nullptr);
  EXPECT_EQ(analyze("h:1:1 [0] NCCL INFO NCCL_NET set by environment to Socket\n" + stack + tcp).get("efa.fallback_tcp"),
            nullptr);
  EXPECT_EQ(analyze(stack + tcp +
                    "h:1:1 [0] NCCL INFO comm 0x55d0 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n")
                .get("efa.fallback_tcp"),
            nullptr);
  AnalysisOptions efa;
  efa.efa_expected = true;  // a chosen provider stays quiet even on an EFA instance type
  EXPECT_EQ(analyze("export FI_PROVIDER=tcp\n" + tcp, efa).get("efa.fallback_tcp"), nullptr);
}

TEST(Rules, DcgmNvlinkDownIsAnErrorOnlyWhereTheNodeHasNvlink) {
  const std::string down =
      "|                           | GPU 0's NvLink link 0 is currently down Run a field diagnostic on the GPU. |\n"
      "|                           | GPU 0's NvLink link 1 is currently down Run a field diagnostic on the GPU. |\n";
  const Result pcie = analyze("GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-1)\n" + down);
  expect_only_info(pcie);
  ASSERT_NE(pcie.get("gpu.nvlink"), nullptr) << pcie.ids();
  EXPECT_EQ(pcie.get("gpu.nvlink")->facts.value("cause", std::string()), "ports_unconnected");
  expect_only_info(analyze(down));
  const Result sxm = analyze("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n" + down);
  ASSERT_NE(sxm.get("gpu.nvlink"), nullptr) << sxm.ids();
  EXPECT_EQ(sxm.get("gpu.nvlink")->severity, Severity::kError);
  const Result bridge = analyze("GPU 0: NVIDIA GeForce RTX 3090\n\t Link 0: 14.062 GB/s\n" + down);
  EXPECT_EQ(bridge.get("gpu.nvlink")->severity, Severity::kError) << "a link up: the others are meant to be up";
}

TEST(Rules, MemoryRegistrationFailureUnderALowMemlockLimitIsTheLimit) {
  const Result bare = analyze("ibv_reg_mr failed\n");
  ASSERT_NE(bare.get("nccl.network_config"), nullptr) << "without errno or limit the line keeps its own name";
  EXPECT_EQ(bare.get("nccl.network_config")->facts.value("cause", std::string()), "ib_mr");
  EXPECT_EQ(bare.get("limits.memlock"), nullptr);
  EXPECT_EQ(bare.get("efa.mr_registration"), nullptr) << "nothing in the log says EFA";
  const Result lim = analyze("max locked memory       (kbytes, -l) 64\nibv_reg_mr failed\n");
  ASSERT_NE(lim.get("limits.memlock"), nullptr) << lim.ids();
  ASSERT_NE(lim.get("nccl.network_config"), nullptr) << lim.ids();
  EXPECT_EQ(lim.get("nccl.network_config")->severity, Severity::kInfo) << lim.ids();
  // Where the log shows EFA the same line is EFA's registration failure.
  const Result efa = analyze("NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\nibv_reg_mr failed\n");
  ASSERT_NE(efa.get("efa.mr_registration"), nullptr) << efa.ids();
  EXPECT_EQ(efa.get("efa.mr_registration")->severity, Severity::kError) << efa.ids();
  ASSERT_NE(efa.get("nccl.network_config"), nullptr) << efa.ids();
  EXPECT_EQ(efa.get("nccl.network_config")->severity, Severity::kInfo) << efa.ids();
  // NCCL's own IB transport: GPU memory registered through dma-buf is not
  // charged to the memlock limit, so ENOMEM there is not the limit.
  const Result dmabuf =
      analyze("kilo:318:3584 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot "
              "allocate memory\n");
  ASSERT_NE(dmabuf.get("nccl.network_config"), nullptr) << dmabuf.ids();
  EXPECT_EQ(dmabuf.get("nccl.network_config")->facts.value("cause", std::string()), "ib_mr");
  EXPECT_EQ(dmabuf.get("limits.memlock"), nullptr) << dmabuf.ids();
  EXPECT_EQ(dmabuf.get("efa.mr_registration"), nullptr) << dmabuf.ids();
  EXPECT_NE(analyze("ibv_reg_mr failed, errno 12\n").get("limits.memlock"), nullptr);
  // Other errnos are not the limit; old UCX adds its memlock hint to every failure.
  EXPECT_EQ(analyze("ibv_reg_mr failed, errno 14 (Bad address)\n").get("limits.memlock"), nullptr);
  EXPECT_EQ(analyze("[1] ib_md.c:287 UCX ERROR ibv_reg_mr(address=0x1, length=65536, access=0xf) failed: Bad address. "
                    "Please set max locked memory (ulimit -l) to 'unlimited' (current: 65536 kbytes)\n")
                .get("limits.memlock"),
            nullptr);
  // Unlimited is fine: the registration failure is the finding.
  const Result unl = analyze("max locked memory       (kbytes, -l) unlimited\nibv_reg_mr failed\n");
  EXPECT_EQ(unl.get("limits.memlock"), nullptr);
  ASSERT_NE(unl.get("nccl.network_config"), nullptr) << unl.ids();
  EXPECT_EQ(unl.get("nccl.network_config")->severity, Severity::kError);
}

// PyTorch asked for CUDA and the process has none: with a CPU-only wheel in
// the same log the wheel is the cause (warn: the node is fine); without it
// the process could not use CUDA at all (error).
TEST(Rules, CudaUnavailableIsTheCpuWheelOnlyWhereTheLogShowsOne) {
  const std::string ask =
      "ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available\n";
  const Result cpu = analyze("Ultralytics YOLOv8.1.3 Python-3.10.11 torch-2.1.0+cpu\n" + ask);
  ASSERT_NE(cpu.get("gpu.not_found"), nullptr) << cpu.ids();
  EXPECT_EQ(cpu.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_libraries_missing");
  EXPECT_EQ(cpu.get("gpu.not_found")->severity, Severity::kWarn);
  const Result cu = analyze("Ultralytics YOLOv8.1.3 Python-3.10.11 torch-2.1.0+cu121\n" + ask);
  ASSERT_NE(cu.get("gpu.not_found"), nullptr) << cu.ids();
  EXPECT_EQ(cu.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_unavailable");
  EXPECT_EQ(cu.get("gpu.not_found")->severity, Severity::kError);
  const Result notc = analyze("AssertionError: Torch not compiled with CUDA enabled\n");
  ASSERT_NE(notc.get("gpu.not_found"), nullptr) << notc.ids();
  EXPECT_EQ(notc.get("gpu.not_found")->severity, Severity::kWarn);
  expect_only_info(analyze("PyTorch version: 2.1.0+cpu\nIs CUDA available: False\n"));
}

TEST(Rules, GenericTierSpeaksWhereTheEmitterRulesAreSilent) {
  // A wording no emitter-specific rule knows: the generic tier names the class.
  const Result oom = analyze("[miner] GPU0 assert out of memory: requested 536870912 bytes\n");
  ASSERT_NE(oom.get("gpu.oom"), nullptr) << oom.ids();
  // Advice about memory is not a failure.
  EXPECT_TRUE(analyze("INFO worker.py:201] Reduce gpu_memory_utilization to avoid OOM errors on this GPU.\n").findings.empty());
  // A program's own "no GPU" is a warning...
  const Result none = analyze("thread 'main' panicked at 'Unable to find a GPU! Make sure you have installed required drivers!'\n");
  ASSERT_NE(none.get("gpu.not_found"), nullptr) << none.ids();
  EXPECT_EQ(none.get("gpu.not_found")->severity, Severity::kWarn);
  EXPECT_EQ(none.get("gpu.not_found")->facts.value("cause", std::string()), "no_gpu_found");
  // ...that an old driver in the same log explains: only the driver is reported.
  const Result old = analyze(
      "RuntimeError: The NVIDIA driver on your system is too old (found version 10010).\n"
      "thread 'main' panicked at 'Unable to find a GPU! Make sure you have installed required drivers!'\n");
  EXPECT_NE(old.get("gpu.cuda_driver_insufficient"), nullptr) << old.ids();
  EXPECT_EQ(old.get("gpu.not_found"), nullptr) << old.ids();
  // A line an emitter-specific rule matches keeps that rule's cause.
  const Result tf = analyze(
      "2023-06-15 13:14:51.112977: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1956] Cannot dlopen some GPU "
      "libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use "
      "GPU.\n");
  ASSERT_NE(tf.get("gpu.not_found"), nullptr) << tf.ids();
  EXPECT_EQ(tf.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_libraries_missing");
}

TEST(Rules, NvencLibraryMissingIsAFailureOnlyWhereFfmpegsEncoderAskedForIt) {
  // HandBrake and other media tools probe NVENC at start-up on every host, NVIDIA or not.
  const Result probe = analyze("Cannot load libnvidia-encode.so.1\nCannot load libnvidia-encode.so.1\n");
  ASSERT_NE(probe.get("gpu.not_found"), nullptr) << probe.ids();
  EXPECT_EQ(probe.get("gpu.not_found")->severity, Severity::kInfo);
  // FFmpeg's encoder opened and could not load it: a container or host without the driver's video library.
  const Result enc = analyze(
      "[hevc_nvenc @ 0x55ca461fa380] Cannot load libnvidia-encode.so.1\n"
      "[hevc_nvenc @ 0x55ca461fa380] The minimum required Nvidia driver for nvenc is (unknown) or newer\n");
  ASSERT_NE(enc.get("gpu.not_found"), nullptr) << enc.ids();
  EXPECT_EQ(enc.get("gpu.not_found")->severity, Severity::kWarn);
  EXPECT_EQ(enc.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_libraries_missing");
}

// A rank that stopped on its own application error (NCCL's caller errors, a
// kernel's assert) closes its peers' connections: their lost sockets are its
// exit (info), not the network's fault; without such an error they stay errors.
TEST(Rules, PeersLostConnectionsAreExplainedByARanksOwnApplicationError) {
  const std::string lost =
      "vm1:7389:7453 [0] include/socket.h:421 NCCL WARN Call to recv failed : Broken pipe\n"
      "vm1:7403:7458 [3] include/socket.h:421 NCCL WARN Call to recv failed : Broken pipe\n";
  const Result alone = analyze(lost);
  ASSERT_NE(alone.get("nccl.network_config"), nullptr) << alone.ids();
  EXPECT_EQ(alone.get("nccl.network_config")->severity, Severity::kError);
  for (const char* own : {
           "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, invalid usage, NCCL version 2.7.8\n",
           "ncclInvalidUsage: This usually reflects invalid usage of NCCL library (such as too many async ops).\n",
           "RuntimeError: CUDA error: device-side assert triggered\n"}) {
    const Result r = analyze(std::string(own) + lost);
    ASSERT_NE(r.get("nccl.network_config"), nullptr) << own << r.ids();
    EXPECT_EQ(r.get("nccl.network_config")->severity, Severity::kInfo) << own;
    EXPECT_EQ(r.get("nccl.network_config")->facts.value("cause", std::string()), "peer_closed") << own;
  }
  // The other ranks' watchdogs then time out waiting for it: the same.
  const std::string timeout =
      "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 "
      "milliseconds before timing out.\n";
  ASSERT_NE(analyze(timeout).get("nccl.timeout"), nullptr);
  EXPECT_EQ(analyze(timeout).get("nccl.timeout")->severity, Severity::kError);
  const Result assert_first = analyze("[rank1]: RuntimeError: CUDA error: device-side assert triggered\n" + timeout);
  ASSERT_NE(assert_first.get("nccl.timeout"), nullptr) << assert_first.ids();
  EXPECT_EQ(assert_first.get("nccl.timeout")->severity, Severity::kInfo);
  // The signal is a source-wide context, not a finding of its own.
  EXPECT_EQ(analyze("ncclInvalidUsage: This usually reflects invalid usage of NCCL library\n").findings.size(), 0u);
}

// torch.cuda.is_available() with its answer after it (the REPL's next line,
// a print, prose): False is the failure, True or no answer is quiet.
TEST(Rules, IsAvailableFalseIsTheFindingAndTrueStaysQuiet) {
  const Result repl = analyze(">>> import torch\n>>> torch.cuda.is_available()\nFalse\n");
  ASSERT_NE(repl.get("gpu.not_found"), nullptr) << repl.ids();
  EXPECT_EQ(repl.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_unavailable");
  EXPECT_EQ(repl.get("gpu.not_found")->severity, Severity::kError);
  const Result wheel = analyze("torch==2.1.0+cpu\nprint(torch.cuda.is_available())  # False\n");
  ASSERT_NE(wheel.get("gpu.not_found"), nullptr) << wheel.ids();
  EXPECT_EQ(wheel.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_libraries_missing");
  EXPECT_TRUE(analyze(">>> torch.cuda.is_available()\nTrue\n").findings.empty());
  EXPECT_TRUE(analyze("device = 'cuda' if torch.cuda.is_available() else 'cpu'\nmodel.to(device)\n").findings.empty());
}

// A run that asked for the CPU expects the libraries' "no GPU" and "no
// driver" messages: still named, as info, with the line that asked. The same
// messages without that request stay what they are.
TEST(Rules, NoGpuMessagesOfARunThatAskedForTheCpuAreInfo) {
  const std::string warning =
      "/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: Found no "
      "NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
      "http://www.nvidia.com/Download/index.aspx\n";
  const Result plain = analyze(warning);
  ASSERT_NE(plain.get("gpu.not_found"), nullptr) << plain.ids();
  EXPECT_NE(plain.get("gpu.not_found")->severity, Severity::kInfo);
  for (const std::string asked : {"root@641d4b75809c:/usr/src/app# python train.py --device cpu --epoch 2\n",
                                  ">>> x = GPT4All('orca-mini-3b-gguf2-q4_0.gguf', device='cpu')\n",
                                  "$ CUDA_VISIBLE_DEVICES=\"\" python infer.py\n",
                                  "$ python run_glue.py --no_cuda --output_dir out\n"}) {
    const Result r = analyze(asked + warning);
    const Finding* f = r.get("gpu.not_found");
    ASSERT_NE(f, nullptr) << asked << r.ids();
    EXPECT_EQ(f->severity, Severity::kInfo) << asked;
    EXPECT_EQ(f->facts.value("gpu_not_wanted", std::string()).rfind("the run asked for the CPU: ", 0), 0u)
        << f->facts.dump();
  }
  // Choosing a GPU, or a tensor moved to the CPU, is no such request.
  for (const std::string other : {"$ python train.py --device cuda:0\n", "x = torch.device(\"cpu\")\n",
                                  "$ CUDA_VISIBLE_DEVICES=0 python train.py\n"})
    EXPECT_NE(analyze(other + warning).get("gpu.not_found")->severity, Severity::kInfo) << other;
}

// A traceback that stopped at an assert on torch.cuda.is_available() is its
// False answer; an AssertionError without that assert is nothing of ours.
TEST(Rules, AFailedAssertOnIsAvailableIsItsFalseAnswer) {
  const Result r = analyze(
      "  File \"src/train.py\", line 104, in main\n"
      "    assert torch.cuda.is_available(), 'must have cuda enabled'\n"
      "AssertionError: must have cuda enabled\n");
  ASSERT_NE(r.get("gpu.not_found"), nullptr) << r.ids();
  EXPECT_EQ(r.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_unavailable");
  // The program's own failed assert: at most the generic program failure.
  const Result other = analyze("  File \"train.py\", line 9, in <module>\n    assert x.shape[1] == 3\nAssertionError\n");
  EXPECT_EQ(other.get("gpu.not_found"), nullptr) << other.ids();
  for (const auto& f : other.findings) EXPECT_EQ(f.id, "job.unexplained_failure") << other.ids();
}

// TensorFlow's dso_loader tries cudart on CPU-only hosts too: only with the
// GPU found in the same log is a missing cudart a finding. The math libraries
// are tried only after a GPU was found.
TEST(Rules, TensorFlowCudartMissingNeedsAGpuInTheLog) {
  const std::string cudart =
      "2021-07-12 10:52:47.496789: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
      "dynamic library 'libcudart.so.10.1'; dlerror: libcudart.so.10.1: cannot open shared object file: No such file "
      "or directory\n";
  expect_only_info(analyze(cudart));
  const Result gpu = analyze(
      "2021-07-12 10:52:47.496273: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1561] Found device 0 with "
      "properties: \n" +
      cudart);
  ASSERT_NE(gpu.get("gpu.not_found"), nullptr) << gpu.ids();
  EXPECT_EQ(gpu.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_libraries_missing");
  EXPECT_NE(analyze("W dso_loader.cc:55] Could not load dynamic library 'libcusolver.so.10'; dlerror: x\n")
                .get("gpu.not_found"),
            nullptr);
}

TEST(Rules, ProfilerTableDataLoaderRowJudgedByItsShare) {
  const std::string head =
      "                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n";
  const Result hi = analyze(head +
                            "enumerate(DataLoader)#_SingleProcessDataLoaderIter._...        88.64%       78.632s        89.18%       79.116s     791.161ms           100  \n");
  ASSERT_NE(hi.get("io.starved"), nullptr) << hi.ids();
  EXPECT_EQ(hi.get("io.starved")->facts.value("cpu_percent", std::string()), "88.64");
  EXPECT_TRUE(analyze(head +
                      "enumerate(DataLoader)#_MultiProcessingDataLoaderIter._...         4.12%       3.632s        51.00%       3.975s      39.750ms           100  \n")
                  .findings.empty())
      << "a small self share is a healthy loader, whatever its total";
}

TEST(Rules, Cuda803IsADriverComponentMismatchAnd804AnOldDriver) {
  const Result m = analyze("Error 803: system has unsupported display driver / cuda driver combination\n");
  ASSERT_NE(m.get("gpu.driver_kernel_mismatch"), nullptr) << m.ids();
  EXPECT_EQ(m.get("gpu.driver_kernel_mismatch")->facts.value("cause", std::string()), "cuda_system_mismatch");
  EXPECT_EQ(m.get("gpu.cuda_driver_insufficient"), nullptr);
  const Result c = analyze("CUDA error: forward compatibility was attempted on non supported HW\n");
  EXPECT_NE(c.get("gpu.cuda_driver_insufficient"), nullptr) << c.ids();
}

TEST(Rules, ModprobeErrnoNamesTheRightCause) {
  // EPERM: a kernel lockdown refusing an unsigned module, an error where the
  // log shows Secure Boot; alone a warning (an unprivileged container gets
  // EPERM too); never "built for another kernel".
  const std::string eperm = "modprobe: ERROR: could not insert 'nvidia': Operation not permitted\n";
  const Result alone = analyze(eperm);
  ASSERT_NE(alone.get("gpu.driver_kernel_mismatch"), nullptr) << alone.ids();
  EXPECT_EQ(alone.cause("gpu.driver_kernel_mismatch"), "secure_boot");
  EXPECT_EQ(alone.get("gpu.driver_kernel_mismatch")->severity, Severity::kWarn);
  const Result sb = analyze("[    0.000000] secureboot: Secure boot enabled\nSecureBoot enabled\n" + eperm);
  ASSERT_NE(sb.get("gpu.driver_kernel_mismatch"), nullptr) << sb.ids();
  EXPECT_EQ(sb.cause("gpu.driver_kernel_mismatch"), "secure_boot");
  EXPECT_EQ(sb.get("gpu.driver_kernel_mismatch")->severity, Severity::kError);
  // EIO: the module loaded and could not initialise a GPU; no disk involved.
  const Result eio = analyze("modprobe: ERROR: could not insert 'nvidia': Input/output error\n");
  EXPECT_EQ(eio.cause("gpu.not_found"), "init_failed") << eio.ids();
  EXPECT_EQ(eio.get("storage.slow"), nullptr) << eio.ids();
  EXPECT_EQ(eio.get("gpu.driver_kernel_mismatch"), nullptr) << eio.ids();
  // EEXIST: the module is already loaded.
  expect_only_info(analyze("modprobe: ERROR: could not insert 'nvidia': Module already in kernel\n"
                           "insmod: ERROR: could not insert module nvidia.ko: File exists\n"));
  // ENOEXEC and friends still say the module does not fit the kernel.
  const Result fmt = analyze("insmod: ERROR: could not insert module nvidia.ko: Invalid module format\n");
  EXPECT_EQ(fmt.cause("gpu.driver_kernel_mismatch"), "module_kernel_mismatch") << fmt.ids();
}

TEST(Rules, DcgmSingleBitEccIsAWarningNotUncorrectable) {
  const Result r = analyze("More than 0 single-bit ECC error(s) detected in GPU 3 Volatile SBEs: 17702\n");
  ASSERT_NE(r.get("gpu.ecc"), nullptr) << r.ids();
  EXPECT_EQ(r.get("gpu.ecc")->severity, Severity::kWarn);
  EXPECT_EQ(r.get("gpu.ecc")->facts.value("cause", std::string()), "correctable_rate");
}

TEST(Rules, AGraphicsApiLosingTheGpuIsAWarningAndAnXidNamesItInstead) {
  // VK_ERROR_DEVICE_LOST (-4) as ncnn prints a failed call, Vulkan-Hpp's exception,
  // and Direct3D's removed device: the GPU faulted or hung; warn, restart the job.
  for (const char* line : {"vkQueueSubmit failed -4\n", "vk::Queue::submit: ErrorDeviceLost\n",
                           "Unreal Engine is exiting due to D3D device being lost. (Error: 0x887A0006 - 'HUNG')\n"}) {
    const Result r = analyze(line);
    ASSERT_NE(r.get("gpu.xid"), nullptr) << line << r.ids();
    EXPECT_EQ(r.get("gpu.xid")->severity, Severity::kWarn) << line;
    EXPECT_EQ(r.get("gpu.xid")->facts.value("cause", std::string()), "device_lost") << line;
  }
  // Other Vulkan results are not a lost device.
  EXPECT_EQ(analyze("vkQueueSubmit failed -3\n").get("gpu.xid"), nullptr);
  // The kernel's Xid at the same time is the finding that names the fault.
  const Result both = analyze(
      "[ 812.1] NVRM: Xid (PCI:0000:01:00): 79, pid=1234, name=realesrgan, GPU has fallen off the bus.\n"
      "vkWaitForFences failed -4\n");
  ASSERT_NE(both.get("gpu.xid"), nullptr) << both.ids();
  EXPECT_EQ(both.get("gpu.xid")->facts.value("code", std::string()), "79") << both.ids();
}

TEST(Rules, AnOopsInsideTheNvidiaModuleIsADriverCrashAndAWarningTraceIsNot) {
  // The RIP line of an oops inside nvidia.ko: the driver crashed, reboot.
  const Result oops = analyze(
      "[ 1822.417760] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
      "[ 1822.417770] Oops: 0000 [#1] PREEMPT SMP NOPTI\n"
      "[ 1822.417785] RIP: 0010:uvm_va_block_make_resident+0x3c/0x3a0 [nvidia_uvm]\n");
  ASSERT_NE(oops.get("gpu.xid"), nullptr) << oops.ids();
  EXPECT_EQ(oops.cause("gpu.xid"), "driver_oops");
  EXPECT_EQ(oops.get("gpu.xid")->severity, Severity::kError);
  // A WARNING trace prints the same kind of RIP line without any oops: not a crash.
  const Result warning = analyze(
      "[  412.118201] WARNING: CPU: 3 PID: 1187 at drivers/gpu/drm/drm_vblank.c:1207 drm_wait_one_vblank+0x1d4/0x1e0\n"
      "[  412.118233] RIP: 0010:nv_drm_atomic_commit+0x2b1/0x2d0 [nvidia_drm]\n");
  EXPECT_EQ(warning.get("gpu.xid"), nullptr) << warning.ids();
  // An oops in another module is not the NVIDIA driver's.
  const Result other = analyze(
      "[ 77.1] BUG: unable to handle kernel paging request at ffffffffc0a1b000\n"
      "[ 77.1] IP: [<ffffffffc0a1a7f1>] ext4_map_blocks+0x51/0x5e0 [ext4]\n");
  EXPECT_EQ(other.get("gpu.xid"), nullptr) << other.ids();
}

TEST(Rules, AFullFilesystemIsStorageFullAndAFullDevShmStaysSharedMemory) {
  // ENOSPC on a checkpoint path: the filesystem is full, with the path in the evidence.
  const Result ckpt = analyze(
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 88, in save\n"
      "OSError: [Errno 28] No space left on device: '/data/ckpt/step_1000/model.safetensors'\n");
  ASSERT_NE(ckpt.get("storage.full"), nullptr) << ckpt.ids();
  EXPECT_EQ(ckpt.get("storage.full")->severity, Severity::kError);
  ASSERT_FALSE(ckpt.get("storage.full")->evidence.empty());
  EXPECT_NE(ckpt.get("storage.full")->evidence[0].text.find("/data/ckpt/step_1000"), std::string::npos);
  // The same errno on /dev/shm (a container's 64 MB default) is shared memory, not a disk.
  const Result shm = analyze(
      "RuntimeError: unable to allocate shared memory(shm) for file </torch_41234_1234567890_0>: No space left on device (28)\n"
      "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n");
  EXPECT_NE(shm.get("limits.shm"), nullptr) << shm.ids();
  EXPECT_EQ(shm.get("storage.full"), nullptr) << "folded under the shared-memory finding: " << shm.ids();
  // EDQUOT is a quota, Kubernetes' eviction for ephemeral storage is disk pressure.
  EXPECT_EQ(analyze("OSError: [Errno 122] Disk quota exceeded: '/fsx/alice/run3/epoch_3.pt'\n").cause("storage.full"), "quota");
  EXPECT_EQ(analyze("Warning  Evicted  2m  kubelet  The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, "
                    "available: 2133Mi.\n").cause("storage.full"),
            "disk_pressure");
  // Other quotas and the healthy node condition are not a full disk.
  const Result quiet = analyze(
      "Error from server (Forbidden): pods \"train-0\" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8\n"
      "  DiskPressure     False   Mon, 01 Jan 2024 10:00:00 +0000   KubeletHasNoDiskPressure     kubelet has no disk pressure\n"
      "Tolerations:     node.kubernetes.io/disk-pressure:NoSchedule op=Exists\n"
      "/dev/nvme0n1p1  100G   98G  2.0G  98% /\n"
      // ENOSPC and EDQUOT that are kernel limits, not a filesystem: inotify watches, SysV semaphores,
      // the kernel keyring's quota.
      "inotify_add_watch(/data/logs) failed: No space left on device\n"
      "FATAL:  could not create semaphores: No space left on device\n"
      "container init caused \\\"join session keyring: create session key: disk quota exceeded\\\"\": unknown\n");
  EXPECT_EQ(quiet.get("storage.full"), nullptr) << quiet.ids();
}

TEST(Rules, DfShowingAFullDiskIsStorageFullButReadOnlyImagesAndRoomyVolumesAreNot) {
  // df -h: the root filesystem at 100% is full (error); 98% with under 2 GiB left is nearly full (warn).
  for (const auto& [rows, severity] :
       {std::pair<const char*, Severity>{"Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        58G   58G     0 100% /\n",
                                         Severity::kError},
        {"/dev/sda1        58G   57G  1.4G  98% /\n", Severity::kWarn}}) {
    const Result r = analyze(rows);
    ASSERT_NE(r.get("storage.full"), nullptr) << rows << r.ids();
    EXPECT_EQ(r.get("storage.full")->severity, severity) << rows;
  }
  // Snaps and ISO images mount loop devices at 100% by design; /boot/efi is not where a job writes; a large
  // volume at 98% with hundreds of GB left is not judged.
  const Result quiet = analyze(
      "/dev/loop3        56M   56M     0 100% /snap/core18/2829\n"
      "/dev/sr0         4.7G  4.7G     0 100% /media/cdrom\n"
      "/dev/sda15       105M  105M     0 100% /boot/efi\n"
      "/dev/md0          30T   29T  600G  98% /data\n"
      "/dev/nvme0n1p1  100G   98G  2.0G  98% /\n");
  EXPECT_EQ(quiet.get("storage.full"), nullptr) << quiet.ids();
}

TEST(Rules, AnNcclCudaCallWithAnInvalidArgumentIsTheProgramNotTheNetwork) {
  // NCCL's own WARN names the CUDA error: the generic "unhandled cuda error" is not read as a network problem.
  const Result r = analyze(
      "[1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'\n"
      "[1] NCCL INFO group.cc:242 -> 1\n"
      "Failed, NCCL error allreduceOp.cpp:308 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'\n");
  EXPECT_EQ(r.cause("job.unexplained_failure"), "cuda_api_error") << r.ids();
  EXPECT_EQ(r.get("nccl.network_config"), nullptr) << r.ids();
  // Without that WARN the bare code keeps its generic reading: a CUDA call inside NCCL failed.
  EXPECT_NE(analyze("RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n")
                .get("nccl.cuda_error"),
            nullptr);
}

TEST(Rules, AStandalonePtxasOlderThanItsPtxIsNotAnOldDriver) {
  // The driver's JIT ("ptxas application ptx input") refusing newer PTX is the driver.
  EXPECT_EQ(analyze("ptxas application ptx input, line 9; fatal   : Unsupported .version 8.4; current version is '8.0'\n")
                .cause("gpu.cuda_driver_insufficient"),
            "ptx_too_new");
  // A ptxas run on a file (Triton's bundled one, the toolkit's) is the toolchain, not the driver.
  EXPECT_EQ(analyze("ptxas /tmp/tmpqgu1f9dk.ptx, line 5; fatal   : Unsupported .version 8.6; current version is '8.5'\n")
                .get("gpu.cuda_driver_insufficient"),
            nullptr);
}

TEST(Rules, AnUnlicensedVgpuIsNamedUnlessALicenseIsAcquiredLater) {
  const char* missing =
      "Mon Apr 22 22:12:41 2024:<1>:Valid GRID license not found. GPU features and performance will be restricted. "
      "To enable full functionality please configure licensing details.\n";
  EXPECT_EQ(analyze(missing).cause("gpu.not_found"), "vgpu_unlicensed");
  const Result later = analyze(std::string(missing) +
                               "Mon Apr 22 22:12:45 2024:<1>:License acquired successfully. (Info: nls.example.com, "
                               "NVIDIA Virtual Compute Server; Expiry: 2024-7-21 22:12:45 GMT)\n");
  EXPECT_EQ(later.get("gpu.not_found"), nullptr) << later.ids();
}

TEST(Rules, NcclEntryPointQueryWithAnUnwrittenStatusIsNotAnOldDriver) {
  const std::string pfn = "node:30483:30483 [0] misc/cudawrap.cc:195 NCCL WARN CUDA some PFN functions not found in the library\n";
  EXPECT_EQ(analyze(pfn).get("gpu.cuda_driver_insufficient")->severity, Severity::kError);
  const Result unset = analyze("node:30483:30483 [0] misc/cudawrap.cc:130 NCCL WARN Retrieve cuGetErrorString failed with 0 status 32765\n" + pfn);
  ASSERT_NE(unset.get("gpu.cuda_driver_insufficient"), nullptr) << unset.ids();
  EXPECT_EQ(unset.get("gpu.cuda_driver_insufficient")->severity, Severity::kInfo);
}

TEST(Rules, APytestFailureIsATracebackAndAMissingFileLockIsTheMount) {
  // pytest prints a failed test's exception after "E" and spaces, not CPython's "Traceback" header.
  const Result pytest = analyze(
      "____________________________ test_vector_add ____________________________\n"
      "E                   RuntimeError: Internal Triton PTX codegen error:\n"
      "E                   ptxas fatal   : Ptx assembly aborted due to errors\n");
  EXPECT_EQ(pytest.cause("job.unexplained_failure"), "uncaught_exception") << pytest.ids();
  // ENOSYS from flock() on a Lustre client without -o flock; ENOLCK on NFS: the mount, not the program.
  EXPECT_EQ(analyze("  File \"/env/lib/python3.12/site-packages/filelock/_unix.py\", line 43, in _acquire\n"
                    "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
                    "OSError: [Errno 38] Function not implemented\n")
                .cause("storage.mount_options"),
            "no_file_locks");
  EXPECT_EQ(analyze("OSError: Unable to open file (unable to lock file, errno = 37, error message = 'No locks available')\n")
                .cause("storage.mount_options"),
            "no_file_locks");
  // ENOSYS from anything else is not a file lock.
  EXPECT_EQ(analyze("OSError: [Errno 38] Function not implemented: 'io_uring_setup'\n").get("storage.mount_options"), nullptr);
}

TEST(Rules, SocketsOverInfinibandWithoutLibibverbsAreAFallbackNotAChoice) {
  const std::string no_verbs = "node1:1234:1234 [0] NCCL INFO Failed to open libibverbs.so[.1]\n";
  const std::string ib0 = "node1:1234:1234 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.10.5<0>\n";
  const std::string two_nodes =
      "node1:1234:1234 [0] NCCL INFO comm 0x5581 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n";
  const Result r = analyze(no_verbs + "node1:1234:1234 [0] NCCL INFO NET/Socket : Using [0]ib0.8001:192.168.10.5<0>\n");
  ASSERT_EQ(r.cause("efa.fallback_tcp"), "ib_verbs_missing") << r.ids();
  EXPECT_EQ(r.get("efa.fallback_tcp")->severity, Severity::kInfo) << "one node does not use the network for collectives";
  EXPECT_EQ(r.get("efa.fallback_tcp")->facts.value("ifname", std::string()), "ib0.8001");
  // Across nodes every collective crosses the IPoIB sockets: a warning, by
  // NCCL's node count or by channels the network transport carries.
  for (const std::string& multi :
       {two_nodes, std::string("node1:1234:1290 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/Socket/0\n")}) {
    const Result m = analyze(no_verbs + ib0 + multi);
    ASSERT_NE(m.get("efa.fallback_tcp"), nullptr) << m.ids();
    EXPECT_EQ(m.get("efa.fallback_tcp")->severity, Severity::kWarn) << multi;
  }
  const Result one = analyze(
      no_verbs + ib0 + "node1:1234:1234 [0] NCCL INFO comm 0x5581 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n");
  EXPECT_EQ(one.get("efa.fallback_tcp")->severity, Severity::kInfo);
  // Across nodes too, sockets the user chose (NCCL_NET=Socket) stay info.
  const Result chosen = analyze("node1:1234:1234 [0] NCCL INFO NCCL_NET set by environment to Socket\n" + no_verbs + ib0 + two_nodes);
  ASSERT_NE(chosen.get("efa.fallback_tcp"), nullptr) << chosen.ids();
  EXPECT_EQ(chosen.get("efa.fallback_tcp")->severity, Severity::kInfo) << chosen.ids();
  // Sockets over ib0 with verbs loadable (NCCL_IB_DISABLE=1, NCCL_NET=Socket) are not judged by this rule.
  EXPECT_EQ(analyze(ib0).get("efa.fallback_tcp"), nullptr);
}

// A profiler refused the performance counters (the driver's default for
// non-administrators): named at info with the module parameter's remedy,
// never a node fault.
TEST(Rules, ProfilerCountersRestrictedToAdministratorsAreInfo) {
  for (const std::string line :
       {"==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
        "the target device 0.\n",
        "==708142== Warning: ERR_NVGPUCTRPERM - The user does not have permission to profile on the target device.\n",
        "E cupti_error_manager.cc:194] cuptiActivityEnable: error 35: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n"}) {
    const Result r = analyze(line);
    ASSERT_NE(r.get("gpu.profiling_restricted"), nullptr) << line << r.ids();
    EXPECT_EQ(r.get("gpu.profiling_restricted")->severity, Severity::kInfo) << line;
    EXPECT_NE(r.get("gpu.profiling_restricted")->remedy.at(1).find("NVreg_RestrictProfilingToAdminUsers=0"),
              std::string::npos);
  }
  EXPECT_EQ(analyze("RmProfilingAdminOnly: 0\n").get("gpu.profiling_restricted"), nullptr);
}

TEST(Rules, ADisplayWatchdogStoppingAKernelIsNamedAsTheWatchdog) {
  const Result r = analyze("RuntimeError: CUDA error: the launch timed out and was terminated\n");
  ASSERT_NE(r.get("gpu.xid"), nullptr) << r.ids();
  EXPECT_EQ(r.get("gpu.xid")->facts.value("cause", std::string()), "kernel_timeout");
  EXPECT_EQ(r.get("gpu.xid")->severity, Severity::kWarn);
  EXPECT_EQ(analyze("  Run time limit on kernels:                     Yes\n").get("gpu.xid"), nullptr);
}

TEST(LookAlikes, HealthyFrameworkAndDriverStartupStaysQuiet) {
  // What a healthy GPU host prints while TensorFlow, JAX, ONNX Runtime, numba, apptainer --nv,
  // nvidia-persistenced, the installer and the kernel's lockdown start up (round fifteen).
  const Result r = analyze(
      "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory\n"
      "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Cannot dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT, please make sure the missing libraries mentioned above are installed properly.\n"
      "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n"
      "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 78938 MB memory:  -> device: 0, name: NVIDIA H100 80GB HBM3, pci bus id: 0000:53:00.0, compute capability: 9.0\n"
      "INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform with name: \"rocm\". Available platform names are: CUDA\n"
      "INFO:jax._src.xla_bridge:Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory\n"
      "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:541 CreateExecutionProviderInstance] Failed to create TensorrtExecutionProvider. Please reference https://onnxruntime.ai/docs/execution-providers/TensorRT-ExecutionProvider.html#requirements to ensure all dependencies are met.\n"
      "numba.cuda.cudadrv.driver.CudaAPIError: [1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE\n"
      "WARNING: Could not find any 32-bit nv libraries on this host!\n"
      "nvidia-persistenced[1234]: Started (1234)\n"
      "nvidia-persistenced[1234]: device 0000:10:1c.0 - persistence mode enabled.\n"
      "-> Building kernel modules\n"
      "-> Checking to see whether the nvidia kernel module was successfully built\n"
      "[    0.000000] Kernel is locked down from EFI Secure Boot mode; see man kernel_lockdown.7\n"
      "cudaGetDeviceCount returned 8 devices\n"
      "Device=0 CANNOT Access Peer Device=1\n"
      "/sbin/ldconfig.real: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link\n");
  // numba's exception line is a program's uncaught exception, told as such at info (as with its
  // traceback); nothing here is a node finding.
  ASSERT_EQ(r.findings.size(), 1u) << r.ids();
  EXPECT_EQ(r.findings[0].id, "job.unexplained_failure");
  EXPECT_EQ(r.findings[0].severity, Severity::kInfo);
  EXPECT_EQ(r.findings[0].facts.value("detail", std::string()), "numba.cuda.cudadrv.driver.CudaAPIError");
}

TEST(Rules, AFrameworkOnTheCpuBesideAWorkingGpuIsAWarningNotANodeFault) {
  // The GPU was enumerated, the program lacks its CUDA libraries: warn, the node is fine.
  const Result tf = analyze(
      "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.\n");
  ASSERT_NE(tf.get("gpu.not_found"), nullptr) << tf.ids();
  EXPECT_EQ(tf.get("gpu.not_found")->severity, Severity::kWarn);
  EXPECT_EQ(tf.get("gpu.not_found")->facts.value("cause", std::string()), "cuda_libraries_missing");
  // Old JAX says this on every CPU-only host: info.
  const Result jax = analyze("WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n");
  expect_only_info(jax);
  ASSERT_NE(jax.get("gpu.not_found"), nullptr) << jax.ids();
  // apptainer --nv on a host without the driver's files: warn (login nodes print it too).
  const Result nv = analyze("WARNING: Could not find any nv files on this host!\n");
  ASSERT_NE(nv.get("gpu.not_found"), nullptr) << nv.ids();
  EXPECT_EQ(nv.get("gpu.not_found")->severity, Severity::kWarn);
  // The installer's Secure Boot explanation is the module rejected, not a build failure.
  const Result sb = analyze(
      "ERROR: The kernel module failed to load. Secure boot is enabled on this system, so this is likely because it was not signed by a key that is trusted by the kernel.\n");
  ASSERT_NE(sb.get("gpu.driver_kernel_mismatch"), nullptr) << sb.ids();
  EXPECT_EQ(sb.get("gpu.driver_kernel_mismatch")->facts.value("cause", std::string()), "secure_boot");
}

TEST(LookAlikes, HealthyFleetHealthCheckerOutputStaysQuiet) {
  // What the fleet health checkers print on a healthy GPU node (round sixteen): their PASS
  // lines, zero counters, settings that are not faults, and the warnings they leave as events.
  const Result r = analyze(
      "  AcceleratedHardwareReady   True    Mon, 03 Jun 2024 10:00:00 +0000   Mon, 03 Jun 2024 10:00:00 +0000   NvidiaGPUIsReady   Monitoring for the Nvidia GPU system is active\n"
      "  Warning  NvidiaXID161Warning  5m  eks-node-monitoring-agent  detected unknown XID-161 on the instance, review kernel logs for additional information.\n"
      "detected power usage outside of thresholds with severity code 1\n"
      "DCGM detected fieldID 112 with statusCode 0: Clocks Throttle Reason \"sw_power_cap\"\n"
      "detected 0 PCIe replays\n"
      "XIDComponent is healthy\n"
      "SXIDComponent is healthy\n"
      "8 devices support remapped rows and found no issue\n"
      "nvidia gpu count matching thresholds (8)\n"
      "all 8 GPU(s) were checked, no nvlink issue found\n"
      "nvlink threshold satisfied: require >=8 GPUs with all links active; got 8\n"
      "hw slowdown events frequency per minute 0.00 (total events per minute count 0) is less than threshold 0.60 for the last 10m0s\n"
      "NVIDIA H100 80GB HBM3 checked fabric state\n"
      "check_gpu_xid:  GPU XID error check passed.\n"
      "check_nvlink_status: GPU 0 has all nvlinks active.\n"
      "GPU id 0: No GPU row remap pending, row remap errors or row remap high count errors\n"
      "GPU id 0: Normal SRAM Uncorrectable/correctable ECC error count, (0,0,0,0)\n"
      "Warning: GPU 0 throttled, reason=0x0000000000000002\n"
      "check_gpu_bw: H2D test on GPU 0 has a bandwidth of 24.9 GB/s. Expected threshold 24 GB/s.\n"
      "No IB devices exceeded link flap threshold (3) in the last 24 hours\n"
      "Detected clocks event due to power violation in GPU 0.\n"
      "Found 0 faulty memory elements on GPU 0\n"
      "Detected 0 pcie_replay_counter for GPU 0\n");
  EXPECT_TRUE(r.findings.empty()) << r.ids();
}

TEST(Rules, FleetHealthCheckerVerdictsKeepTheFindingsSeverities) {
  // A row waiting for a reset is a warning, a failed remap an error, whoever reports it.
  const Result pending = analyze("0000:9b:00.0 needs reset (detected pending row remapping)\n");
  ASSERT_NE(pending.get("gpu.ecc"), nullptr) << pending.ids();
  EXPECT_EQ(pending.get("gpu.ecc")->severity, Severity::kWarn);
  EXPECT_EQ(pending.get("gpu.ecc")->facts.value("cause", std::string()), "remap_pending");
  const Result failed = analyze("ERROR:  nhc:  Health check failed:  check_gpu_ecc: GPU id 3: Row remap error. FaultCode: NHC2007\n");
  ASSERT_NE(failed.get("gpu.ecc"), nullptr) << failed.ids();
  EXPECT_EQ(failed.get("gpu.ecc")->severity, Severity::kError);
  EXPECT_EQ(failed.get("gpu.ecc")->facts.value("cause", std::string()), "remap_failed");
  // Non-fatal NVSwitch errors warn, like the kernel's non-fatal SXids; fatal ones are errors.
  const Result nonfatal = analyze("Detected nonfatal errors on NvSwitch 1 link 17\n");
  ASSERT_NE(nonfatal.get("gpu.nvlink"), nullptr) << nonfatal.ids();
  EXPECT_EQ(nonfatal.get("gpu.nvlink")->severity, Severity::kWarn);
  const Result fatal = analyze("Detected fatal NvSwitch SXID 20034\n");
  ASSERT_NE(fatal.get("gpu.fabric_manager"), nullptr) << fatal.ids();
  EXPECT_EQ(fatal.get("gpu.fabric_manager")->facts.value("cause", std::string()), "nvswitch_error");
  // The EKS agent's Xid condition goes through the Xid judge: Xid 48 is also an ECC error.
  const Result xid = analyze("detected XID-48 on the instance, review kernel logs for additional information.\n");
  ASSERT_NE(xid.get("gpu.xid"), nullptr) << xid.ids();
  ASSERT_NE(xid.get("gpu.ecc"), nullptr) << xid.ids();
  // An InfiniBand port a checker found down is the new cause ib_port_down, an error.
  const Result ib = analyze("ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port mlx5_0:1 is ACTIVE (LinkUp 400 Gb/sec).\n");
  ASSERT_NE(ib.get("nccl.network_config"), nullptr) << ib.ids();
  EXPECT_EQ(ib.get("nccl.network_config")->severity, Severity::kError);
  EXPECT_EQ(ib.get("nccl.network_config")->facts.value("cause", std::string()), "ib_port_down");
}


TEST(Rules, HostMachineChecksAreNamedByWhatTheDecodedLinesSay) {
  // The bare MCE notice is a machine check to decode ...
  const Result bare = analyze("[ 9.1] mce: [Hardware Error]: Machine check events logged\n");
  EXPECT_EQ(bare.cause("host.machine_check"), "machine_check") << bare.ids();
  EXPECT_EQ(bare.get("host.machine_check")->severity, Severity::kWarn);
  // ... and says nothing where EDAC decoded it: corrected DRAM errors.
  const Result ce = analyze("[ 9.1] mce: [Hardware Error]: Machine check events logged\n"
                            "[ 9.1] EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0 (channel:2 slot:0 page:0x0)\n");
  EXPECT_EQ(ce.cause("host.machine_check"), "memory_corrected") << ce.ids();
  EXPECT_EQ(ce.get("host.machine_check")->severity, Severity::kWarn);
  EXPECT_EQ(ce.get("host.machine_check")->facts.value("dimm", std::string()), "CPU#0Channel#2_DIMM#0");
  // A zero count is not an error.
  EXPECT_EQ(analyze("EDAC MC0: 0 CE memory read error on CPU_SrcID#0_MC#0_Chan#0_DIMM#0\n").get("host.machine_check"),
            nullptr);
  // A firmware-first memory record takes the record's own severity.
  const std::string ghes = "{1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 1\n"
                           "{1}[Hardware Error]: event severity: SEV\n"
                           "{1}[Hardware Error]:  section_type: memory error\n";
  const auto with = [&](const std::string& sev) {
    std::string s = ghes;
    s.replace(s.find("SEV"), 3, sev);
    return analyze(s);
  };
  const Result corrected = with("corrected"), fatal = with("fatal");
  EXPECT_EQ(corrected.cause("host.machine_check"), "memory_corrected") << corrected.ids();
  EXPECT_EQ(corrected.get("host.machine_check")->severity, Severity::kWarn);
  EXPECT_EQ(fatal.cause("host.machine_check"), "memory_uncorrected") << fatal.ids();
  EXPECT_EQ(fatal.get("host.machine_check")->severity, Severity::kError);
  // A process the kernel killed for a poisoned page died of that, not of /dev/shm.
  const Result sigbus = analyze(
      "[ 12.3] Memory failure: 0x2f88000: Sending SIGBUS to python:48211 due to hardware memory corruption\n"
      "Bus error (core dumped)\n");
  EXPECT_EQ(sigbus.cause("host.machine_check"), "memory_uncorrected") << sigbus.ids();
  EXPECT_EQ(sigbus.get("limits.shm"), nullptr) << sigbus.ids();
  EXPECT_NE(analyze("Bus error (core dumped)\n").get("limits.shm"), nullptr);
}

TEST(Rules, AnOomAProgramProbesForOnPurposeIsInfoAndItsFinalOneIsNot) {
  const std::string probe =
      "DEEPMD INFO    Adjust batch size from 1024 to 2048\n"
      "2023-01-09 18:26:14.728019: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out "
      "of memory trying to allocate 600.00MiB (rounded to 629145600)requested by op MatMul\n";
  const Result handled = analyze(probe);
  ASSERT_NE(handled.get("gpu.oom"), nullptr) << handled.ids();
  EXPECT_EQ(handled.get("gpu.oom")->severity, Severity::kInfo) << handled.ids();
  const Result real = analyze(probe + "deepmd.utils.errors.OutOfMemoryError: The callable still throws an out-of-memory "
                                      "(OOM) error even when batch size is 1!\n");
  ASSERT_NE(real.get("gpu.oom"), nullptr) << real.ids();
  EXPECT_EQ(real.get("gpu.oom")->severity, Severity::kWarn) << real.ids();
  // Without the probe the allocator's line is the OOM it always was.
  const Result plain = analyze(probe.substr(probe.find('\n') + 1));
  ASSERT_NE(plain.get("gpu.oom"), nullptr) << plain.ids();
  EXPECT_EQ(plain.get("gpu.oom")->severity, Severity::kWarn) << plain.ids();
}

}  // namespace
}  // namespace nodeprobe::diag
