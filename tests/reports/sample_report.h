#pragma once
// A report with every field populated, for round-trip and schema tests.
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/report.h"

namespace nodeprobe::testing {

inline Report full_sample_report() {
  Report r;
  r.tool = {"nodeprobe", "0.1.0", "abc123"};
  r.run = {"20261129T000000Z-abcdef", "before tuning", {"nodeprobe", "accept"},
           "2026-11-29T00:00:00.000Z", "2026-11-29T00:00:05.250Z"};
  r.host.hostname = "ip-10-0-0-1";
  r.host.kernel = "4.18.0-477.el8.x86_64";
  r.host.os = "Red Hat Enterprise Linux 8.8 (Ootpa)";
  r.host.instance_type = "p4d.24xlarge";
  r.host.cpu_model = "Intel Xeon";
  r.host.cpus = 96;
  r.host.memory_bytes = 1204000000000LL;
  r.host.gpus = Json::array({Json{{"index", 0}, {"name", "NVIDIA A100-SXM4-40GB"}}});
  r.host.driver = "535.104.05";
  r.host.cuda_runtime = "12.2";
  r.host.nccl = "2.18.5";
  r.host.libfabric = "1.18.1";
  r.host.mpi = "Open MPI 4.1.5";
  r.host.env = {{"NCCL_DEBUG", "INFO"}, {"FI_PROVIDER", "efa"}};

  ProbeResult p;
  p.name = "allreduce";
  p.status = Status::kWarn;
  p.reason = "";
  p.duration_s = 12.5;
  p.config = Json{{"backend", "fabric"}, {"iters", 20}};
  p.descriptors = {measured("busbw", "GB/s", Better::kHigher, "bus bandwidth")
                       .axes({"size", "provider"})
                       .line_chart("busbw", "Allreduce bus bandwidth vs message size", "size", "message size", true)
                       .key(1, "busbw max"),
                   derived("time", "us", Better::kLower, "time per allreduce").axes({"size", "provider"}),
                   counted("share", "fraction", Better::kHigher, "a fraction shown as percent").percent(1)};
  p.environment = {{"transport.fabric:efa", "efa;ofi_rxm"}};
  Metric m;
  m.name = "busbw";
  m.value = 41.5;
  m.unit = "GB/s";
  m.better = Better::kHigher;
  m.labels = {{"size", "67108864"}, {"provider", "efa"}};
  m.stats = Stats{20, 41.5, 41.2, 39.0, 43.0, 39.5, 42.8, 0.9};
  p.metrics.push_back(m);
  Metric lat = m;
  lat.name = "time";
  lat.unit = "us";
  lat.better = Better::kLower;
  lat.stats.reset();
  p.metrics.push_back(lat);
  Check c;
  c.id = "allreduce.efa";
  c.status = Status::kWarn;
  c.observed = "socket";
  c.expected = "ofi";
  c.fix = "export FI_PROVIDER=efa";
  c.finding = "efa.fallback_tcp";
  c.detail = "NCCL INFO NET/Socket";
  p.checks.push_back(c);
  p.data = Json{{"ranks", Json::array({Json{{"rank", 0}, {"host", "a"}}})}};
  r.probes.push_back(p);

  ProbeResult skipped;
  skipped.name = "gemm";
  skipped.status = Status::kSkip;
  skipped.reason = "no GPU: cudaErrorNoDevice";
  r.probes.push_back(skipped);

  Finding f;
  f.id = "efa.fallback_tcp";
  f.severity = Severity::kWarn;
  f.title = "Traffic fell back from EFA to TCP";
  f.evidence = {{"nccl.log", 42, "NCCL INFO NET/Socket : Using [0]eth0"}};
  f.remedy = {"export FI_PROVIDER=efa", "check the aws-ofi-nccl plugin"};
  f.refs = {"https://docs.aws.amazon.com/"};
  f.probe = "allreduce";
  f.count = 3;
  f.first_seen = "2026-11-29T00:00:01Z";
  f.last_seen = "2026-11-29T00:00:03Z";
  f.facts = Json{{"interface", "eth0"}};
  r.findings.push_back(f);
  r.verdict = Status::kWarn;
  return r;
}

}  // namespace nodeprobe::testing
