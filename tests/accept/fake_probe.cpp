// Test stand-in for probe executables that are not in this build (io,
// allreduce, gemm): installed under their names in a temporary probe
// directory, it checks the arguments accept passes and writes a small valid
// report, so accept's plan mechanics (steps, dataset, mpirun launch,
// renaming, deadlines) are tested without the real probes. Its numbers are
// fixed placeholders, never measurements.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "nodeprobe/report_json.h"

using nodeprobe::Json;

namespace {

std::string arg_after(const std::vector<std::string>& a, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == flag) return a[i + 1];
  return {};
}

int fail(const std::string& why) {
  std::fprintf(stderr, "fake_probe: %s\n", why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  const std::string self = std::filesystem::path(argv[0]).filename();
  const std::string json = arg_after(a, "--json");
  if (json.empty() || arg_after(a, "--timeout").empty()) return fail("no --json/--timeout from the runner");
  if (self == "nodeprobe-gemm" && std::getenv("NP_FAKE_HANG")) {
    // Tells a waiting test that the hang has begun.
    if (const char* mark = std::getenv("NP_FAKE_HANG_MARK"))
      if (std::FILE* f = std::fopen(mark, "w")) std::fclose(f);
    for (;;) ::pause();
  }
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank && std::string(rank) != "0") return 0;  // rank 0 writes the report

  nodeprobe::Report r;
  r.tool = {self, "0", "fake"};
  r.run = {"fake", "", {}, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z"};
  r.host.hostname = "fake";
  nodeprobe::ProbeResult p;
  p.status = nodeprobe::Status::kPass;
  p.duration_s = 0.01;
  p.config = Json{{"argv", a}, {"ranks", std::getenv("OMPI_COMM_WORLD_SIZE") ? std::getenv("OMPI_COMM_WORLD_SIZE") : "1"}};
  if (self == "nodeprobe-io") {
    // accept mode: the probe makes its dataset inside --data-dir and reads it.
    if (a.front() != "accept") return fail("unknown io subcommand " + a.front());
    const std::string dir = arg_after(a, "--data-dir");
    if (dir.empty() || !std::filesystem::is_directory(dir)) return fail("--data-dir is not a directory");
    // Fresh: nothing but the ownership marker accept puts in what it makes.
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().filename() != ".nodeprobe-owned") return fail("--data-dir is not the fresh directory accept made");
    std::ofstream(dir + "/.fake-dataset") << "marker\n";
    p.name = "io";
    p.metrics.push_back({"au", 50, "%", nodeprobe::Better::kHigher, {{"workers", "1"}}, std::nullopt});
  } else if (self == "nodeprobe-allreduce") {
    // Starts its own ranks (--np N); one busbw series per --backend target.
    p.name = "allreduce";
    p.config["ranks"] = arg_after(a, "--np");
    std::string targets = arg_after(a, "--backend");
    bool tcp = false;
    for (std::size_t start = 0; start <= targets.size();) {
      const auto comma = targets.find(',', start);
      const std::string t = targets.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const auto colon = t.find(':');
      std::map<std::string, std::string> labels = {{"backend", t.substr(0, colon)}, {"size", "1024"}};
      if (colon != std::string::npos) labels["provider"] = t.substr(colon + 1);
      tcp |= t == "fabric:tcp";
      p.metrics.push_back({"busbw", 1, "GB/s", nodeprobe::Better::kHigher, labels, std::nullopt});
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (tcp) {  // a finding raised by the probe itself, not from a check
      nodeprobe::Finding f;
      f.id = "efa.fallback_tcp";
      f.severity = nodeprobe::Severity::kWarn;
      f.title = "Traffic fell back from EFA to TCP";
      f.probe = "allreduce";
      f.evidence = {{"fake", 0, "NET/Socket : Using [0]eth0"}};
      f.remedy = {"fake remedy"};
      r.findings.push_back(f);
    }
  } else {
    p.name = "gemm";
    p.status = nodeprobe::Status::kSkip;
    p.reason = "fake: no GPU";
  }
  r.probes.push_back(p);
  r.verdict = nodeprobe::compute_verdict(r);
  std::ofstream(json) << nodeprobe::dump_report(r);
  return 0;
}
