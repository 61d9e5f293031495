// Instance-type expectations: the built-in data, validation, rule reduction
// and judging against fixture hardware trees.
#include <gtest/gtest.h>

#include <filesystem>

#include "expectations.h"
#include "inventory.h"
#include "nodeprobe/finding_ids.h"
#include "nodeprobe/metric_descriptor.h"
#include "test_support.h"

namespace nodeprobe::diag {
namespace {

using nodeprobe::testing::TempDir;
using nodeprobe::testing::write_file;

Metric m(const std::string& name, double v, Labels labels) {
  return Metric{name, v, "", Better::kHigher, std::move(labels), std::nullopt};
}

/// A fixture root with `gpus` GPUs of `model` and `efa` EFA devices.
void fake_hw(const TempDir& root, int gpus, const std::string& model, int efa) {
  for (int i = 0; i < gpus; ++i)
    write_file(root.file("proc/driver/nvidia/gpus/0000:1" + std::to_string(i) + ":00.0/information"),
               "Model: \t\t NVIDIA " + model + "-SXM4-40GB\nIRQ:   \t\t 100\n");
  std::filesystem::create_directories(root.file("sys/bus/pci/drivers/efa"));
  std::filesystem::create_directories(root.file("sys/bus/pci/drivers/mlx5_core"));
  for (int i = 0; i < efa + 1; ++i) {
    const std::string dev = root.file("sys/class/infiniband/rdmap" + std::to_string(i) + "s0/device");
    std::filesystem::create_directories(dev);
    // The last one is a non-EFA RDMA device: it must not count.
    std::filesystem::create_symlink(root.file(i < efa ? "sys/bus/pci/drivers/efa" : "sys/bus/pci/drivers/mlx5_core"),
                                    dev + "/driver");
  }
}

const Check* check(const ProbeResult& p, const std::string& id) {
  for (const auto& c : p.checks)
    if (c.id == id) return &c;
  return nullptr;
}

TEST(Expectations, BuiltInDataCoversTheFleetAndValidates) {
  const Expectations& e = builtin_expectations();
  for (const char* t : {"g4dn.xlarge", "g5.48xlarge", "p3.16xlarge", "p3dn.24xlarge", "p4d.24xlarge",
                        "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge"})
    ASSERT_TRUE(e.types.count(t)) << t;
  EXPECT_EQ(*e.types.at("p4d.24xlarge").gpu_count, 8);
  EXPECT_EQ(e.types.at("p4d.24xlarge").gpu_model, "A100");
  EXPECT_EQ(*e.types.at("p5.48xlarge").efa_devices, 32);
  EXPECT_GT(e.types.at("p5.48xlarge").min.at("gemm_bf16_tflops"), 500);
  for (const auto& [id, r] : e.rules) {
    if (!r.finding.empty()) {
      EXPECT_TRUE(find_finding_kind(r.finding)) << id;
    }
  }
}

TEST(Expectations, ValidationRejectsUnknownKeysRulesAndFindings) {
  const std::string head = R"({"schema":"nodeprobe.instance_types/1","rules":{"r":{"probe":"gemm","metric":"t"}},)";
  EXPECT_NO_THROW(parse_expectations(head + R"("instance_types":{"x.large":{"min":{"r":1}}}})", "t"));
  EXPECT_THROW(parse_expectations(head + R"("instance_types":{"x.large":{"gpus":1}}})", "t"), ExpectationsError);
  EXPECT_THROW(parse_expectations(head + R"("instance_types":{"x.large":{"min":{"nope":1}}}})", "t"), ExpectationsError);
  EXPECT_THROW(parse_expectations(R"({"schema":"nodeprobe.instance_types/1","rules":{"r":{"probe":"g","metric":"t","finding":"gpu.nope"}},"instance_types":{}})", "t"),
               ExpectationsError);
  EXPECT_THROW(parse_expectations(R"({"schema":"nodeprobe.instance_types/1","rules":{"r":{"probe":"g","metric":"t","status":"pass"}},"instance_types":{}})", "t"),
               ExpectationsError);
  EXPECT_THROW(parse_expectations(R"({"schema":"other/1","instance_types":{}})", "t"), ExpectationsError);
  EXPECT_THROW(parse_expectations("{", "t"), ExpectationsError);
}

TEST(Expectations, RuleTakesBestSizePerGpuThenSlowestGpu) {
  Report r;
  ProbeResult g;
  g.name = "gemm";
  g.metrics = {m("gemm.tflops", 200, {{"precision", "bf16"}, {"gpu", "0"}, {"m", "4096"}}),
               m("gemm.tflops", 260, {{"precision", "bf16"}, {"gpu", "0"}, {"m", "8192"}}),
               m("gemm.tflops", 150, {{"precision", "bf16"}, {"gpu", "1"}, {"m", "4096"}}),
               m("gemm.tflops", 240, {{"precision", "bf16"}, {"gpu", "1"}, {"m", "8192"}}),
               m("gemm.tflops", 999, {{"precision", "fp16"}, {"gpu", "1"}})};
  r.probes.push_back(g);
  const ExpectRule& rule = builtin_expectations().rules.at("gemm_bf16_tflops");
  std::size_t n = 0;
  EXPECT_EQ(*rule_value(r, rule, &n), 240);
  EXPECT_EQ(n, 4u);
  const ExpectRule& nccl = builtin_expectations().rules.at("nccl_busbw");
  EXPECT_FALSE(rule_value(r, nccl));
}

TEST(Expectations, ReductionAndUnitComeFromTheMetricsDescriptor) {
  ExpectRule rule;
  rule.probe = "io";
  rule.metric = "batch_latency";
  rule.group_by = "worker";
  Report r;
  ProbeResult p;
  p.name = "io";
  p.descriptors = {measured("batch_latency", "ms", Better::kLower, "latency").axes({"worker", "size"})};
  p.metrics = {m("batch_latency", 4, {{"worker", "0"}, {"size", "1"}}), m("batch_latency", 2, {{"worker", "0"}, {"size", "2"}}),
               m("batch_latency", 9, {{"worker", "1"}, {"size", "1"}}), m("batch_latency", 7, {{"worker", "1"}, {"size", "2"}})};
  r.probes.push_back(p);
  MetricDescriptor d;
  // Lower is better: the best (lowest) size within a worker, the worst worker across them.
  EXPECT_EQ(*rule_value(r, rule, nullptr, &d), 7);
  EXPECT_EQ(d.unit, "ms");
  // A minimum of a lower-is-better metric is not judged, and says why.
  Expectations e;
  e.origin = "test";
  rule.id = "lat";
  rule.unit = "ms";
  e.rules["lat"] = rule;
  InstanceExpectation x;
  x.type = "t.large";
  x.min["lat"] = 5;
  e.types["t.large"] = x;
  TempDir root;
  const ProbeResult out = judge_expectations(r, e, "t.large", "quick", FsRoot(root.path()), "");
  EXPECT_EQ(check(out, "expect.lat")->status, Status::kSkip);
  EXPECT_NE(check(out, "expect.lat")->detail.find("lower-is-better"), std::string::npos);
}

TEST(Expectations, HealthyP4dPasses) {
  TempDir root;
  fake_hw(root, 8, "A100", 4);
  Report r;
  ProbeResult g;
  g.name = "gemm";
  for (const char* p : {"bf16", "fp16", "tf32", "fp32"})
    g.metrics.push_back(m("gemm.tflops", 300, {{"precision", p}, {"gpu", "0"}}));
  r.probes.push_back(g);
  const ProbeResult e = judge_expectations(r, builtin_expectations(), "p4d.24xlarge", "quick", FsRoot(root.path()), "");
  EXPECT_EQ(e.status, Status::kPass) << e.reason;
  EXPECT_EQ(check(e, "expect.gpu_count")->observed, "8");
  EXPECT_EQ(check(e, "expect.gpu_model")->status, Status::kPass);
  EXPECT_EQ(check(e, "expect.efa_devices")->observed, "4");
  EXPECT_EQ(check(e, "expect.gemm_bf16_tflops")->status, Status::kPass);
  // busbw is judged in the full profile only.
  EXPECT_EQ(check(e, "expect.nccl_busbw")->status, Status::kSkip);
}

TEST(Expectations, MissingGpusEfaAndSlowGemmRaiseFindings) {
  TempDir root;
  fake_hw(root, 7, "A10G", 2);
  Report r;
  ProbeResult g;
  g.name = "gemm";
  g.metrics.push_back(m("gemm.tflops", 100, {{"precision", "bf16"}, {"gpu", "0"}}));
  r.probes.push_back(g);
  const ProbeResult e = judge_expectations(r, builtin_expectations(), "p4d.24xlarge", "full", FsRoot(root.path()), "");
  EXPECT_EQ(e.status, Status::kFail);
  EXPECT_EQ(check(e, "expect.gpu_count")->finding, "gpu.count_mismatch");
  EXPECT_EQ(check(e, "expect.gpu_model")->status, Status::kFail);
  EXPECT_EQ(check(e, "expect.efa_devices")->finding, "efa.missing");
  EXPECT_EQ(check(e, "expect.efa_devices")->observed, "2");
  const Check* bf16 = check(e, "expect.gemm_bf16_tflops");
  EXPECT_EQ(bf16->status, Status::kWarn);
  EXPECT_EQ(bf16->finding, "gpu.compute_slow");
  EXPECT_EQ(bf16->expected, ">= 187 TFLOP/s");
  const Check* fp16 = check(e, "expect.gemm_fp16_tflops");
  EXPECT_EQ(fp16->status, Status::kSkip);
  EXPECT_NE(fp16->detail.find("no gemm.tflops{precision=fp16}"), std::string::npos);
}

TEST(Expectations, NoGpuAtAllIsGpuNotFoundWithTheProbeReason) {
  TempDir root;
  Report r;
  ProbeResult g;
  g.name = "gemm";
  g.status = Status::kSkip;
  g.reason = "not available: nodeprobe-gemm is not part of this build";
  r.probes.push_back(g);
  const ProbeResult e = judge_expectations(r, builtin_expectations(), "g5.xlarge", "quick", FsRoot(root.path()), "");
  EXPECT_EQ(check(e, "expect.gpu_count")->finding, "gpu.not_found");
  EXPECT_EQ(check(e, "expect.gpu_model"), nullptr);  // nothing to compare
  EXPECT_NE(check(e, "expect.gemm_fp16_tflops")->detail.find("gemm: not available"), std::string::npos);
}

TEST(Expectations, UnknownTypeIsSkipWithTheReason) {
  TempDir root;
  const ProbeResult e = judge_expectations(Report{}, builtin_expectations(), "", "quick", FsRoot(root.path()), "not on EC2");
  EXPECT_EQ(e.status, Status::kSkip);
  EXPECT_NE(e.reason.find("not on EC2"), std::string::npos);
  const ProbeResult u = judge_expectations(Report{}, builtin_expectations(), "z9.huge", "quick", FsRoot(root.path()), "");
  EXPECT_NE(u.reason.find("no expectations for instance type z9.huge"), std::string::npos);
}

TEST(Inventory, HostGpusFromAProbeWinOverProc) {
  TempDir root;
  fake_hw(root, 2, "A100", 0);
  const Json gpus = Json::array({Json{{"name", "NVIDIA H100 80GB HBM3"}}});
  const GpuInventory inv = gpu_inventory(FsRoot(root.path()), gpus);
  EXPECT_EQ(inv.count, 1);
  EXPECT_EQ(inv.source, "host.gpus (probe)");
  const GpuInventory proc = gpu_inventory(FsRoot(root.path()), Json::array());
  EXPECT_EQ(proc.count, 2);
  EXPECT_EQ(proc.models[0], "NVIDIA A100-SXM4-40GB");
  EXPECT_TRUE(nvidia_gpu_present(FsRoot(root.path())));
  TempDir empty;
  EXPECT_FALSE(nvidia_gpu_present(FsRoot(empty.path())));
}

TEST(Inventory, DataDirIsTheLargestWritableLocalNonRootFilesystem) {
  const auto mounts = parse_mounts(
      "/dev/nvme0n1p1 / xfs rw,relatime 0 0\n"
      "proc /proc proc rw 0 0\n"
      "tmpfs /dev/shm tmpfs rw 0 0\n"
      "/dev/nvme0n1p2 /boot xfs rw 0 0\n"
      "/dev/nvme1n1 /data xfs rw,noatime 0 0\n"
      "/dev/nvme2n1 /mnt/scratch\\040space ext4 rw 0 0\n"
      "/dev/nvme3n1 /ro ext4 ro 0 0\n"
      "fs-1.fsx:/ /fsx lustre rw 0 0\n");
  ASSERT_EQ(mounts.size(), 8u);
  EXPECT_EQ(mounts[5].dir, "/mnt/scratch space");
  const auto free = [](const std::string& d) -> std::optional<double> {
    if (d == "/data") return 100e9;
    if (d == "/mnt/scratch space") return 500e9;
    if (d == "/ro" || d == "/" || d == "/boot") return 900e9;
    return std::nullopt;
  };
  EXPECT_EQ(choose_data_dir(mounts, free), "/mnt/scratch space");
  EXPECT_EQ(choose_data_dir(parse_mounts("/dev/sda1 / ext4 rw 0 0\n"), free), "/tmp");
}

}  // namespace
}  // namespace nodeprobe::diag
