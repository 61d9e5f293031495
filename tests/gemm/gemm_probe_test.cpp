// The whole probe against a CPU-emulated fake GPU: sections, judgements,
// findings, data and the report schema, without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "fake_backend.h"
#include "gemm_probe.h"
#include "nodeprobe/error.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe::gemm {
namespace {

using testing::FakeBackend;
using testing::FakeGpu;

struct ProbeRun {
  ProbeResult r;
  HostInfo host;
  std::string log;
};

GemmOptions small_options() {
  GemmOptions o = profile_defaults("quick");
  o.sizes = {256, 512};
  o.verify_size = 32;
  o.conv_batch = 2;
  o.train_cfg.batch = 16;
  o.train_cfg.in = 256;
  o.train_cfg.out = 16;
  return o;
}

ProbeRun run_probe(FakeBackend& b, const GemmOptions& o, const std::string& nvml = "/nonexistent/libnvml.so",
              double deadline = 0, HostInfo host = {}) {
  const FsRoot fs("/");
  FakeClock clock;
  b.clock = &clock;
  std::ostringstream log;
  ProbeContext ctx{fs, clock, log, false, deadline, &host};
  GemmProbe probe(b, o, nvml);
  ProbeRun out;
  out.r.name = "gemm";
  out.r.status = Status::kUnknown;
  probe.run(ctx, out.r);
  if (out.r.status == Status::kUnknown) out.r.status = status_from_checks(out.r);
  probe.fill_host(out.host);
  out.log = log.str();
  return out;
}

const Check* check(const ProbeResult& r, const std::string& id) {
  for (const auto& c : r.checks)
    if (c.id == id) return &c;
  return nullptr;
}

std::size_t metrics(const ProbeResult& r, const std::string& name,
                    const std::map<std::string, std::string>& labels = {}) {
  std::size_t n = 0;
  for (const auto& m : r.metrics) {
    if (m.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : labels) all = all && m.labels.count(k) && m.labels.at(k) == v;
    n += all;
  }
  return n;
}

std::string status_of(const ProbeResult& r, const std::string& id) {
  const Check* c = check(r, id);
  return c ? std::string(to_string(c->status)) : "missing";
}

TEST(GemmProbe, HealthyNodePassesEverySection) {
  FakeBackend b;
  const ProbeRun run = run_probe(b, small_options());
  EXPECT_EQ(run.r.status, Status::kPass) << run.log;
  for (const auto& c : run.r.checks) {
    // Without NVML the PCIe link cannot be read: that check alone is skipped.
    const bool pcie = c.id.find(".pcie") != std::string::npos;
    EXPECT_EQ(c.status, pcie ? Status::kSkip : Status::kPass) << c.id << ": " << c.detail;
  }
  // Every precision x size x GPU timed, verified and judged.
  EXPECT_EQ(metrics(run.r, "gemm.tflops"), 2u * 5u * 2u);
  EXPECT_EQ(metrics(run.r, "gemm.tflops", {{"gpu", "1"}, {"precision", "bf16"}, {"size", "512"}}), 1u);
  EXPECT_EQ(metrics(run.r, "gemm.pct_of_peak", {{"gpu", "0"}, {"precision", "fp8"}}), 2u);
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.verify.fp8"), "pass");
  EXPECT_EQ(status_of(run.r, "gpu1.gemm.speed.bf16"), "pass");
  EXPECT_EQ(metrics(run.r, "gemm.speedup_vs_fp32", {{"gpu", "0"}, {"precision", "bf16"}}), 1u);
  // Conv: 3 layers x 3 precisions x passes (stem without data gradient) per GPU.
  EXPECT_EQ(metrics(run.r, "conv.tflops", {{"gpu", "0"}}), 3u * (2 + 3 + 3));
  EXPECT_EQ(status_of(run.r, "gpu0.conv.verify.bf16"), "pass");
  EXPECT_EQ(metrics(run.r, "memory.device_bandwidth", {{"gpu", "1"}}), 3u);
  EXPECT_EQ(metrics(run.r, "memory.host_bandwidth", {{"gpu", "1"}}), 4u);
  EXPECT_EQ(metrics(run.r, "memory.pinned_speedup", {{"gpu", "0"}, {"direction", "h2d"}}), 1u);
  EXPECT_EQ(status_of(run.r, "gpu0.train.loss_falls"), "pass");
  EXPECT_EQ(status_of(run.r, "gpu0.train.matches_cpu"), "pass");
  EXPECT_EQ(metrics(run.r, "p2p.bandwidth"), 2u);
  // Every metric declared with its axes; every timed one carries its repetitions' spread.
  for (const auto& problem : descriptor_problems(run.r)) ADD_FAILURE() << problem;
  for (const auto& m : run.r.metrics)
    if (m.name == "gemm.tflops" || m.name == "conv.tflops" || m.name == "memory.device_bandwidth") {
      EXPECT_GE(m.stats->n, 2u) << m.name;
    }
  EXPECT_EQ(metrics(run.r, "gemm.peak_tflops", {{"gpu", "0"}, {"precision", "bf16"}}), 1u);
  // Data: per GPU and the P2P matrix.
  ASSERT_EQ(run.r.data["gpus"].size(), 2u);
  EXPECT_EQ(run.r.data["gpus"][0]["model"], "H100-SXM");
  EXPECT_TRUE(run.r.data["p2p"]["bandwidth_gbs"][0][0].is_null());
  EXPECT_NEAR(run.r.data["p2p"]["bandwidth_gbs"][0][1].get<double>(), 200, 1);
  EXPECT_EQ(run.r.data["cuda"]["runtime_version"], "12.4");
  // Host block.
  EXPECT_EQ(run.host.cuda_runtime, "12.4");
  ASSERT_EQ(run.host.gpus.size(), 2u);
  EXPECT_EQ(run.host.gpus[1]["name"], "NVIDIA H100 80GB HBM3");
}

TEST(GemmProbe, ReportIsSchemaValid) {
  FakeBackend b;
  ProbeRun run = run_probe(b, small_options());
  Report rep = new_report("nodeprobe-gemm", 0, nullptr, "");
  rep.host = run.host;
  rep.probes.push_back(run.r);
  rep.findings = findings_from_checks(rep.probes);
  rep.verdict = compute_verdict(rep);
  bool available = false;
  const std::string errors = nodeprobe::testing::schema_errors(nlohmann::json::parse(dump_report(rep)), &available);
  if (!available) GTEST_SKIP() << "no schema validator in this build";
  EXPECT_EQ(errors, "");
}

TEST(GemmProbe, SlowGpuWarnsAndStandsOut) {
  FakeBackend b;
  b.gpus[1].tflops[Precision::kBf16] = 450;  // 45 % of 989.5, and 57 % of its neighbour
  const ProbeRun run = run_probe(b, small_options());
  EXPECT_EQ(run.r.status, Status::kWarn);
  const Check* slow = check(run.r, "gpu1.gemm.speed.bf16");
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->status, Status::kWarn);
  EXPECT_EQ(slow->finding, "gpu.compute_slow");
  EXPECT_NE(slow->observed.find("% of 989.5"), std::string::npos) << slow->observed;
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.speed.bf16"), "pass");
  // With only two GPUs the median is their mean: 450 is 73 % of 620.
  EXPECT_EQ(status_of(run.r, "gpu1.gemm.outlier.bf16"), "warn");
  EXPECT_TRUE(run.r.data["gemm_across_gpus"].contains("bf16"));
}

TEST(GemmProbe, WrongResultsFail) {
  FakeBackend b;
  b.gpus[0].corrupt_gemm = true;
  const ProbeRun run = run_probe(b, small_options());
  EXPECT_EQ(run.r.status, Status::kFail);
  const Check* c = check(run.r, "gpu0.gemm.verify.fp16");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kFail);
  EXPECT_EQ(c->finding, "gpu.compute_wrong");
  EXPECT_NE(c->detail.find("first bad element 7"), std::string::npos);
  EXPECT_EQ(status_of(run.r, "gpu1.gemm.verify.fp16"), "pass");
  const auto findings = findings_from_checks({run.r});
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().id, "gpu.compute_wrong");
  EXPECT_EQ(findings.front().severity, Severity::kError);
}

TEST(GemmProbe, TrainingLossThatDoesNotFallFails) {
  FakeBackend b;
  b.gpus[1].flat_loss = true;
  const ProbeRun run = run_probe(b, small_options());
  EXPECT_EQ(run.r.status, Status::kFail);
  EXPECT_EQ(status_of(run.r, "gpu1.train.loss_falls"), "fail");
  EXPECT_EQ(status_of(run.r, "gpu1.train.matches_cpu"), "fail");
  EXPECT_EQ(status_of(run.r, "gpu0.train.loss_falls"), "pass");
}

TEST(GemmProbe, CountAndModelAgainstInstanceType) {
  FakeBackend b;
  GemmOptions o = small_options();
  o.gemm = o.conv = o.memory = o.train = o.p2p = false;
  o.expect_instance = "p4d.24xlarge";  // 8 x A100 expected, 2 x H100 present
  const ProbeRun run = run_probe(b, o);
  const Check* c = check(run.r, "gpu.count");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kFail);
  EXPECT_EQ(c->finding, "gpu.count_mismatch");
  EXPECT_EQ(c->observed, "2 x NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c->expected, "8 x A100 (instance type p4d.24xlarge)");
  // The host's own instance type is used when --expect is not given.
  HostInfo host;
  host.instance_type = "p5.48xlarge";
  o.expect_instance.clear();
  o.expect_gpus = 2;  // an explicit count wins over the table's 8
  const ProbeRun run2 = run_probe(b, o, "/nonexistent/libnvml.so", 0, host);
  EXPECT_EQ(status_of(run2.r, "gpu.count"), "pass");
}

TEST(GemmProbe, SectionErrorsAreContained) {
  FakeBackend b;
  b.gpus[0].oom_conv = true;
  const ProbeRun run = run_probe(b, small_options());
  const Check* c = check(run.r, "gpu0.conv");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kError);
  EXPECT_EQ(c->finding, "gpu.oom");
  EXPECT_NE(c->observed.find("cudaErrorMemoryAllocation"), std::string::npos);
  EXPECT_EQ(metrics(run.r, "memory.device_bandwidth", {{"gpu", "0"}}), 3u);  // later sections ran
  EXPECT_EQ(status_of(run.r, "gpu1.conv.verify.fp16"), "pass");
  EXPECT_EQ(run.r.status, Status::kError);
}

TEST(GemmProbe, LayerCudnnCannotRunIsSkippedNotFatal) {
  FakeBackend b;
  b.gpus.resize(1);
  b.gpus[0].no_stem_algo = true;
  GemmOptions o = small_options();
  o.gemm = o.memory = o.train = false;
  const ProbeRun run = run_probe(b, o);
  EXPECT_EQ(status_of(run.r, "gpu0.conv.conv1_7x7.fp16.forward"), "skip");
  EXPECT_EQ(metrics(run.r, "conv.tflops", {{"layer", "conv1_7x7"}}), 0u);
  EXPECT_EQ(metrics(run.r, "conv.tflops", {{"layer", "res2_3x3"}}), 3u * 3u);
  const Check* v = check(run.r, "gpu0.conv.verify.fp16");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->status, Status::kSkip);  // partly verified: not a pass
  EXPECT_NE(v->detail.find("not verified"), std::string::npos);
  EXPECT_EQ(run.r.status, Status::kPass);  // skips do not fail the node
}

TEST(GemmProbe, UnreadableGpuFailsOthersStillRun) {
  FakeBackend b;
  b.gpus[0].info_fails = true;
  GemmOptions o = small_options();
  o.conv = o.memory = o.train = false;
  const ProbeRun run = run_probe(b, o);
  const Check* c = check(run.r, "gpu0.info");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kFail);
  EXPECT_EQ(c->finding, "gpu.xid");
  EXPECT_EQ(status_of(run.r, "gpu1.gemm.verify.bf16"), "pass");
  EXPECT_EQ(run.r.status, Status::kFail);
}

TEST(GemmProbe, NearDeadlineSkipsSections) {
  FakeBackend b;
  const ProbeRun run = run_probe(b, small_options(), "/nonexistent/libnvml.so", /*deadline=*/3);
  EXPECT_EQ(status_of(run.r, "gpu0.gemm"), "skip");
  EXPECT_EQ(status_of(run.r, "gpu1.train"), "skip");
  EXPECT_EQ(status_of(run.r, "gpu.p2p"), "skip");
  EXPECT_EQ(b.time_gemm_calls, 0);
}

TEST(GemmProbe, SectionThatCannotFinishBeforeTheDeadlineIsSkipped) {
  FakeBackend b;
  b.seconds_per_gemm = 5;  // 5 precisions x 2 sizes: the gemm section takes 50 s
  GemmOptions o = small_options();
  o.conv = o.memory = o.p2p = false;
  const ProbeRun run = run_probe(b, o, "/nonexistent/libnvml.so", /*deadline=*/100);
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.verify.bf16"), "pass");
  // 50 s left, 1.5 x 50 s needed: GPU 1's sweep would not finish.
  const Check* c = check(run.r, "gpu1.gemm");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kSkip);
  EXPECT_EQ(status_of(run.r, "gpu1.train.loss_falls"), "pass");  // quick sections still run
  EXPECT_EQ(b.time_gemm_calls, 10);
}

TEST(GemmProbe, OlderGpusSkipWhatTheyLack) {
  FakeBackend b;
  b.gpus.resize(1);
  b.gpus[0].name = "Tesla V100-SXM2-16GB";
  b.gpus[0].cc_major = 7;
  b.gpus[0].tflops[Precision::kFp16] = 60;  // 48 % of 125
  b.kernels = false;
  const ProbeRun run = run_probe(b, small_options());
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.bf16"), "skip");
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.tf32"), "skip");
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.fp8"), "skip");
  EXPECT_EQ(status_of(run.r, "gpu0.conv.bf16"), "skip");
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.speed.fp16"), "warn");
  EXPECT_EQ(status_of(run.r, "gpu0.memory.copy"), "skip");  // no nvcc kernels
  EXPECT_EQ(metrics(run.r, "memory.device_bandwidth", {{"kernel", "memcpy"}}), 1u);
  EXPECT_FALSE(run.r.data.contains("p2p"));  // one GPU
}

TEST(GemmProbe, PrecisionCublasCannotRunIsSkipped) {
  FakeBackend b;
  b.gpus.resize(1);
  b.gpus[0].name = "NVIDIA L4";
  b.gpus[0].cc_major = 8;
  b.gpus[0].cc_minor = 9;
  b.gpus[0].no_kernel = {Precision::kFp8};
  GemmOptions o = small_options();
  o.conv = o.memory = o.train = false;
  const ProbeRun run = run_probe(b, o);
  const Check* c = check(run.r, "gpu0.gemm.fp8");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kSkip);
  EXPECT_NE(c->detail.find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos);
  EXPECT_EQ(check(run.r, "gpu0.gemm.verify.fp8"), nullptr);
  EXPECT_EQ(metrics(run.r, "gemm.speedup_vs_fp32", {{"precision", "fp8"}}), 0u);
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.verify.bf16"), "pass");
  EXPECT_EQ(run.r.status, Status::kPass);
}

TEST(GemmProbe, UnknownGpuGetsTflopsWithoutJudgement) {
  FakeBackend b;
  b.gpus.resize(1);
  b.gpus[0].name = "NVIDIA GeForce RTX 4090";
  b.gpus[0].cc_major = 8;
  b.gpus[0].cc_minor = 9;
  const ProbeRun run = run_probe(b, small_options());
  EXPECT_EQ(metrics(run.r, "gemm.tflops"), 10u);
  EXPECT_EQ(metrics(run.r, "gemm.pct_of_peak"), 0u);
  EXPECT_EQ(metrics(run.r, "memory.device_pct_of_spec"), 0u);
  const Check* c = check(run.r, "gpu0.gemm.speed.bf16");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kPass);
  EXPECT_NE(c->detail.find("unknown GPU"), std::string::npos);
  EXPECT_EQ(run.r.data["gpus"][0]["model"], "unknown");
}

TEST(GemmProbe, NoGpuIsSkipOrFail) {
  FakeBackend b;
  b.env.rc = 35;
  b.env.error_name = "cudaErrorInsufficientDriver";
  b.env.error_string = "CUDA driver version is insufficient for CUDA runtime version";
  b.env.driver_version = 0;
  const ProbeRun skip = run_probe(b, small_options());
  EXPECT_EQ(skip.r.status, Status::kSkip);
  EXPECT_NE(skip.r.reason.find("driver version 0"), std::string::npos);
  EXPECT_EQ(status_of(skip.r, "gpu.cuda_init"), "skip");
  EXPECT_EQ(skip.host.cuda_runtime, "12.4");
  EXPECT_TRUE(skip.host.gpus.empty());
  GemmOptions o = small_options();
  o.expect_gpus = 1;
  const ProbeRun fail = run_probe(b, o);
  EXPECT_EQ(fail.r.status, Status::kFail);
  const Check* c = check(fail.r, "gpu.cuda_init");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->finding, "gpu.not_found");
}

TEST(GemmProbe, BadDeviceIndexIsInputError) {
  FakeBackend b;
  GemmOptions o = small_options();
  o.devices = {5};
  EXPECT_THROW(run_probe(b, o), InputError);
  o.devices = {1};
  o.conv = o.memory = o.train = false;
  const ProbeRun run = run_probe(b, o);
  ASSERT_EQ(run.r.data["gpus"].size(), 1u);
  EXPECT_EQ(run.r.data["gpus"][0]["index"], 1);
  EXPECT_EQ(run.host.gpus.size(), 2u);  // the host block lists every GPU
}

TEST(GemmProbe, NvmlInventoryChecksWithFakeDriver) {
  ::setenv("FAKE_NVML_GPUS", "2", 1);
  ::setenv("FAKE_NVML_NAME", "NVIDIA H100 80GB HBM3", 1);
  ::setenv("FAKE_NVML_PCIE", "4,16,5,16", 1);  // Gen4 under load on a Gen5 GPU
  ::setenv("FAKE_NVML_ECC_UNCORRECTED", "1", 1);
  FakeBackend b;
  GemmOptions o = small_options();
  o.gemm = o.conv = o.train = o.p2p = false;
  o.expect_gpus = 2;
  const ProbeRun run = run_probe(b, o, NODEPROBE_FAKE_NVML);
  for (const char* v : {"FAKE_NVML_GPUS", "FAKE_NVML_NAME", "FAKE_NVML_PCIE", "FAKE_NVML_ECC_UNCORRECTED"})
    ::unsetenv(v);
  EXPECT_EQ(run.r.data["nvml"]["loaded"], true);
  EXPECT_EQ(run.r.data["gpus"][1]["nvml_index"], 1);
  EXPECT_EQ(status_of(run.r, "gpu.count"), "pass");
  const Check* pcie = check(run.r, "gpu0.pcie");
  ASSERT_TRUE(pcie);
  EXPECT_EQ(pcie->status, Status::kWarn);
  EXPECT_EQ(pcie->finding, "gpu.pcie_degraded");
  EXPECT_EQ(pcie->observed, "Gen4 x16 under load");
  const Check* ecc = check(run.r, "gpu1.ecc");
  ASSERT_TRUE(ecc);
  EXPECT_EQ(ecc->status, Status::kFail);
  EXPECT_EQ(ecc->finding, "gpu.ecc");
  EXPECT_NE(find_finding_kind("gpu.ecc"), nullptr);
  EXPECT_EQ(run.host.driver, "550.54.15");
}

// Sets FAKE_NVML_* for one test and clears them after.
class FakeNvmlEnv {
 public:
  explicit FakeNvmlEnv(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~FakeNvmlEnv() {
    for (const auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

TEST(GemmProbe, MigSliceJudgedByItsShareWithItsGpusChecks) {
  const FakeNvmlEnv env({{"FAKE_NVML_GPUS", "1"}, {"FAKE_NVML_MIG_MODE", "1"},
                         {"FAKE_NVML_MIG", "3g.20gb,3g.20gb"}, {"FAKE_NVML_ECC_UNCORRECTED", "1"}});
  FakeBackend b;
  b.gpus.resize(2);
  for (int i = 0; i < 2; ++i) {
    FakeGpu& g = b.gpus[static_cast<std::size_t>(i)];
    g.name = "NVIDIA A100-SXM4-40GB MIG 3g.20gb";
    g.uuid = testing::fake_mig_uuid(0, i);
    g.cc_major = 8;
    g.sm_count = 42;  // a 3g slice of the A100's 108 SMs
    g.tflops[Precision::kBf16] = 100;  // 82 % of the slice's 121 (whole GPU: 32 % of 312)
    g.tflops[Precision::kFp16] = 60;   // 49 % of the slice's share: slow
  }
  GemmOptions o = small_options();
  o.conv = o.train = o.p2p = false;
  o.precisions = {Precision::kBf16, Precision::kFp16};
  const ProbeRun run = run_probe(b, o, NODEPROBE_FAKE_NVML);
  // Judged against 42/108 of the A100's peak, and said so.
  const Check* bf16 = check(run.r, "gpu0.gemm.speed.bf16");
  ASSERT_TRUE(bf16);
  EXPECT_EQ(bf16->status, Status::kPass) << bf16->observed;
  EXPECT_NE(bf16->detail.find("MIG slice 3g.20gb: by share: 42 of the A100-SXM4-40GB's 108 SMs"),
            std::string::npos) << bf16->detail;
  EXPECT_EQ(status_of(run.r, "gpu1.gemm.speed.fp16"), "warn");
  EXPECT_EQ(run.r.data["gpus"][0]["mig"]["profile"], "3g.20gb");
  // Memory bandwidth of a slice is not judged against the GPU's HBM figure.
  EXPECT_EQ(metrics(run.r, "memory.device_pct_of_spec"), 0u);
  // The MIG UUID maps to its GPU: ECC and PCIe are the GPU's, not silently skipped.
  EXPECT_EQ(run.r.data["gpus"][1]["nvml_index"], 0);
  EXPECT_EQ(status_of(run.r, "gpu0.ecc"), "fail");
  EXPECT_EQ(status_of(run.r, "gpu1.pcie"), "pass");
  ASSERT_EQ(run.r.data["nvml"]["gpus"][0]["mig_devices"].size(), 2u);
  EXPECT_EQ(run.host.gpus[0]["mig_devices"][1]["uuid"], testing::fake_mig_uuid(0, 1));
}

TEST(GemmProbe, MigSliceOfAGpuWithoutSmCountIsNotJudged) {
  FakeBackend b;
  b.gpus.resize(1);
  b.gpus[0].name = "NVIDIA GeForce RTX 4090 MIG 1g.5gb";  // no row for the parent
  b.gpus[0].cc_major = 8;
  b.gpus[0].cc_minor = 9;
  GemmOptions o = small_options();
  o.conv = o.train = o.memory = false;
  const ProbeRun run = run_probe(b, o);
  EXPECT_EQ(metrics(run.r, "gemm.pct_of_peak"), 0u);
  EXPECT_EQ(run.r.data["gpus"][0]["mig"]["judged"], "not judged: unknown GPU model");
  EXPECT_EQ(status_of(run.r, "gpu0.gemm.speed.bf16"), "pass");
}

TEST(GemmProbe, VoltaUnderCuda13SkipsEverySection) {
  FakeBackend b;
  b.env.runtime_version = 13000;
  b.env.driver_version = 13000;
  b.gpus.resize(2);
  for (auto& g : b.gpus) {
    g.name = "Tesla V100-SXM2-32GB";
    g.cc_major = 7;
    g.cc_minor = 0;
  }
  GemmOptions o = small_options();
  o.expect_instance = "p3dn.24xlarge";
  o.expect_gpus = 2;
  const ProbeRun run = run_probe(b, o);
  EXPECT_EQ(run.r.status, Status::kSkip);
  EXPECT_NE(run.r.reason.find("this build does not support Volta; build with CUDA 12.x"), std::string::npos)
      << run.r.reason;
  for (const char* id : {"gpu0.gemm", "gpu0.conv", "gpu0.memory", "gpu1.train"}) {
    const Check* c = check(run.r, id);
    ASSERT_TRUE(c) << id;
    EXPECT_EQ(c->status, Status::kSkip) << id;
    EXPECT_NE(c->detail.find("does not support Volta"), std::string::npos) << id;
  }
  EXPECT_EQ(b.time_gemm_calls, 0);
  EXPECT_EQ(metrics(run.r, "p2p.bandwidth"), 0u);
  EXPECT_EQ(status_of(run.r, "gpu.count"), "pass");  // the node itself is as expected
  // The same GPUs with a CUDA 12 build run normally.
  b.env.runtime_version = 12080;
  const ProbeRun cuda12 = run_probe(b, o);
  EXPECT_NE(cuda12.r.status, Status::kSkip);
  EXPECT_GT(b.time_gemm_calls, 0);
  // Turing (7.5) is still supported by CUDA 13.
  b.env.runtime_version = 13000;
  for (auto& g : b.gpus) {
    g.name = "Tesla T4";
    g.cc_minor = 5;
  }
  EXPECT_EQ(check(run_probe(b, o).r, "gpu0.gemm"), nullptr);
}

TEST(GemmProbe, MissingCublasIsNamedAndOtherSectionsRun) {
  FakeBackend b;
  b.gpus.resize(1);
  b.blas_missing = "cannot load libcublasLt.so.13: libcublasLt.so.13: cannot open shared object file";
  const ProbeRun run = run_probe(b, small_options());
  EXPECT_EQ(run.r.status, Status::kError);
  EXPECT_NE(run.r.reason.find("libcublasLt.so.13"), std::string::npos) << run.r.reason;
  for (const char* id : {"gpu0.gemm", "gpu0.train"}) {
    const Check* c = check(run.r, id);
    ASSERT_TRUE(c) << id;
    EXPECT_EQ(c->status, Status::kError);
    EXPECT_NE(c->observed.find("libcublasLt.so.13"), std::string::npos);
  }
  EXPECT_EQ(b.time_gemm_calls, 0);
  EXPECT_EQ(status_of(run.r, "gpu0.conv.verify.fp16"), "pass");  // cuDNN needs no cuBLAS
  EXPECT_EQ(metrics(run.r, "memory.device_bandwidth"), 3u);
  EXPECT_EQ(run.r.data["cuda"]["libraries"][0]["loaded"], false);
}

TEST(GemmProbe, MissingCudnnSkipsConvWithTheReason) {
  FakeBackend b;
  b.gpus.resize(1);
  b.cudnn = false;
  GemmOptions o = small_options();
  o.gemm = o.memory = o.train = false;
  const ProbeRun run = run_probe(b, o);
  const Check* c = check(run.r, "gpu0.conv");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kSkip);
  EXPECT_EQ(c->detail, "no cuDNN in this fake");
}

TEST(GemmProbe, TimedWindowSamplesClocksPowerAndThrottling) {
  const FakeNvmlEnv env({{"FAKE_NVML_GPUS", "1"}, {"FAKE_NVML_NAME", "NVIDIA H100 80GB HBM3"},
                         {"FAKE_NVML_THROTTLE", "0x41"}, {"FAKE_NVML_POWER_W", "500"}});
  FakeBackend b;
  b.gpus.resize(1);
  b.busy_polls = 60;  // 5 ms apart: a 0.3 s window, long enough to read power in
  b.gpus[0].tflops[Precision::kBf16] = 400;  // 40 % of 989.5: slow
  GemmOptions o = small_options();
  o.conv = o.memory = o.train = false;
  o.precisions = {Precision::kBf16};
  const ProbeRun run = run_probe(b, o, NODEPROBE_FAKE_NVML);
  const Json& w = run.r.data["gpus"][0]["gemm_busy_window_bf16"];
  EXPECT_EQ(w["samples"], 60);  // sampled for as long as the timed work ran
  EXPECT_EQ(w["sm_clock_min_mhz"], 1410);
  EXPECT_EQ(w["throttle_reasons"], "HwThermalSlowdown");  // GpuIdle left out
  EXPECT_EQ(w["power_instant_max_w"], 500.0);
  // The energy counter's mean over the window, not the 1 s average.
  EXPECT_NEAR(w["power_energy_counter_w"].get<double>(), 500, 75);
  const Check* c = check(run.r, "gpu0.gemm.speed.bf16");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kWarn);
  EXPECT_NE(c->observed.find("while throttled (HwThermalSlowdown)"), std::string::npos) << c->observed;
  EXPECT_NE(c->fix.find("cooling"), std::string::npos);
  EXPECT_NE(c->detail.find("SM clock 1410-1410 MHz"), std::string::npos) << c->detail;
}

TEST(GemmOptions, ProfilesAndValidation) {
  EXPECT_EQ(profile_defaults("quick").sizes, (std::vector<int>{2048, 8192}));
  EXPECT_EQ(profile_defaults("full").sizes.back(), 8192);
  EXPECT_THROW(profile_defaults("huge"), InputError);
  GemmOptions o = profile_defaults("quick");
  EXPECT_EQ(validate(o), "");
  o.sizes = {1000};
  EXPECT_NE(validate(o).find("multiple of 16"), std::string::npos);
  o = profile_defaults("quick");
  o.slow_pct = 120;
  EXPECT_NE(validate(o), "");
}

}  // namespace
}  // namespace nodeprobe::gemm
