#include "report_fixtures.h"

#include "nodeprobe/finding_ids.h"
#include "nodeprobe/metric_descriptor.h"

namespace nodeprobe::testing {

Report base_report(const std::string& label) {
  Report r;
  r.tool = {"nodeprobe", "0.1.0", "test"};
  r.run.id = "20260101T000000Z-abcdef";
  r.run.label = label;
  r.run.argv = {"nodeprobe", "accept"};
  r.run.started = "2026-01-01T00:00:00.000Z";
  r.run.finished = "2026-01-01T00:00:10.500Z";
  r.host.hostname = "node-a";
  r.host.kernel = "4.18.0-513.el8.x86_64";
  r.host.os = "Red Hat Enterprise Linux 8.9";
  r.host.cpus = 96;
  r.host.memory_bytes = 1LL << 40;
  r.verdict = Status::kPass;
  return r;
}

std::size_t add_probe(Report& r, const std::string& name, Status s, const std::string& reason) {
  ProbeResult p;
  p.name = name;
  p.status = s;
  p.reason = reason;
  p.duration_s = 1.25;
  r.probes.push_back(p);
  return r.probes.size() - 1;
}

Metric metric(const std::string& name, double value, const std::string& unit, Better better,
              std::map<std::string, std::string> labels, double p5, double p95, std::size_t n) {
  Metric m;
  m.name = name;
  m.value = value;
  m.unit = unit;
  m.better = better;
  m.labels = std::move(labels);
  if (n > 0) {
    Stats s;
    s.n = n;
    s.median = s.mean = value;
    s.p5 = p5;
    s.p95 = p95;
    s.min = p5 * 0.99;
    s.max = p95 * 1.01;
    s.stddev = (p95 - p5) / 3.3;
    m.stats = s;
  }
  return m;
}

Report chart_report(double scale, const std::string& label) {
  Report r = base_report(label);
  r.host.instance_type = "p4d.24xlarge";
  r.host.driver = "535.104.05";
  r.host.nccl = "2.18.5";
  r.host.env = {{"NCCL_SOCKET_IFNAME", "ens32"}};
  // Allreduce: busbw vs size for two transports.
  for (const char* provider : {"tcp", "efa"}) {
    const std::size_t i = add_probe(r, std::string("allreduce.fabric.") + provider, Status::kPass);
    r.probes[i].descriptors.push_back(measured("busbw", "GB/s", Better::kHigher, "bus bandwidth")
                                          .axes({"backend", "provider", "size"})
                                          .line_chart("busbw", "Allreduce bus bandwidth vs message size", "size",
                                                      "message size (bytes)", true)
                                          .key(1, "busbw max"));
    const double peak = std::string(provider) == "efa" ? 40.0 : 9.0;
    for (double size = 1024; size <= 256.0 * 1048576; size *= 4) {
      const double frac = size / (size + 4.0 * 1048576);
      const double v = peak * frac * scale;
      r.probes[i].metrics.push_back(metric("busbw", v, "GB/s", Better::kHigher,
                                           {{"backend", "fabric"}, {"provider", provider},
                                            {"size", std::to_string(static_cast<long long>(size))}},
                                           v * 0.97, v * 1.02, 20));
    }
  }
  // GEMM per precision with the datasheet peak.
  const std::size_t g = add_probe(r, "gemm", Status::kPass);
  r.probes[g].descriptors = {
      measured("gemm.tflops", "TFLOP/s", Better::kHigher, "GEMM throughput")
          .axes({"gpu", "precision", "size"})
          .bar_chart("gemm", "GEMM throughput per precision (best size)", "precision", "gemm.peak_tflops")
          .best_of("size")
          .key(1, "", "precision"),
      counted("gemm.peak_tflops", "TFLOP/s", Better::kHigher, "datasheet peak").axes({"gpu", "precision"}),
      derived("gemm.pct_of_peak", "%", Better::kHigher, "share of the peak").axes({"gpu", "precision", "size"})};
  const std::pair<const char*, double> prec[] = {{"fp32", 19.5}, {"tf32", 156}, {"bf16", 312}, {"fp16", 312}};
  for (const auto& [p, peak] : prec) {
    for (int dev = 0; dev < 2; ++dev) {
      const double v = peak * 0.8 * scale * (dev == 1 ? 0.97 : 1.0);
      const std::map<std::string, std::string> labels = {{"precision", p}, {"gpu", std::to_string(dev)}, {"size", "8192"}};
      r.probes[g].metrics.push_back(
          metric("gemm.tflops", v, "TFLOP/s", Better::kHigher, labels, v * 0.99, v * 1.01, 10));
      // As nodeprobe-gemm reports it: the share of the datasheet peak per point.
      r.probes[g].metrics.push_back(metric("gemm.pct_of_peak", 100 * v / peak, "%", Better::kHigher, labels));
      r.probes[g].metrics.push_back(metric("gemm.peak_tflops", peak, "TFLOP/s", Better::kHigher,
                                           {{"precision", p}, {"gpu", std::to_string(dev)}}));
    }
  }
  // IO: throughput and AU vs workers.
  const std::size_t io = add_probe(r, "io-sweep", Status::kPass);
  r.probes[io].descriptors = {
      measured("throughput", "MB/s", Better::kHigher, "record bytes per second")
          .axes({"layout", "workers"})
          .line_chart("io-workers-throughput", "IO throughput vs workers", "workers", "workers"),
      measured("au", "fraction", Better::kHigher, "accelerator utilisation")
          .titled("AU")
          .axes({"layout", "workers"})
          .percent(1)
          .line_chart("io-workers-au", "Accelerator utilisation (AU) vs workers", "workers", "workers")};
  for (int w : {1, 2, 4, 8}) {
    const double mbps = 180.0 * w * scale / (1 + 0.1 * w);
    const double au = std::min(0.99, 0.30 * w * scale);
    r.probes[io].metrics.push_back(metric("throughput", mbps, "MB/s", Better::kHigher,
                                          {{"workers", std::to_string(w)}, {"layout", "files"}}, mbps * 0.95,
                                          mbps * 1.03, 8));
    r.probes[io].metrics.push_back(metric("au", au, "fraction", Better::kHigher,
                                          {{"workers", std::to_string(w)}, {"layout", "files"}}, au * 0.97,
                                          std::min(1.0, au * 1.02), 8));
  }
  // Limits with a failing check and its finding.
  const std::size_t l = add_probe(r, "limits", Status::kWarn);
  Check ok;
  ok.id = "limits.max_map_count";
  ok.status = Status::kPass;
  ok.observed = "262144";
  ok.expected = ">= 262144";
  r.probes[l].checks.push_back(ok);
  Check bad;
  bad.id = "limits.somaxconn";
  bad.status = Status::kWarn;
  bad.observed = "128";
  bad.expected = ">= 65535";
  bad.fix = "echo 'net.core.somaxconn = 65535' >> /etc/sysctl.d/99-nodeprobe.conf && sysctl --system";
  bad.finding = "limits.somaxconn";
  r.probes[l].checks.push_back(bad);
  r.findings = findings_from_checks(r.probes);
  r.verdict = compute_verdict(r);
  return r;
}

}  // namespace nodeprobe::testing
