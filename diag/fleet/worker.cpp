#include "worker.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "group_bw.h"
#include "group_nccl.h"
#include "mesh.h"
#include "net_util.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/subprocess.h"
#include "wire.h"

namespace nodeprobe::fleet {
namespace {

constexpr double kBeatInterval = 0.5;
constexpr double kRootGrace = 10;  // rank 0 silent for the stall limit plus this: it is gone

// Variables of the launcher that started us: a `nodeprobe accept` that runs
// mpirun itself must not think it is part of this job.
std::vector<std::string> launcher_variables() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    for (const char* p : {"OMPI_", "PMIX_", "PMI_", "OPAL_", "SLURM_", "HYDRA_", "MPI_LOCALRANKID"})
      if (name.rfind(p, 0) == 0) names.push_back(name);
  }
  return names;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Worker {
 public:
  explicit Worker(const WorkerConfig& cfg) : cfg_(cfg) {}

  WorkerEnd run() {
    if (!connect()) return WorkerEnd::kLost;
    io_ = std::thread([this] { io_loop(); });
    WorkerEnd end = WorkerEnd::kLost;
    for (;;) {
      Json cmd;
      {
        std::unique_lock<std::mutex> lk(q_mu_);
        q_cv_.wait(lk, [&] { return !queue_.empty() || gone_; });
        if (queue_.empty()) break;  // gone
        cmd = std::move(queue_.front());
        queue_.pop_front();
      }
      if (cmd.value("t", "") == "bye") {
        end = cmd.value("finalize", false) ? WorkerEnd::kFinalize : WorkerEnd::kNoFinalize;
        break;
      }
      execute(cmd);
    }
    stop_io_ = true;
    if (io_.joinable()) io_.join();
    groups_.clear();
    mesh_.reset();
    return end;
  }

 private:
  void say(const std::string& s) {
    const std::string line = "nodeprobe-fleet: rank " + std::to_string(cfg_.rank) + " (" + cfg_.host + "): " + s + "\n";
    ssize_t rc = ::write(STDERR_FILENO, line.data(), line.size());
    (void)rc;
  }

  bool connect() {
    const double until = steady_clock().now_s() + 20;
    while (steady_clock().now_s() < until) {
      allreduce::ConnectResult c = allreduce::tcp_connect(cfg_.coordinator_ip, cfg_.coordinator_port, 5.0);
      if (c.ok) {
        fd_ = std::move(c.fd);
        Json providers = Json::array();
        for (const auto& p : fabric_providers()) providers.push_back(p);
        Json hello{{"t", "hello"}, {"rank", cfg_.rank}, {"host", cfg_.host}, {"ip", cfg_.ip},
                   {"iface", cfg_.iface}, {"pid", static_cast<int>(::getpid())}, {"providers", providers}};
        // Rank 0 picks the pairs' backend from every node's answer (loads libnccl, asks CUDA for devices).
        if (cfg_.pair_backend != "fabric") hello["nccl"] = nccl_pair_support(cfg_.pair_gpu);
        return send(hello);
      }
      ::usleep(200000);
    }
    say("cannot reach rank 0 at " + cfg_.coordinator_ip + ":" + std::to_string(cfg_.coordinator_port));
    return false;
  }

  bool send(const Json& m) {
    std::lock_guard<std::mutex> lk(send_mu_);
    return send_message(fd_.get(), m, 10);
  }

  void set_doing(const std::string& d) {
    std::lock_guard<std::mutex> lk(doing_mu_);
    doing_ = d;
  }
  std::string doing() {
    std::lock_guard<std::mutex> lk(doing_mu_);
    return doing_;
  }

  bool group_cancelled(long gid) {
    std::lock_guard<std::mutex> lk(cancel_mu_);
    return cancelled_.count(gid) > 0;
  }

  void io_loop() {
    Clock& clock = steady_clock();
    double last_beat = 0, heard = clock.now_s();
    FrameReader reader;
    while (!stop_io_) {
      const double now = clock.now_s();
      if (now - last_beat >= kBeatInterval) {
        last_beat = now;
        std::lock_guard<std::mutex> lk(send_mu_);
        send_message(fd_.get(), Json{{"t", "beat"}, {"doing", doing()}}, 0.2);
      }
      pollfd p{fd_.get(), POLLIN, 0};
      ::poll(&p, 1, 200);
      if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
        std::string err;
        const bool open = reader.pump(fd_.get(), &err);
        Json m;
        try {
          while (reader.next(&m)) {
            heard = clock.now_s();
            const std::string t = m.value("t", "");
            if (t == "cancel") {
              std::lock_guard<std::mutex> lk(cancel_mu_);
              cancelled_.insert(m.value("gid", -1L));
              if (m.value("local", false)) cancel_local_ = 1;
            } else if (t == "cmd" || t == "bye") {
              std::lock_guard<std::mutex> lk(q_mu_);
              queue_.push_back(std::move(m));
              q_cv_.notify_all();
            }
          }
        } catch (const std::exception& e) {
          say(std::string("rank 0 sent a malformed message: ") + e.what());
          ::_exit(2);
        }
        if (!open) {
          // Rank 0 ended the run (its report is written) or died: mpirun tears us down.
          gone_ = true;
          q_cv_.notify_all();
          cancel_local_ = 1;
          return;
        }
      }
      if (clock.now_s() - heard > cfg_.stall_s + kRootGrace) {
        say("rank 0 silent for " + std::to_string(static_cast<int>(clock.now_s() - heard)) +
            " s (stopped or hung); exiting");
        ::_exit(2);
      }
    }
  }

  void execute(const Json& cmd) {
    const std::string op = cmd.value("op", "");
    const std::string phase = cmd.value("phase", "");
    set_doing(op + (phase.empty() ? "" : " (" + phase + ")"));
    if (!cfg_.stop_phase.empty() && phase == cfg_.stop_phase && !stopped_once_) {
      stopped_once_ = true;
      say("stopping myself (--test-stop) at the start of " + phase);
      ::raise(SIGSTOP);
    }
    Json reply{{"t", "reply"}, {"id", cmd.value("id", -1L)}};
    try {
      if (op == "local") do_local(cmd, reply);
      else if (op == "mesh_listen") do_mesh_listen(cmd, reply);
      else if (op == "mesh_probe") do_mesh_probe(cmd, reply);
      else if (op == "mesh_close") mesh_.reset();
      else if (op == "group_open") do_group_open(cmd, reply);
      else if (op == "group_run") do_group_run(cmd, reply);
      else if (op == "group_close") groups_.erase(cmd.value("gid", -1L));
      else reply["error"] = "unknown command '" + op + "'";
    } catch (const std::exception& e) {
      reply["error"] = e.what();
    }
    set_doing("idle after " + op);
    if (!send(reply)) say("could not send the reply to " + op);
  }

  void do_local(const Json& cmd, Json& reply) {
    SpawnOptions so;
    so.argv = {cfg_.bin_dir + "nodeprobe", "accept"};
    for (const auto& a : cmd.at("args")) so.argv.push_back(a.get<std::string>());
    std::string json_path = cmd.value("json", "");
    std::string tmp_dir;
    if (json_path.empty()) {
      const char* t = std::getenv("TMPDIR");
      tmp_dir = std::string(t && *t ? t : "/tmp") + "/nodeprobe-fleet-XXXXXX";
      if (!::mkdtemp(tmp_dir.data())) throw std::runtime_error("cannot create a temporary directory: " + tmp_dir);
      json_path = tmp_dir + "/accept.json";
    }
    so.argv.insert(so.argv.end(), {"--json", json_path, "--quiet"});
    so.env_unset = launcher_variables();
    so.capture_stdout = true;
    so.capture_stderr = true;
    so.capture_limit = 64 * 1024;
    so.timeout_s = cmd.value("deadline_s", 60.0);
    cancel_local_ = 0;
    so.cancel = &cancel_local_;
    ::unlink(json_path.c_str());
    const SpawnResult r = run_process(so);
    reply["exit"] = r.started ? r.exit_code : -1;
    reply["duration_s"] = r.duration_s;
    reply["how"] = r.describe();
    std::string tail = r.err;
    if (tail.size() > 2000) tail = tail.substr(tail.size() - 2000);
    reply["stderr"] = tail;
    const std::string text = read_text(json_path);
    Json rep = Json::parse(text, nullptr, false);
    if (!text.empty() && !rep.is_discarded() && rep.is_object()) reply["report"] = std::move(rep);
    else
      reply["error"] = !r.started ? "could not start " + so.argv[0] + ": " + r.start_error
                                  : "nodeprobe accept " + r.describe() + " and wrote no report";
    if (!tmp_dir.empty()) {
      ::unlink(json_path.c_str());
      ::rmdir(tmp_dir.c_str());
    }
  }

  void do_mesh_listen(const Json& cmd, Json& reply) {
    mesh_ = std::make_unique<allreduce::MeshEchoServer>();
    int port = -1;
    try {
      mesh_->add_listener(allreduce::tcp_listen(cfg_.ip, cmd.value("port", 0), &port));
    } catch (const std::exception& e) {
      port = -1;
      reply["listen_error"] = e.what();
    }
    mesh_->start();
    reply["ip"] = cfg_.ip;
    reply["port"] = port;
  }

  void do_mesh_probe(const Json& cmd, Json& reply) {
    std::vector<allreduce::MeshTarget> targets;
    for (const auto& t : cmd.at("targets"))
      targets.push_back({t.value("rank", 0), t.value("ip", ""), t.value("port", -1)});
    const auto links = allreduce::probe_mesh_targets(cfg_.rank, targets, cfg_.ip, cmd.value("timeout_s", 2.0));
    Json out = Json::array();
    for (const auto& l : links) out.push_back(allreduce::mesh_link_json(l));
    reply["links"] = out;
  }

  void do_group_open(const Json& cmd, Json& reply) {
    const long gid = cmd.at("gid").get<long>();
    std::unique_ptr<MeasureGroup> g;
    if (cmd.value("backend", "fabric") == "nccl") {
      // NCCL's bootstrap (and its Socket transport) on the fleet's interface unless the user chose one.
      if (!cfg_.iface.empty()) ::setenv("NCCL_SOCKET_IFNAME", cfg_.iface.c_str(), 0);
      g = open_system_nccl_group(cfg_.pair_gpu, cmd.value("index", 0), cmd.value("size", 2),
                                 cmd.value("bytes", static_cast<std::size_t>(8u << 20)));
    } else {
      g = std::make_unique<FabricGroup>(cmd.at("provider").get<std::string>(), cfg_.iface);
    }
    reply["address"] = g->address();
    groups_[gid] = std::move(g);
  }

  void do_group_run(const Json& cmd, Json& reply) {
    const long gid = cmd.at("gid").get<long>();
    auto it = groups_.find(gid);
    if (it == groups_.end()) throw std::runtime_error("group " + std::to_string(gid) + " was not opened here");
    std::unique_ptr<MeasureGroup> g = std::move(it->second);
    groups_.erase(it);
    std::vector<std::string> addresses;
    for (const auto& a : cmd.at("addresses")) addresses.push_back(a.get<std::string>());
    GroupRunOptions o;
    o.bytes = cmd.value("bytes", static_cast<std::size_t>(8u << 20));
    o.min_iters = cmd.value("min_iters", 3);
    o.max_iters = cmd.value("max_iters", 1000);
    o.min_seconds = cmd.value("min_seconds", 0.5);
    o.stall_s = cfg_.stall_s;
    Clock& clock = steady_clock();
    const double until = clock.now_s() + cmd.value("deadline_s", 60.0);
    bool timed_out = false;
    auto stop = [&] {
      if (gone_ || group_cancelled(gid)) return true;
      timed_out = clock.now_s() > until;
      return timed_out;
    };
    try {
      const GroupResult r = g->run(addresses, cmd.at("index").get<int>(), o, stop);
      reply["iter_s"] = r.iter_s;
      reply["wrong"] = r.wrong;
      reply["transport"] = r.transport;
    } catch (const GroupStopped& e) {
      // The deadline, the coordinator's cancel, or the backend's own stall limit (NCCL's text).
      reply["error"] = timed_out ? "did not finish within its deadline of " +
                                       std::to_string(static_cast<int>(cmd.value("deadline_s", 60.0))) + " s"
                       : gone_ || group_cancelled(gid) ? "cancelled: a member of the group was lost"
                                                        : std::string(e.what());
      reply["stopped"] = true;
    }
  }

  WorkerConfig cfg_;
  Fd fd_;
  std::mutex send_mu_, q_mu_, doing_mu_, cancel_mu_;
  std::condition_variable q_cv_;
  std::deque<Json> queue_;
  std::atomic<bool> gone_{false}, stop_io_{false};
  std::set<long> cancelled_;
  volatile std::sig_atomic_t cancel_local_ = 0;
  std::string doing_ = "starting";
  std::thread io_;
  bool stopped_once_ = false;
  std::unique_ptr<allreduce::MeshEchoServer> mesh_;
  std::map<long, std::unique_ptr<MeasureGroup>> groups_;
};

}  // namespace

WorkerEnd run_worker(const WorkerConfig& cfg) {
  Worker w(cfg);
  return w.run();
}

}  // namespace nodeprobe::fleet
