// Microbenchmark: the whole limits probe (passive reads and the active
// verifications) on the live machine. The bar is "well under 100 ms".
#include <benchmark/benchmark.h>

#include <iostream>
#include <sstream>

#include "limits_probe.h"
#include "nodeprobe/host_facts.h"

#include <unistd.h>  // environ (declared under _GNU_SOURCE, which g++ always defines)

namespace {

void run_once(benchmark::State& state, bool active) {
  using namespace nodeprobe;
  const FsRoot fs("/");
  const HostInfo host = collect_host_facts(fs, environ);
  limits::LiveSystem sys;
  limits::LimitsOptions opt;
  opt.active = active;
  std::ostringstream log;
  for (auto _ : state) {
    ProbeContext ctx{fs, steady_clock(), log, false, 0, &host};
    ProbeResult r;
    limits::LimitsProbe probe(sys, opt);
    probe.run(ctx, r);
    benchmark::DoNotOptimize(r.checks.data());
  }
}

void BM_LimitsProbeActive(benchmark::State& state) { run_once(state, true); }
void BM_LimitsProbePassive(benchmark::State& state) { run_once(state, false); }
void BM_HostFacts(benchmark::State& state) {
  const nodeprobe::FsRoot fs("/");
  for (auto _ : state) benchmark::DoNotOptimize(nodeprobe::collect_host_facts(fs, environ));
}

}  // namespace

BENCHMARK(BM_LimitsProbeActive)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitsProbePassive)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HostFacts)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
