#include "io_test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "cache.h"
#include "nodeprobe/metric_descriptor.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe::io::testing {

Scratch::Scratch(const std::string& base) {
  std::filesystem::create_directories(base);
  std::string tmpl = base + "/np-io-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp under " + base + " failed");
  path_ = tmpl;
}

Scratch::~Scratch() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string disk_base(std::string* why) {
  const std::string base = NODEPROBE_IO_SCRATCH;
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  const MountInfo m = mount_of(FsRoot("/"), base);
  if (m.fs_type.empty() || memory_backed(m.fs_type)) {
    *why = base + " is not on a disk-backed filesystem (" + m.fs_type + ")";
    return {};
  }
  return base;
}

std::string tmpfs_base(std::string* why) {
  const MountInfo m = mount_of(FsRoot("/"), "/dev/shm");
  if (m.fs_type != "tmpfs" || ::access("/dev/shm", W_OK) != 0) {
    *why = "/dev/shm is not a writable tmpfs here";
    return {};
  }
  return "/dev/shm";
}

double IoRun::metric(const std::string& name) const {
  for (const auto& m : probe().at("metrics"))
    if (m.at("name") == name) return m.at("value").get<double>();
  return std::nan("");
}

nlohmann::json IoRun::check(const std::string& id) const {
  for (const auto& c : probe().at("checks"))
    if (c.at("id") == id) return c;
  return nullptr;
}

std::vector<std::string> IoRun::stderr_lines() const {
  std::vector<std::string> out;
  std::istringstream in(proc.err);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

IoRun run_io(std::vector<std::string> args, double timeout_s, std::vector<std::string> env) {
  std::vector<std::string> argv{nodeprobe::testing::bin("nodeprobe-io")};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--json", "-", "--quiet"});
  IoRun r;
  r.proc = nodeprobe::testing::run(argv, timeout_s, env);
  r.report = nlohmann::json::parse(r.proc.out, nullptr, false);
  if (r.report.is_discarded()) r.report = nullptr;
  return r;
}

void prepare(const std::string& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"prepare", "--dir", dir};
  args.insert(args.end(), extra.begin(), extra.end());
  const IoRun r = run_io(args);
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
}

std::string report_problems(const nlohmann::json& report) {
  if (report.is_null()) return "no JSON report on stdout";
  std::string out = nodeprobe::testing::schema_errors(report);
  // Every metric declared, its labels exactly its axes, every measured one with stats.
  const Report r = parse_report(report.dump(), "report");
  for (const auto& p : r.probes)
    for (const auto& problem : descriptor_problems(p)) out += problem + "\n";
  return out;
}

}  // namespace nodeprobe::io::testing
