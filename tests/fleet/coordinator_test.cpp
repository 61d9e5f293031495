// The coordinator and real workers over loopback, in one process and without
// MPI: the phases as rank 0 drives them (mesh, pairs on the schedule, ring
// over libfabric tcp), and nodes that go silent or die while the rest goes on.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <memory>
#include <thread>

#include "coordinator.h"
#include "fleet_phases.h"
#include "group_bw.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/fleet_analysis.h"
#include "worker.h"

namespace nodeprobe::fleet {
namespace {

volatile std::sig_atomic_t g_cancel = 0;

struct LoopbackFleet {
  diag::FleetOptions opt;
  std::unique_ptr<Coordinator> co;
  FleetReport report;
  FleetContext ctx;
  std::vector<std::thread> workers;
  int port = 0;

  LoopbackFleet(int n, double stall_s) {
    opt.pair_bytes = "1M";
    opt.stall_timeout_s = stall_s;
    co = std::make_unique<Coordinator>(n, stall_s, &g_cancel);
    port = co->listen("127.0.0.1");
    for (int r = 0; r < n; ++r) {
      FleetNode node;
      node.rank = r;
      node.host = "w" + std::to_string(r);
      node.verdict = Status::kPass;
      report.nodes.push_back(node);
      ctx.hosts.rank_host.push_back(node.host);
      ctx.hosts.rank_node.push_back(r);
      ctx.hosts.hosts.push_back(node.host);
    }
    ctx.opt = &opt;
    ctx.co = co.get();
    ctx.report = &report;
    ctx.node_reports.resize(static_cast<std::size_t>(n));
    ctx.have_report.assign(static_cast<std::size_t>(n), false);
    ctx.provider = "tcp";
  }

  WorkerConfig worker_config(int r) const {
    WorkerConfig w;
    w.rank = r;
    w.host = "w" + std::to_string(r);
    w.coordinator_ip = "127.0.0.1";
    w.coordinator_port = port;
    w.ip = "127.0.0.1";
    w.iface = "lo";
    w.stall_s = opt.stall_timeout_s;
    return w;
  }

  void start_worker(int r) {
    workers.emplace_back([this, r] { run_worker(worker_config(r)); });
  }

  ~LoopbackFleet() {
    co->goodbye(true);
    for (auto& t : workers) t.join();
  }
};

// A node that says hello and then nothing, as a stopped one does.
void silent_node(int port, int rank, std::atomic<bool>* done) {
  allreduce::ConnectResult c = allreduce::tcp_connect("127.0.0.1", port, 5);
  ASSERT_TRUE(c.ok);
  send_message(c.fd.get(), {{"t", "hello"}, {"rank", rank}, {"host", "silent"}, {"providers", Json::array()}});
  while (!*done) ::usleep(50000);
}

TEST(FleetPhases, ThreeNodesMeshPairsWithAByeAndTheRing) {
  if (!fabric_groups_available()) GTEST_SKIP() << "this build has no libfabric";
  LoopbackFleet f(3, 10);
  for (int r = 0; r < 3; ++r) f.start_worker(r);
  f.co->accept_all(10);
  ASSERT_EQ(f.co->alive_ranks().size(), 3u);
  phase_mesh(f.ctx);
  phase_pairs(f.ctx);
  phase_ring(f.ctx);
  ASSERT_EQ(f.report.phases.size(), 3u);
  for (const auto& p : f.report.phases) EXPECT_EQ(p.status, Status::kPass) << p.name << ": " << p.reason;
  EXPECT_EQ(f.report.mesh["check"]["status"], "pass");
  ASSERT_EQ(f.report.pairs.size(), 3u);  // every pair once, over 3 rounds of one pair and a bye
  for (const auto& p : f.report.pairs) {
    EXPECT_EQ(p.status, Status::kPass) << p.reason;
    EXPECT_GT(p.busbw, 0);
    EXPECT_GE(p.stats.n, 3u);
    EXPECT_NE(p.transport.find("tcp"), std::string::npos) << p.transport;  // what carried it
  }
  EXPECT_EQ(f.ctx.timings.round_s.size(), 3u);
  ASSERT_EQ(f.report.ring.size(), 2u);
  EXPECT_EQ(f.report.ring[0].source, "pairs");
  EXPECT_EQ(f.report.ring[1].nodes, 3);
  EXPECT_EQ(f.report.ring[1].status, Status::kPass) << f.report.ring[1].reason;
  EXPECT_GT(f.report.ring[1].busbw, 0);
}

TEST(FleetPhases, ASilentNodeIsLostAndThePhasesGoOnWithoutIt) {
  if (!fabric_groups_available()) GTEST_SKIP() << "this build has no libfabric";
  LoopbackFleet f(4, 2);
  for (int r = 0; r < 3; ++r) f.start_worker(r);
  std::atomic<bool> done{false};
  std::thread silent(silent_node, f.port, 3, &done);
  f.co->accept_all(10);
  ASSERT_EQ(f.co->alive_ranks().size(), 4u);
  const double t0 = steady_clock().now_s();
  phase_mesh(f.ctx);
  phase_pairs(f.ctx);
  phase_ring(f.ctx);
  done = true;
  silent.join();
  EXPECT_LT(steady_clock().now_s() - t0, 30.0) << "the silent node must cost the stall limit, not the deadlines";
  const FleetNode& lost = f.report.nodes[3];
  EXPECT_EQ(lost.verdict, Status::kTimeout);
  EXPECT_EQ(lost.timed_out_in, "mesh");
  EXPECT_NE(lost.reason.find("silent for"), std::string::npos) << lost.reason;
  EXPECT_NE(lost.reason.find("mesh_listen unanswered"), std::string::npos) << lost.reason;
  // The other three are complete: every pair among them measured, the ring over three.
  int measured = 0;
  for (const auto& p : f.report.pairs) measured += p.status == Status::kPass ? 1 : 0;
  EXPECT_EQ(measured, 3);
  ASSERT_FALSE(f.report.ring.empty());
  EXPECT_EQ(f.report.ring.back().nodes, 3);
  EXPECT_EQ(f.report.ring.back().status, Status::kPass) << f.report.ring.back().reason;
  judge_fleet(f.report, {}, OutlierOptions{});
  bool drained = false;
  for (const auto& d : f.report.drain) drained |= d.host == "w3" && d.reason.find("lost during mesh") == 0;
  EXPECT_TRUE(drained);
}

TEST(FleetPhases, ANodeThatDiesIsAnErrorNamedAsSuch) {
  LoopbackFleet f(2, 5);
  f.start_worker(0);
  {
    // Connects, says hello, and closes: killed between two phases.
    std::atomic<bool> done{true};
    std::thread gone(silent_node, f.port, 1, &done);
    gone.join();
  }
  f.co->accept_all(10);
  phase_mesh(f.ctx);
  EXPECT_EQ(f.report.nodes[1].verdict, Status::kError) << f.report.nodes[1].reason;
  EXPECT_NE(f.report.nodes[1].reason.find("closed without a goodbye"), std::string::npos) << f.report.nodes[1].reason;
  EXPECT_EQ(f.report.nodes[0].verdict, Status::kPass);
}

}  // namespace
}  // namespace nodeprobe::fleet
