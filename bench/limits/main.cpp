// nodeprobe-limits: OS limits and tunables vs the recommended values.
#include <CLI/CLI.hpp>
#include <memory>
#include <vector>

#include "limits_probe.h"
#include "nodeprobe/probe_main.h"

int main(int argc, char** argv) {
  using namespace nodeprobe;
  CLI::App app{"nodeprobe-limits: shm, memlock, nofile, sysctls, governor, THP, SELinux, NUMA "
               "balancing: observed vs recommended, with the exact fix",
               "nodeprobe-limits"};
  CommonOptions common;
  limits::LimitsOptions lopt;
  bool passive = false;
  add_common_flags(app, common);
  app.add_flag("--passive", passive, "Only read configured values; skip the active verifications");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  lopt.active = !passive;

  limits::LiveSystem sys;
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<limits::LimitsProbe>(sys, lopt));
  return run_probes("nodeprobe-limits", probes, common, argc, argv);
}
