#include "fleet_phases.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <set>

#include "ar_math.h"
#include "mesh.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/report_json.h"
#include "nodeprobe/stats.h"

namespace nodeprobe::fleet {
namespace {

// Seconds a command may take to be answered beyond its own deadline (the
// reply travels, a loaded node answers late).
constexpr double kReplySlack = 10;
// Opening an endpoint, listening, closing: quick everywhere.
constexpr double kSetupDeadline = 30;

double now() { return steady_clock().now_s(); }

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

const std::string& host_of(const FleetContext& c, int rank) {
  return c.report->nodes[static_cast<std::size_t>(rank)].host;
}

void say(const FleetContext& c, const std::string& line) {
  if (c.log) *c.log << "# " << line << "\n" << std::flush;
}

// The phase's deadline, within what --timeout leaves.
double phase_deadline(const FleetContext& c, double seconds) {
  const double d = now() + seconds;
  return c.deadline_s > 0 ? std::min(d, c.deadline_s) : d;
}

void begin_phase(FleetContext& c, const std::string& name, double deadline_s) {
  FleetPhase p;
  p.name = name;
  p.deadline_s = deadline_s;
  p.nodes = static_cast<int>(c.co->alive_ranks().size());
  c.report->phases.push_back(p);
}

// Ends a phase: nodes lost during it make it `timeout` (the phase itself went on without them).
void end_phase(FleetContext& c, const std::string& name, double t0, Status ok_status, std::string reason = {}) {
  mark_lost_nodes(c);
  FleetPhase* p = nullptr;
  for (auto& ph : c.report->phases)
    if (ph.name == name) p = &ph;
  if (!p) return;
  p->duration_s = now() - t0;
  p->status = ok_status;
  std::string lost;
  for (const auto& [r, l] : c.co->lost())
    if (l.phase == name) lost += (lost.empty() ? "" : "; ") + host_of(c, r) + ": " + l.reason;
  if (!lost.empty()) {
    p->status = Status::kTimeout;
    reason += (reason.empty() ? "" : "; ") + std::string("lost ") + lost;
  }
  if (c.deadline_s > 0 && now() >= c.deadline_s) {
    c.out_of_time = true;
    if (p->status == Status::kPass) p->status = Status::kTimeout;
    reason += (reason.empty() ? "" : "; ") + std::string("--timeout passed");
  }
  p->reason = reason;
  say(c, name + ": " + std::string(to_string(p->status)) + " in " + secs(p->duration_s) +
             (reason.empty() ? "" : " (" + reason + ")"));
}

struct GroupOutcome {
  GroupOutcome() = default;
  GroupOutcome(Status s, std::string why) : status(s), reason(std::move(why)) {}
  Status status = Status::kError;
  std::string reason;
  std::vector<double> iter_s;  // per timed allreduce: the slowest member's time
  long wrong = 0;
  std::string transport;
};

// Runs measurement groups at once (the pairs of one round, or one ring
// point): every member opens an endpoint, the addresses go round, every
// member runs the ring. A member lost meanwhile cancels its group only.
std::vector<GroupOutcome> run_groups(FleetContext& c, const std::vector<std::vector<int>>& groups,
                                     const std::string& phase, double run_deadline_s, const std::string& backend) {
  static long next_gid = 1;
  const diag::FleetOptions& opt = *c.opt;
  std::vector<GroupOutcome> out(groups.size());
  std::vector<long> gid(groups.size());
  std::map<int, std::size_t> group_of;
  std::map<int, long> want;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    gid[g] = next_gid++;
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      const int r = groups[g][i];
      group_of[r] = g;
      want[r] = c.co->send(r, {{"op", "group_open"},
                               {"phase", phase},
                               {"gid", gid[g]},
                               {"backend", backend},
                               {"provider", c.provider},
                               {"index", static_cast<int>(i)},
                               {"size", static_cast<int>(groups[g].size())},
                               {"bytes", diag::fleet_pair_bytes(opt)}});
    }
  }
  auto lost_reason = [&](int r) {
    const auto it = c.co->lost().find(r);
    return host_of(c, r) + " was lost" + (it == c.co->lost().end() ? std::string() : ": " + it->second.reason);
  };
  auto opened = c.co->wait(want, phase_deadline(c, kSetupDeadline), phase);
  std::vector<bool> ok(groups.size(), true);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (int r : groups[g]) {
      if (!ok[g]) break;
      auto it = opened.find(r);
      if (!c.co->alive(r)) {
        ok[g] = false;
        out[g] = GroupOutcome(Status::kTimeout, lost_reason(r));
      } else if (it == opened.end()) {
        ok[g] = false;
        out[g] = GroupOutcome(Status::kTimeout, host_of(c, r) + " did not open its endpoint in time");
      } else if (it->second.contains("error")) {
        ok[g] = false;
        out[g] = GroupOutcome(Status::kError, host_of(c, r) + ": " + it->second.value("error", ""));
      }
    }
    if (!ok[g])
      for (int r : groups[g])
        if (opened.count(r) && c.co->alive(r)) c.co->send(r, {{"op", "group_close"}, {"phase", phase}, {"gid", gid[g]}});
  }
  want.clear();
  const double run_s = std::max(1.0, std::min(run_deadline_s, (c.deadline_s > 0 ? c.deadline_s - now() : 1e9)));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!ok[g]) continue;
    Json addresses = Json::array();
    for (int r : groups[g]) addresses.push_back(opened[r].value("address", ""));
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      const int r = groups[g][i];
      want[r] = c.co->send(r, {{"op", "group_run"},
                               {"phase", phase},
                               {"gid", gid[g]},
                               {"addresses", addresses},
                               {"index", static_cast<int>(i)},
                               {"bytes", diag::fleet_pair_bytes(opt)},
                               {"min_iters", opt.profile == "full" ? 10 : 3},
                               {"min_seconds", opt.profile == "full" ? 2.0 : 0.5},
                               {"max_iters", 1000},
                               {"deadline_s", run_s}});
    }
  }
  // A lost member would leave the others waiting for it until their deadline: cancel its group.
  auto on_lost = [&](int r) {
    auto it = group_of.find(r);
    if (it == group_of.end()) return;
    for (int m : groups[it->second])
      if (m != r) c.co->notify(m, {{"t", "cancel"}, {"gid", gid[it->second]}}, phase);
  };
  auto ran = c.co->wait(want, now() + run_s + kReplySlack, phase, on_lost);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!ok[g]) continue;
    GroupOutcome& o = out[g];
    o.status = Status::kPass;
    std::string why;
    for (int r : groups[g]) {
      auto it = ran.find(r);
      if (!c.co->alive(r)) {
        o.status = Status::kTimeout;
        why = lost_reason(r);
        break;
      }
      if (it == ran.end()) {
        o.status = Status::kTimeout;
        why = host_of(c, r) + " did not answer within " + secs(run_s + kReplySlack);
        continue;
      }
      const Json& rep = it->second;
      if (rep.contains("error")) {
        if (o.status == Status::kPass) {
          o.status = rep.value("stopped", false) ? Status::kTimeout : Status::kError;
          why = host_of(c, r) + ": " + rep.value("error", "");
        }
        continue;
      }
      const auto iters = rep.value("iter_s", std::vector<double>{});
      if (o.iter_s.empty()) o.iter_s = iters;
      for (std::size_t i = 0; i < iters.size() && i < o.iter_s.size(); ++i) o.iter_s[i] = std::max(o.iter_s[i], iters[i]);
      o.wrong += std::max(0L, rep.value("wrong", 0L));
      o.transport = rep.value("transport", "");
    }
    if (o.status == Status::kPass && o.wrong > 0) {
      o.status = Status::kFail;
      why = std::to_string(o.wrong) + " wrong elements in the data check after timing";
    }
    if (o.status == Status::kPass && o.iter_s.empty()) {
      o.status = Status::kError;
      why = "no timed allreduce came back";
    }
    o.reason = why;
  }
  return out;
}

// busbw samples (GB/s) of an allreduce of `bytes` over `n` members from its times.
std::vector<double> busbw_samples(const std::vector<double>& iter_s, std::size_t bytes, int n) {
  std::vector<double> v;
  for (double t : iter_s)
    if (t > 0) v.push_back(allreduce::allreduce_busbw(allreduce::algbw_gbps(bytes, t), n));
  return v;
}

}  // namespace

PairBackendChoice choose_pair_backend(const std::string& requested, const std::vector<Json>& hellos) {
  if (requested == "fabric") return {"fabric", "--pair-backend fabric"};
  std::string cannot, version;
  for (const Json& h : hellos) {
    const Json n = h.value("nccl", Json::object());
    if (!n.value("usable", false)) {
      cannot = h.value("host", "rank " + std::to_string(h.value("rank", -1))) + ": " +
               n.value("why", std::string("did not report NCCL support"));
      break;
    }
    if (version.empty()) version = n.value("version", "");
  }
  if (hellos.empty()) cannot = "no node reported";
  const std::string how = requested == "nccl" ? "--pair-backend nccl" : "auto";
  if (cannot.empty())
    return {"nccl", how + ": every node has a usable GPU and NCCL" + (version.empty() ? "" : " " + version)};
  if (requested == "nccl") return {"", "--pair-backend nccl, but " + cannot};
  return {"fabric", "auto: NCCL cannot carry the pairs (" + cannot + ")"};
}

PairBackendChoice choose_pair_backend(const FleetContext& c) {
  std::vector<Json> hellos;
  for (int r : c.co->alive_ranks()) hellos.push_back(c.co->hello(r));
  return choose_pair_backend(c.opt->pair_backend, hellos);
}

std::string choose_provider(const std::string& forced, const std::vector<Json>& hellos) {
  if (!forced.empty()) return forced;
  for (const Json& h : hellos) {
    const Json p = h.value("providers", Json::array());
    if (std::find(p.begin(), p.end(), "efa") == p.end()) return "tcp";
  }
  return hellos.empty() ? "tcp" : "efa";
}

std::string choose_provider(const FleetContext& c) {
  std::vector<Json> hellos;
  for (int r : c.co->alive_ranks()) hellos.push_back(c.co->hello(r));
  return choose_provider(c.opt->provider, hellos);
}

void mark_lost_nodes(FleetContext& c) {
  for (const auto& [r, l] : c.co->lost()) {
    FleetNode& n = c.report->nodes[static_cast<std::size_t>(r)];
    if (!n.timed_out_in.empty()) continue;
    n.verdict = l.status;
    n.timed_out_in = l.phase;
    n.reason = l.reason;
  }
}

void phase_local(FleetContext& c) {
  const diag::FleetOptions& opt = *c.opt;
  // The nodes' accept has its own budget (--budget among the accept arguments, else the profile's).
  double budget = opt.profile == "full" ? 600 : 60;
  for (std::size_t i = 0; i < opt.accept_args.size(); ++i) {
    const std::string& a = opt.accept_args[i];
    std::string v;
    if (a.rfind("--budget=", 0) == 0) v = a.substr(9);
    else if (a == "--budget" && i + 1 < opt.accept_args.size()) v = opt.accept_args[i + 1];
    if (!v.empty()) budget = std::atof(v.c_str()) > 0 ? std::atof(v.c_str()) : budget;
  }
  const double seconds = budget + 30;
  const double t0 = now();
  const double deadline = phase_deadline(c, seconds);
  begin_phase(c, "local", deadline - t0);
  say(c, "local: nodeprobe accept --profile " + opt.profile + " on " + std::to_string(c.co->alive_ranks().size()) +
             " node(s) at once (deadline " + secs(deadline - t0) + ")");
  Json args = Json::array({"--profile", opt.profile});
  for (const auto& a : opt.accept_args) args.push_back(a);
  if (!opt.label.empty()) args.insert(args.end(), {"--label", opt.label});
  std::map<int, long> want;
  for (int r : c.co->alive_ranks()) {
    Json cmd{{"op", "local"}, {"phase", "local"}, {"args", args}, {"deadline_s", deadline - now()}};
    if (!opt.node_json_dir.empty()) cmd["json"] = opt.node_json_dir + "/" + host_of(c, r) + ".json";
    want[r] = c.co->send(r, cmd);
  }
  auto replies = c.co->wait(want, deadline + kReplySlack, "local");
  int failed = 0;
  for (int r : c.co->alive_ranks()) {
    FleetNode& n = c.report->nodes[static_cast<std::size_t>(r)];
    auto it = replies.find(r);
    if (it == replies.end()) {
      n.verdict = Status::kTimeout;
      n.reason = "its accept did not answer within " + secs(deadline - t0 + kReplySlack);
      n.local = {{"status", "timeout"}};
      ++failed;
      continue;
    }
    const Json& rep = it->second;
    n.local = {{"status", rep.contains("report") ? "done" : "error"},
               {"exit", rep.value("exit", -1)},
               {"duration_s", rep.value("duration_s", 0.0)}};
    if (!opt.node_json_dir.empty() && rep.contains("report")) n.report = opt.node_json_dir + "/" + n.host + ".json";
    if (!rep.contains("report")) {
      n.verdict = Status::kError;
      n.reason = "local accept: " + rep.value("error", std::string("no report")) +
                 (rep.value("stderr", "").empty() ? "" : "; stderr: " + rep.value("stderr", ""));
      ++failed;
      continue;
    }
    try {
      Report node = rep["report"].get<Report>();
      n.verdict = node.verdict;
      Json probes = Json::array();
      for (const auto& p : node.probes) probes.push_back({{"name", p.name}, {"status", to_string(p.status)}});
      n.local["verdict"] = to_string(node.verdict);
      n.local["probes"] = probes;
      c.node_reports[static_cast<std::size_t>(r)] = std::move(node);
      c.have_report[static_cast<std::size_t>(r)] = true;
    } catch (const std::exception& e) {
      n.verdict = Status::kError;
      n.reason = std::string("local accept report unreadable: ") + e.what();
      ++failed;
    }
  }
  c.timings.local_s = now() - t0;
  end_phase(c, "local", t0, failed ? Status::kWarn : Status::kPass,
            failed ? std::to_string(failed) + " node(s) without a local report" : "");
}

void phase_mesh(FleetContext& c) {
  const double t0 = now();
  const auto live = c.co->alive_ranks();
  begin_phase(c, "mesh", kSetupDeadline * 2);
  if (live.size() < 2) {
    end_phase(c, "mesh", t0, Status::kSkip, "fewer than 2 nodes");
    return;
  }
  say(c, "mesh: every pair over TCP");
  std::map<int, long> want;
  for (int r : live) want[r] = c.co->send(r, {{"op", "mesh_listen"}, {"phase", "mesh"}, {"port", 0}});
  auto listening = c.co->wait(want, phase_deadline(c, kSetupDeadline), "mesh");
  const int n = static_cast<int>(c.report->nodes.size());
  allreduce::MeshResult m;
  m.ip.assign(static_cast<std::size_t>(n), "");
  m.port.assign(static_cast<std::size_t>(n), -1);
  m.listen_error.assign(static_cast<std::size_t>(n), "not in the mesh (lost)");
  for (const auto& [r, rep] : listening) {
    m.ip[static_cast<std::size_t>(r)] = rep.value("ip", "");
    m.port[static_cast<std::size_t>(r)] = rep.value("port", -1);
    m.listen_error[static_cast<std::size_t>(r)] = rep.value("listen_error", "");
  }
  want.clear();
  constexpr double kConnect = 2;
  for (int r : c.co->alive_ranks()) {
    if (!listening.count(r)) continue;
    Json targets = Json::array();
    for (int t : c.co->alive_ranks())
      if (t != r && listening.count(t))
        targets.push_back({{"rank", t}, {"ip", m.ip[static_cast<std::size_t>(t)]}, {"port", m.port[static_cast<std::size_t>(t)]}});
    want[r] = c.co->send(r, {{"op", "mesh_probe"}, {"phase", "mesh"}, {"targets", targets}, {"timeout_s", kConnect}});
  }
  auto probed = c.co->wait(want, phase_deadline(c, kSetupDeadline), "mesh");
  for (const auto& [r, rep] : probed)
    for (const auto& l : rep.value("links", Json::array())) m.links.push_back(allreduce::mesh_link_from_json(l));
  want.clear();
  for (int r : c.co->alive_ranks()) want[r] = c.co->send(r, {{"op", "mesh_close"}, {"phase", "mesh"}});
  c.co->wait(want, phase_deadline(c, 5), "mesh");

  const Check chk = allreduce::mesh_check(m, c.hosts);
  c.report->mesh = allreduce::mesh_json(m, c.hosts);
  c.report->mesh["check"] = {{"status", to_string(chk.status)}, {"observed", chk.observed}, {"fix", chk.fix}};
  // An unreachable node is named on the receiving end: a security group or
  // firewall drops what comes in.
  std::map<int, int> inbound_failures;
  for (const auto& l : m.links)
    if (!l.ok && c.co->alive(l.from) && c.co->alive(l.to)) ++inbound_failures[l.to];
  for (const auto& [r, k] : inbound_failures) {
    FleetNode& node = c.report->nodes[static_cast<std::size_t>(r)];
    node.findings.push_back({"net.unreachable", Severity::kError,
                             "Not reachable over TCP from " + std::to_string(k) + " of " +
                                 std::to_string(c.co->alive_ranks().size() - 1) + " peers",
                             "tune"});
  }
  if (chk.status != Status::kPass)
    c.report->findings.push_back({"net.unreachable", Severity::kError, chk.observed.substr(0, 300), "tune"});
  c.timings.mesh_s = now() - t0;
  end_phase(c, "mesh", t0, chk.status == Status::kPass ? Status::kPass : Status::kFail,
            chk.status == Status::kPass ? "" : chk.observed.substr(0, 300));
}

namespace {

// How many of the suspects the judge named before a re-measure it still names after.
template <typename T>
int still_named(const std::vector<T>& before, const std::vector<T>& after) {
  return static_cast<int>(std::count_if(before.begin(), before.end(), [&](const T& x) {
    return std::find(after.begin(), after.end(), x) != after.end();
  }));
}

// Measures pair `i` again, alone, and keeps the better of the two medians;
// the pair's reason says what the first one was. False when it could not be
// measured (out of time, a lost end, a failed run).
bool remeasure_alone(FleetContext& c, std::size_t i, std::size_t bytes, double round_s) {
  if (c.out_of_time || (c.deadline_s > 0 && now() >= c.deadline_s)) {
    c.out_of_time = true;
    return false;
  }
  FleetPair& p = c.report->pairs[i];
  if (!c.co->alive(p.rank_a) || !c.co->alive(p.rank_b)) return false;
  const auto outcomes = run_groups(c, {{p.rank_a, p.rank_b}}, "pairs", round_s, c.pair_backend);
  if (outcomes.empty() || outcomes[0].status != Status::kPass) return false;
  const Stats again = compute_stats(busbw_samples(outcomes[0].iter_s, bytes, 2));
  char first[160];
  std::snprintf(first, sizeof first, "re-measured alone: %.3g GB/s (%.3g GB/s in round %d beside other pairs)",
                again.median, p.busbw, p.round + 1);
  p.reason = first;
  if (again.median > p.busbw) {
    p.stats = again;
    p.busbw = again.median;
  }
  return true;
}

// A link the judge would call slow is measured again, alone, before it is
// judged: a pair that shared its round with others on a busy host (a CPU
// the other pair's ranks took, a TCP stall) is slow for a moment, a bad
// cable or switch port is slow every time.
void remeasure_suspects(FleetContext& c, std::size_t bytes, double round_s, std::set<std::size_t>& done) {
  const OutlierOptions oo = outlier_options(*c.opt);
  const std::vector<std::size_t> suspects = link_suspects(*c.report, oo);
  if (suspects.empty()) return;
  for (std::size_t i : suspects)
    if (remeasure_alone(c, i, bytes, round_s)) done.insert(i);
  say(c, "pairs: " + std::to_string(suspects.size()) + " slow link(s) measured again alone, " +
             std::to_string(still_named(suspects, link_suspects(*c.report, oo))) + " still slow");
}

// A node the judge would call slow has its pairs (those not measured alone
// already) measured again, alone: with 4 nodes a node's score is the median
// of 2 or 3 pairs, and one round on a busy host must not send it to reboot.
// A slow NIC or host is slow every time.
void remeasure_slow_nodes(FleetContext& c, std::size_t bytes, double round_s, std::set<std::size_t>& done) {
  const OutlierOptions oo = outlier_options(*c.opt);
  const std::vector<std::string> slow = node_suspects(*c.report, oo);
  if (slow.empty()) return;
  int pairs = 0;
  for (const std::string& host : slow)
    for (std::size_t i = 0; i < c.report->pairs.size(); ++i) {
      const FleetPair& p = c.report->pairs[i];
      if ((p.a != host && p.b != host) || p.status != Status::kPass || done.count(i)) continue;
      if (remeasure_alone(c, i, bytes, round_s)) {
        done.insert(i);
        ++pairs;
      }
    }
  say(c, "pairs: " + std::to_string(slow.size()) + " slow node(s), " + std::to_string(pairs) +
             " of their pairs measured again alone, " +
             std::to_string(still_named(slow, node_suspects(*c.report, oo))) + " still slow");
}

}  // namespace

OutlierOptions outlier_options(const diag::FleetOptions& opt) {
  OutlierOptions oo;
  oo.share = opt.share;
  oo.mad_k = opt.mad_k;
  return oo;
}

void phase_pairs(FleetContext& c) {
  const diag::FleetOptions& opt = *c.opt;
  const double t0 = now();
  const auto live = c.co->alive_ranks();
  const auto schedule = pair_schedule(static_cast<int>(live.size()));
  const int repeats = opt.pairs == "exhaustive" ? 3 : 1;
  const double round_s = opt.profile == "full" ? 300 : 60;
  begin_phase(c, "pairs", round_s * static_cast<double>(schedule.size()) * repeats);
  if (live.size() < 2) {
    end_phase(c, "pairs", t0, Status::kSkip, "fewer than 2 nodes");
    return;
  }
  const std::size_t bytes = diag::fleet_pair_bytes(opt);
  const std::string over = c.pair_backend == "nccl" ? std::string("nccl") : "fabric:" + c.provider;
  say(c, "pairs: " + std::to_string(schedule.size()) + " round(s) x " + std::to_string(repeats) + " of disjoint pairs, " +
             format_size(bytes) + " allreduce over " + over);
  std::map<std::pair<int, int>, std::size_t> index;
  std::map<std::size_t, std::vector<double>> samples;
  int timeouts = 0;
  for (int rep = 0; rep < repeats && !c.out_of_time; ++rep) {
    for (std::size_t ri = 0; ri < schedule.size(); ++ri) {
      if (c.deadline_s > 0 && now() >= c.deadline_s) {
        c.out_of_time = true;
        break;
      }
      std::vector<std::vector<int>> groups;
      std::vector<std::size_t> which;
      for (const PairSlot& s : schedule[ri]) {
        const int a = live[static_cast<std::size_t>(s.a)], b = live[static_cast<std::size_t>(s.b)];
        auto [it, fresh] = index.emplace(std::make_pair(a, b), c.report->pairs.size());
        if (fresh) {
          FleetPair p;
          p.a = host_of(c, a);
          p.b = host_of(c, b);
          p.rank_a = a;
          p.rank_b = b;
          p.round = static_cast<int>(ri);
          p.status = Status::kSkip;
          c.report->pairs.push_back(p);
        }
        FleetPair& p = c.report->pairs[it->second];
        if (!c.co->alive(a) || !c.co->alive(b)) {
          if (p.status == Status::kSkip) {
            p.status = Status::kTimeout;
            p.reason = "not measured: " + (c.co->alive(a) ? p.b : p.a) + " was lost before its round";
          }
          continue;
        }
        groups.push_back({a, b});
        which.push_back(it->second);
      }
      const double r0 = now();
      const auto outcomes = run_groups(c, groups, "pairs", round_s, c.pair_backend);
      c.timings.round_s.push_back(now() - r0);
      for (std::size_t g = 0; g < outcomes.size(); ++g) {
        FleetPair& p = c.report->pairs[which[g]];
        const GroupOutcome& o = outcomes[g];
        if (!o.transport.empty()) p.transport = o.transport;
        if (o.status == Status::kPass) {
          auto s = busbw_samples(o.iter_s, bytes, 2);
          samples[which[g]].insert(samples[which[g]].end(), s.begin(), s.end());
          if (p.status != Status::kTimeout && p.status != Status::kError && p.status != Status::kFail)
            p.status = Status::kPass;
        } else {
          p.status = o.status;
          p.reason = o.reason;
          if (o.status == Status::kTimeout) ++timeouts;
        }
      }
      say(c, "pairs: round " + std::to_string(ri + 1) + "/" + std::to_string(schedule.size()) + " in " +
                 secs(now() - r0));
    }
  }
  for (auto& [i, s] : samples) {
    FleetPair& p = c.report->pairs[i];
    if (p.status != Status::kPass) continue;
    p.stats = compute_stats(s);
    p.busbw = p.stats.median;
  }
  std::set<std::size_t> alone;
  remeasure_suspects(c, bytes, round_s, alone);
  remeasure_slow_nodes(c, bytes, round_s, alone);
  c.timings.repeats = repeats;
  end_phase(c, "pairs", t0, timeouts ? Status::kTimeout : Status::kPass,
            timeouts ? std::to_string(timeouts) + " pair(s) timed out" : "");
}

void phase_ring(FleetContext& c) {
  const diag::FleetOptions& opt = *c.opt;
  const double t0 = now();
  const std::size_t bytes = diag::fleet_pair_bytes(opt);
  // Two nodes are what the pairs measured (the same ring, every pair): their
  // median is the 2-node point, so the ring grows from 4.
  std::vector<double> pair_busbw;
  for (const auto& p : c.report->pairs)
    if (p.status == Status::kPass && p.busbw > 0) pair_busbw.push_back(p.busbw);
  const int live = static_cast<int>(c.co->alive_ranks().size());
  std::vector<int> points;
  for (int k = pair_busbw.empty() ? 2 : 4; k < live; k *= 2) points.push_back(k);
  if (live >= 2 && (pair_busbw.empty() || live >= 3)) points.push_back(live);
  const double point_s = opt.profile == "full" ? 300 : 60;
  begin_phase(c, "ring", point_s * static_cast<double>(points.size()));
  c.timings.ring_first = pair_busbw.empty() ? 2 : 4;
  double base = 0;
  if (!pair_busbw.empty()) {
    FleetRingPoint pt;
    pt.nodes = 2;
    pt.source = "pairs";
    pt.bytes = static_cast<double>(bytes);
    pt.stats = compute_stats(pair_busbw);
    pt.busbw = base = pt.stats.median;
    pt.time_s = pt.busbw > 0 ? static_cast<double>(bytes) / (pt.busbw * 1e9) : 0;
    pt.retention = 1;
    c.report->ring.push_back(pt);
  }
  if (live < 2) {
    end_phase(c, "ring", t0, Status::kSkip, "fewer than 2 nodes");
    return;
  }
  int bad = 0;
  for (int k : points) {
    FleetRingPoint pt;
    pt.bytes = static_cast<double>(bytes);
    // A member lost during the point: measure again over the nodes still there (once).
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (c.deadline_s > 0 && now() >= c.deadline_s) {
        c.out_of_time = true;
        break;
      }
      std::vector<int> members = c.co->alive_ranks();
      if (static_cast<int>(members.size()) > k) members.resize(static_cast<std::size_t>(k));
      if (members.size() < 2) break;
      pt.nodes = static_cast<int>(members.size());
      say(c, "ring: " + std::to_string(pt.nodes) + " nodes");
      const std::size_t lost_before = c.co->lost().size();
      const double p0 = now();
      // The ring stays on libfabric whatever carries the pairs.
      const auto o = run_groups(c, {members}, "ring", point_s, "fabric").front();
      c.timings.ring_point_s.push_back(now() - p0);
      pt.status = o.status;
      pt.reason = o.reason;
      if (o.status == Status::kPass) {
        pt.stats = compute_stats(busbw_samples(o.iter_s, bytes, pt.nodes));
        pt.busbw = pt.stats.median;
        std::vector<double> t = o.iter_s;
        std::sort(t.begin(), t.end());
        pt.time_s = t[t.size() / 2];
        if (base == 0) base = pt.busbw;
        pt.retention = base > 0 ? pt.busbw / base : 0;
        break;
      }
      if (c.co->lost().size() == lost_before) break;  // not a lost member: measuring again would not help
    }
    if (pt.nodes == 0) continue;
    if (pt.status != Status::kPass) ++bad;
    if (!c.report->ring.empty() && c.report->ring.back().nodes == pt.nodes) continue;  // the nodes left made it a repeat
    c.report->ring.push_back(pt);
  }
  end_phase(c, "ring", t0, bad ? Status::kTimeout : Status::kPass, bad ? std::to_string(bad) + " point(s) failed" : "");
}

}  // namespace nodeprobe::fleet
