// nodeprobe under a real Slurm (scripts/slurm-cluster.sh: slurmctld and
// munged here, one slurmd per netns test host with its own hostname and
// PMIx directory): `srun` starts the fleet through Open MPI's PMIx support, and the
// HealthCheckProgram script of docs/accept.md, run by slurmd itself, drains
// the node nodeprobe says to drain with nodeprobe's reason and leaves the
// others. Skipped without root, network namespaces or Slurm (scripts/test.sh
// installs Slurm: setup.sh --test-deps).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "nodeprobe/fleet_json.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

namespace nt = nodeprobe::testing;
namespace fs = std::filesystem;

/// Where to make a directory every test host sees (each has its own /tmp): the build tree.
std::string shared_parent() { return fs::path(nt::bin("nodeprobe")).parent_path().parent_path().string(); }

class SlurmCluster {
 public:
  SlurmCluster(int hosts, const std::vector<std::string>& extra = {}) {
    // Ids apart from the netns clusters' of the same process (tests/allreduce).
    const nt::ClusterUp c = nt::cluster_up(NODEPROBE_SLURM_SCRIPT, hosts, extra, 101, 120);
    id_ = c.id;
    skip_ = c.skip;
    if (!skip_.empty()) return;
    conf_ = "SLURM_CONF=/run/nodeprobe-slurm/" + std::to_string(id_) + "/slurm.conf";
    const std::string env = nt::run({NODEPROBE_SLURM_SCRIPT, "env", "--id", std::to_string(id_)}, 30).out;
    std::smatch m;
    if (std::regex_search(env, m, std::regex("SLURM_CONF=(\\S+)"))) conf_ = "SLURM_CONF=" + m[1].str();
    up_ = true;
  }
  ~SlurmCluster() {
    if (up_) nt::run({NODEPROBE_SLURM_SCRIPT, "down", "--id", std::to_string(id_)}, 60);
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  const std::string& skip_reason() const { return skip_; }
  std::string conf_env() const { return conf_; }
  std::string conf_path() const { return conf_.substr(std::string("SLURM_CONF=").size()); }
  std::string host(int i) const { return "np" + std::to_string(id_) + "-h" + std::to_string(i); }
  SpawnResult slurm(std::vector<std::string> argv, double timeout_s) const {
    return nt::run(std::move(argv), timeout_s, {conf_});
  }
  /// srun with `args`, run again (twice at most) when a rank died of SIGSEGV
  /// before writing `report`: Debian 12's Open MPI 4.1.4 under srun/PMIx now
  /// and then crashes inside MPI_Init, before any code of ours runs (5 of 48
  /// sruns with both cores busy; a core showed btl/tcp calling ob1's
  /// MATCH handler, tag 65, before ob1 had registered it:
  /// mca_btl_base_active_message_trigger[65] was NULL). --wait=20 ends the
  /// other ranks 20 s after the first one exits instead of leaving them in
  /// MPI_Init until --time runs out (in a run that goes well every rank ends
  /// within the same second). Three crashes in a row fail the test.
  SpawnResult srun(const std::vector<std::string>& args, const std::string& report, double timeout_s) const {
    std::vector<std::string> argv = {"srun", "--immediate=60", "--time=3", "--wait=20", "-N", "4",
                                     "--ntasks-per-node=1", "--mpi=pmix"};
    argv.insert(argv.end(), args.begin(), args.end());
    SpawnResult r = slurm(argv, timeout_s);
    for (int again = 0; again < 2; ++again) {
      const bool segv = r.err.find("Segmentation fault") != std::string::npos ||
                        r.err.find("terminated with signal 11") != std::string::npos;
      if (fs::exists(report) || !segv) break;
      std::cerr << "a rank died of SIGSEGV before any report (Open MPI's MPI_Init under srun); once more:\n" << r.err;
      r = slurm(argv, timeout_s);
    }
    return r;
  }
  /// node name -> "STATE|REASON" as sinfo prints them.
  std::map<std::string, std::string> nodes() const {
    std::map<std::string, std::string> out;
    std::istringstream in(slurm({"sinfo", "-h", "-N", "-o", "%N|%T|%E"}, 30).out);
    for (std::string line; std::getline(in, line);) {
      const auto bar = line.find('|');
      if (bar != std::string::npos) out[line.substr(0, bar)] = line.substr(bar + 1);
    }
    return out;
  }

 private:
  int id_ = 0;
  bool up_ = false;
  std::string skip_, conf_;
};

#define NEED_SLURM(c) \
  if (!(c).skip_reason().empty()) GTEST_SKIP() << (c).skip_reason()

TEST(FleetSlurm, SrunStartsOneRankPerNodeAndTheSlowHostIsTheOnlyNodeOutlier) {
  SlurmCluster c(4, {"--rate", "50mbit", "--host-rate", "3:12mbit"});
  NEED_SLURM(c);
  nt::TempDir dir(shared_parent(), 0755);
  const SpawnResult r = c.srun({nt::bin("nodeprobe"), "fleet", "--skip", "local,ring", "--pair-bytes", "1M",
                                "--stall-timeout", "20", "--json", dir.file("fleet.json")},
                               dir.file("fleet.json"), 200);
  ASSERT_TRUE(fs::exists(dir.file("fleet.json"))) << r.describe() << r.err << r.out;
  const FleetReport f = load_fleet_report(dir.file("fleet.json"));
  ASSERT_EQ(f.nodes.size(), 4u) << r.out;
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    EXPECT_EQ(f.nodes[i].host, c.host(static_cast<int>(i) + 1)) << "rank " << i << " runs on the i-th Slurm node";
    EXPECT_EQ(f.nodes[i].rank, static_cast<int>(i));
  }
  ASSERT_EQ(f.pairs.size(), 6u);
  for (const auto& p : f.pairs) EXPECT_EQ(p.status, Status::kPass) << p.a << "-" << p.b << ": " << p.reason;
  int node_outliers = 0;
  for (const auto& o : f.outliers) {
    if (o.kind == "node" && o.metric == "pair_busbw") {
      ++node_outliers;
      EXPECT_EQ(o.host, c.host(3)) << r.out;
    }
    EXPECT_NE(o.kind, "link") << o.host << "-" << o.peer << ": the slow host's pairs are the host's";
  }
  EXPECT_EQ(node_outliers, 1) << r.out;
  EXPECT_EQ(r.exit_code, 1) << "srun passes rank 0's exit code: a node to drain\n" << r.err;

  // nodeprobe-allreduce the same way (docs/allreduce.md): one rank per node, data checked.
  const SpawnResult ar = c.srun({nt::bin("nodeprobe-allreduce"), "--backend", "mpi,fabric:tcp", "-b", "64K", "-e",
                                 "64K", "-n", "3", "--json", dir.file("ar.json")},
                                dir.file("ar.json"), 120);
  EXPECT_EQ(ar.exit_code, 0) << ar.err << ar.out;
  ASSERT_TRUE(fs::exists(dir.file("ar.json"))) << ar.err;
  const Json j = Json::parse(nt::read_file(dir.file("ar.json")));
  const Json& probe = j.at("probes").at(0);
  EXPECT_EQ(probe.at("status"), "pass") << probe.dump();
  EXPECT_EQ(probe.at("config").at("ranks"), 4);
  EXPECT_EQ(probe.at("config").at("hosts"), Json({c.host(1), c.host(2), c.host(3), c.host(4)}));
}

/// The first sh block under `heading` in docs/accept.md, as users copy it.
std::string documented_script(const std::string& heading) {
  const std::string doc = nt::read_file(std::string(NODEPROBE_SOURCE_DIR) + "/docs/accept.md");
  const auto head = doc.find(heading);
  const auto open = doc.find("```sh\n", head);
  const auto close = doc.find("```", open + 6);
  if (head == std::string::npos || open == std::string::npos || close == std::string::npos) return "";
  return doc.substr(open + 6, close - open - 6);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

void write_executable(const std::string& path, const std::string& text) {
  nt::write_file(path, text);
  ::chmod(path.c_str(), 0755);
}

/// The documented script with this machine's paths: the binary (a wrapper
/// that makes host 2 "a p4d.24xlarge with no GPU": the health decision's own
/// tests cover the findings, these cover Slurm's side), scontrol's
/// configuration (no /etc/slurm here), and per-node files (the test hosts
/// share one filesystem: each node's files get its name).
std::string localise(std::string script, const nt::TempDir& dir) {
  script = replace_all(script, "/opt/nodeprobe/bin/nodeprobe", dir.file("nodeprobe"));
  script = replace_all(script, "/usr/bin/scontrol", dir.file("scontrol"));
  script = replace_all(script, "/var/log/nodeprobe", dir.file("log-$SLURMD_NODENAME"));
  return replace_all(script, "/run/nodeprobe-", dir.file("$SLURMD_NODENAME-"));
}

void write_wrappers(const SlurmCluster& c, const nt::TempDir& dir) {
  write_executable(dir.file("nodeprobe"),
                   "#!/bin/sh\nset -- \"$@\" --no-imds --sysroot '" + std::string(NODEPROBE_FIXTURES) +
                       "/sysroot/empty'\n[ \"$SLURMD_NODENAME\" = " + c.host(2) +
                       " ] && set -- \"$@\" --expect p4d.24xlarge\nexec '" + nt::bin("nodeprobe") + "' \"$@\"\n");
  write_executable(dir.file("scontrol"), "#!/bin/sh\n" + c.conf_env() + " exec scontrol \"$@\"\n");
}

/// Polls sinfo until `done` says so or `seconds` pass; the last view.
std::map<std::string, std::string> wait_nodes(const SlurmCluster& c, double seconds,
                                              const std::function<bool(std::map<std::string, std::string>&)>& done) {
  std::map<std::string, std::string> nodes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    nodes = c.nodes();
    if (done(nodes)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return nodes;
}

TEST(FleetSlurm, TheDocumentedHealthCheckProgramDrainsOnlyTheNodeToDrainWithNodeprobesReason) {
  nt::TempDir dir(shared_parent(), 0755);
  const std::string script = documented_script("### HealthCheckProgram");
  ASSERT_NE(script.find("/opt/nodeprobe/bin/nodeprobe accept --profile health"), std::string::npos) << script;
  ASSERT_NE(script.find("/usr/bin/scontrol update"), std::string::npos) << script;
  write_executable(dir.file("health.sh"), localise(script, dir));
  SlurmCluster c(3, {"--health", dir.file("health.sh"), "--health-interval", "2"});
  NEED_SLURM(c);
  write_wrappers(c, dir);
  auto nodes = wait_nodes(c, 60, [&](auto& n) { return n[c.host(2)].rfind("drain", 0) == 0; });
  const std::string h2 = nodes[c.host(2)];
  ASSERT_EQ(h2.rfind("drain", 0), 0u) << "host 2: " << h2;
  EXPECT_NE(h2.find("|nodeprobe: gpu.not_found: "), std::string::npos) << h2;
  // Two more health rounds: the others stay in service.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  nodes = c.nodes();
  for (int i : {1, 3}) EXPECT_EQ(nodes[c.host(i)].rfind("idle|", 0), 0u) << c.host(i) << ": " << nodes[c.host(i)];
}

TEST(FleetSlurm, TheDocumentedPrologDrainsTheNodeWithNodeprobesReasonAndTheOthersStillRunJobs) {
  nt::TempDir dir(shared_parent(), 0755);
  const std::string script = documented_script("### Prolog");
  ASSERT_NE(script.find("/opt/nodeprobe/bin/nodeprobe accept --profile health"), std::string::npos) << script;
  write_executable(dir.file("prolog.sh"), localise(script, dir));
  SlurmCluster c(3, {"--prolog", dir.file("prolog.sh")});
  NEED_SLURM(c);
  write_wrappers(c, dir);
  // A job given host 2: its prolog drains it with nodeprobe's reason; the
  // job fails to start there, and the good hosts still take jobs.
  const SpawnResult job = c.slurm({"srun", "--immediate=60", "--time=3", "-N", "2", "--ntasks-per-node=1", "--mpi=none", "-w",
                                   c.host(1) + "," + c.host(2), "hostname"},
                                  90);
  auto nodes = wait_nodes(c, 30, [&](auto& n) { return n[c.host(2)].rfind("drain", 0) == 0; });
  const std::string h2 = nodes[c.host(2)];
  ASSERT_EQ(h2.rfind("drain", 0), 0u) << "host 2: " << h2 << "\n" << job.err;
  EXPECT_NE(job.exit_code, 0) << job.out;
  EXPECT_NE(h2.find("|nodeprobe: gpu.not_found: "), std::string::npos)
      << "nodeprobe's reason, not Slurm's \"Prolog error\": " << h2;
  const SpawnResult good = c.slurm({"srun", "--immediate=60", "--time=3", "-N", "2", "--ntasks-per-node=1", "--mpi=none", "-x", c.host(2),
                                    "hostname"},
                                   60);
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find(c.host(1)), std::string::npos) << good.out;
  EXPECT_NE(good.out.find(c.host(3)), std::string::npos) << good.out;
}

}  // namespace
}  // namespace nodeprobe
