#include "scaling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "ar_math.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/stats.h"

namespace nodeprobe::allreduce {

double model_allreduce_s(double bytes, int nranks, double alpha_s, double busbw_gbps) {
  if (nranks <= 1) return 0;
  double t = 2.0 * (nranks - 1) * alpha_s;
  if (busbw_gbps > 0) t += bytes * allreduce_bus_factor(nranks) / (busbw_gbps * 1e9);
  return t;
}

double model_step_s(double compute_s, int buckets, double bucket_s, double last_bucket_s) {
  if (buckets <= 0) return compute_s;
  const double slice = compute_s / buckets;
  double finish = 0;
  for (int i = 0; i < buckets; ++i) {
    const double ready = (i + 1) * slice;
    finish = std::max(finish, ready) + (i == buckets - 1 ? last_bucket_s : bucket_s);
  }
  return std::max(finish, compute_s);
}

double scaling_efficiency(double throughput_n, int nodes, double throughput_1) {
  if (nodes <= 0 || !(throughput_1 > 0)) return 0;
  return throughput_n / (nodes * throughput_1);
}

std::string limiting_term(double compute_s, int buckets, double latency_s_per_bucket,
                          double bandwidth_s_per_bucket, double step_s) {
  if (latency_s_per_bucket <= 0 && bandwidth_s_per_bucket <= 0) return "compute (one rank: nothing to reduce)";
  const double exposed = step_s - compute_s;
  if (exposed <= 0.05 * step_s) return "compute (communication hidden behind it)";
  if (latency_s_per_bucket * buckets >= bandwidth_s_per_bucket * buckets)
    return "latency (2(n-1) ring steps per bucket)";
  return "bandwidth (2(n-1)/n x bucket bytes at the bus bandwidth)";
}

void fit_alpha_busbw(double small_bytes, double small_s, double big_bytes, double big_s, int nranks,
                     double* alpha_s, double* busbw_gbps) {
  *alpha_s = 0;
  *busbw_gbps = 0;
  if (nranks <= 1) return;
  const double steps = 2.0 * (nranks - 1);
  // The small message's bandwidth share is removed with the big one's estimate (two passes).
  double alpha = small_s / steps, bw = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const double bw_part = big_s - steps * alpha;
    bw = bw_part > 0 ? big_bytes * allreduce_bus_factor(nranks) / bw_part / 1e9 : 0;
    if (bw > 0) alpha = std::max(0.0, (small_s - small_bytes * allreduce_bus_factor(nranks) / (bw * 1e9)) / steps);
  }
  *alpha_s = alpha;
  *busbw_gbps = bw;
}

namespace {

// Reduces buckets handed over by the compute loop, one after another.
class CommThread {
 public:
  CommThread(Backend& b, const std::vector<std::size_t>& counts) : b_(b), counts_(counts) {
    thread_ = std::thread([this] { loop(); });
  }
  ~CommThread() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void submit(std::size_t bucket) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      queue_.push_back(bucket);
    }
    cv_.notify_all();
  }
  void wait_done(std::size_t n) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return done_ >= n || error_; });
    if (error_) std::rethrow_exception(error_);
    done_ = 0;
  }

 private:
  void loop() {
    try {
      b_.bind_thread();
      for (;;) {
        std::size_t bucket;
        {
          std::unique_lock<std::mutex> lk(mu_);
          cv_.wait(lk, [&] { return quit_ || !queue_.empty(); });
          if (quit_) return;
          bucket = queue_.front();
          queue_.erase(queue_.begin());
        }
        b_.launch(counts_[bucket], true);
        b_.wait();
        {
          std::lock_guard<std::mutex> lk(mu_);
          ++done_;
        }
        cv_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu_);
      error_ = std::current_exception();
      cv_.notify_all();
    }
  }

  Backend& b_;
  const std::vector<std::size_t>& counts_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::size_t> queue_;
  std::size_t done_ = 0;
  bool quit_ = false;
  std::exception_ptr error_;
};

double time_op_max(Backend& b, MPI_Comm comm, std::size_t count, int iters) {
  b.launch(count, true);
  b.wait();
  NP_CHECK_MPI(MPI_Barrier(comm));
  const double t0 = steady_clock().now_s();
  for (int i = 0; i < iters; ++i) b.launch(count, true);
  b.wait();
  const double mine = (steady_clock().now_s() - t0) / iters;
  double worst = 0;
  NP_CHECK_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm));
  return worst;
}

void sleep_s(double s) {
  if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

void measure_point(const BackendContext& ctx, const Target& t, MPI_Comm sub, int k,
                   const std::vector<std::size_t>& counts, std::size_t small, bool thread_support,
                   const ScalingResult& res, const ScalingHooks& hooks, ScalingPoint& pt, double& small_s,
                   double& big_s) {
  BackendContext c = ctx;
  c.comm = sub;
  c.single_host = k == 1;
  const std::size_t esize = dtype_size(ctx.plan->dtype);
  if (hooks.phase) hooks.phase("scaling " + std::to_string(k) + " node(s) setup");
  auto b = make_backend(c, t);
  b->setup(std::max(counts.front(), small));
  small_s = time_op_max(*b, sub, small, 5);
  big_s = time_op_max(*b, sub, counts.front(), 3);
  pt.bucket_allreduce_s = big_s;
  pt.busbw_gbps = allreduce_busbw(algbw_gbps(counts.front() * esize, big_s), pt.ranks);
  std::vector<double> steps;
  std::unique_ptr<CommThread> comm_thread;
  if (thread_support) comm_thread = std::make_unique<CommThread>(*b, counts);
  for (int s = -1; s < ctx.opt->steps; ++s) {  // step -1 warms up
    if (hooks.phase) hooks.phase("scaling " + std::to_string(k) + " node(s) step " + std::to_string(s + 1));
    NP_CHECK_MPI(MPI_Barrier(sub));
    const double t0 = steady_clock().now_s();
    for (std::size_t i = 0; i < counts.size(); ++i) {
      // Bucket i is ready at (i+1) x compute/buckets after the start, whatever a sleep overshot.
      sleep_s(t0 + res.compute_s * static_cast<double>(i + 1) / res.buckets - steady_clock().now_s());
      if (comm_thread) {
        comm_thread->submit(i);
      } else {
        b->launch(counts[i], true);
        b->wait();
      }
    }
    if (comm_thread) comm_thread->wait_done(counts.size());
    const double mine = steady_clock().now_s() - t0;
    double worst = 0;
    NP_CHECK_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, sub));
    if (s >= 0) steps.push_back(worst);
  }
  comm_thread.reset();
  pt.step_stats = compute_stats(steps);
  pt.step_s = pt.step_stats.median;
}

}  // namespace

std::string scaling_host_problem(const HostMap& hosts) {
  const int nodes = hosts.node_count();
  if (nodes < 2)
    return "--scaling needs ranks on at least 2 hosts; all " + std::to_string(hosts.rank_host.size()) +
           " ranks run on " + (hosts.hosts.empty() ? std::string("one host") : hosts.hosts.front());
  std::vector<int> per_node(static_cast<std::size_t>(nodes), 0);
  for (int n : hosts.rank_node) ++per_node[static_cast<std::size_t>(n)];
  if (std::adjacent_find(per_node.begin(), per_node.end(), std::not_equal_to<int>()) != per_node.end())
    return "--scaling needs the same number of ranks on every host";
  return {};
}

ScalingResult run_scaling(const BackendContext& ctx, const Target& t, const HostMap& hosts,
                          bool thread_support, const ScalingHooks& hooks) {
  const Options& opt = *ctx.opt;
  const Plan& plan = *ctx.plan;
  const int nodes = hosts.node_count();
  if (const std::string why = scaling_host_problem(hosts); !why.empty()) throw InputError(why);
  std::vector<int> per_node(static_cast<std::size_t>(nodes), 0);
  for (int n : hosts.rank_node) ++per_node[static_cast<std::size_t>(n)];

  ScalingResult res;
  res.ranks_per_node = per_node.front();
  res.compute_s = opt.compute_ms / 1000;
  const std::size_t esize = dtype_size(plan.dtype);
  const std::size_t bucket_bytes =
      std::max(esize, static_cast<std::size_t>(opt.bucket_mb * 1048576.0) / esize * esize);
  const std::size_t grad = std::max(plan.grad_bytes / esize * esize, esize);
  res.buckets = static_cast<int>((grad + bucket_bytes - 1) / bucket_bytes);
  res.bucket_bytes = static_cast<double>(bucket_bytes);
  res.grad_bytes = static_cast<double>(grad);
  res.overlap = thread_support;
  std::vector<std::size_t> counts(static_cast<std::size_t>(res.buckets), bucket_bytes / esize);
  counts.back() = (grad - (static_cast<std::size_t>(res.buckets) - 1) * bucket_bytes) / esize;
  const std::size_t small = std::max<std::size_t>(1, 4096 / esize);

  std::vector<int> ks;
  for (int k = 1; k < nodes; k *= 2) ks.push_back(k);
  ks.push_back(nodes);
  int rank = 0;
  MPI_Comm_rank(ctx.comm, &rank);
  const int my_node = hosts.rank_node[static_cast<std::size_t>(rank)];
  double small_s = 0, big_s = 0;
  int last_ranks = 1;

  for (const int k : ks) {
    MPI_Comm sub = MPI_COMM_NULL;
    NP_CHECK_MPI(MPI_Comm_split(ctx.comm, my_node < k ? 0 : MPI_UNDEFINED, rank, &sub));
    ScalingPoint pt;
    pt.nodes = k;
    pt.ranks = k * res.ranks_per_node;
    std::string agreed_error;
    if (sub != MPI_COMM_NULL) {
      try {
        measure_point(ctx, t, sub, k, counts, small, thread_support, res, hooks, pt, small_s, big_s);
      } catch (const BackendUnavailable& e) {
        agreed_error = e.what();
      } catch (const AgreedError& e) {
        agreed_error = e.what();
      }
      NP_CHECK_MPI(MPI_Comm_free(&sub));
    }
    for (const auto& e : allgather_strings(ctx.comm, agreed_error))
      if (!e.empty()) throw AgreedError("scaling on " + std::to_string(k) + " node(s): " + e);
    NP_CHECK_MPI(MPI_Barrier(ctx.comm));
    pt.throughput = pt.step_s > 0 ? pt.ranks / pt.step_s : 0;
    last_ranks = pt.ranks;
    res.points.push_back(pt);
  }

  if (rank != 0) return res;
  const double thr1 = res.points.front().throughput;
  for (auto& p : res.points) p.efficiency = scaling_efficiency(p.throughput, p.nodes, thr1);
  fit_alpha_busbw(static_cast<double>(small * esize), small_s, res.bucket_bytes, big_s, last_ranks, &res.alpha_s,
                  &res.busbw_gbps);
  res.last_bucket_bytes = static_cast<double>(counts.back() * esize);
  add_predictions(res, {8, 16});
  return res;
}

void add_predictions(ScalingResult& res, const std::vector<int>& node_counts) {
  if (res.points.empty()) return;
  const ScalingPoint last = res.points.back();  // the largest measured node count
  const double step1 = res.points.front().step_s;
  for (const auto& p : res.points)
    if (p.nodes >= 2) res.link_busbw_gbps = std::max(res.link_busbw_gbps, p.busbw_gbps);
  // The fit removes latency from the bucket time and so can exceed what the
  // links ever carried; never assume faster links than measured.
  res.model_busbw_gbps = res.busbw_gbps > 0 ? res.busbw_gbps : res.link_busbw_gbps;
  if (res.link_busbw_gbps > 0) res.model_busbw_gbps = std::min(res.model_busbw_gbps, res.link_busbw_gbps);
  auto modelled_step = [&](int ranks, double* bucket_s, double* last_s) {
    *bucket_s = model_allreduce_s(res.bucket_bytes, ranks, res.alpha_s, res.model_busbw_gbps);
    *last_s = model_allreduce_s(res.last_bucket_bytes, ranks, res.alpha_s, res.model_busbw_gbps);
    return res.overlap ? model_step_s(res.compute_s, res.buckets, *bucket_s, *last_s)
                       : res.compute_s + (res.buckets - 1) * *bucket_s + *last_s;
  };
  double b = 0, l = 0;
  // What the model misses at the largest measured count (skew, jitter, the
  // communication thread) is carried forward, never subtracted.
  res.overhead_s = std::max(0.0, last.step_s - modelled_step(last.ranks, &b, &l));
  auto explain = [&](ScalingPoint& p) {
    const double lat = 2.0 * (p.ranks - 1) * res.alpha_s;
    const double bw = p.ranks > 1 && res.model_busbw_gbps > 0
                          ? res.bucket_bytes * allreduce_bus_factor(p.ranks) / (res.model_busbw_gbps * 1e9)
                          : 0;
    p.limit = limiting_term(res.compute_s, res.buckets, lat, bw, p.step_s);
  };
  for (auto& p : res.points) explain(p);
  double floor_s = last.step_s, eff_cap = last.efficiency;
  for (const int n : node_counts) {
    if (n <= last.nodes) continue;
    ScalingPoint p;
    p.nodes = n;
    p.ranks = n * res.ranks_per_node;
    p.predicted = true;
    double last_s = 0;
    const double model = modelled_step(p.ranks, &p.bucket_allreduce_s, &last_s) + res.overhead_s;
    // Compute plus the last bucket, which cannot overlap anything, is a hard floor;
    // a larger ring never reduces faster than a smaller one, so neither is the last step.
    p.step_s = std::max({model, res.compute_s + last_s, floor_s});
    p.busbw_gbps = res.model_busbw_gbps;
    p.throughput = p.step_s > 0 ? p.ranks / p.step_s : 0;
    p.efficiency = std::min(p.step_s > 0 ? step1 / p.step_s : 0.0, eff_cap);
    floor_s = p.step_s;
    eff_cap = p.efficiency;
    explain(p);
    res.points.push_back(p);
  }
  char buf[256];
  res.assumptions.clear();
  res.assumptions.push_back("ring allreduce: 2(n-1) latency steps of alpha plus 2(n-1)/n x bytes at the bus bandwidth");
  std::snprintf(buf, sizeof buf, "alpha %.1f us and busbw %.3f GB/s fitted on %d node(s) from a 4 KiB and a bucket-size allreduce",
                res.alpha_s * 1e6, res.busbw_gbps, last.nodes);
  res.assumptions.push_back(buf);
  std::snprintf(buf, sizeof buf, "predictions use busbw %.3f GB/s: never above %.3f GB/s, the best measured across nodes",
                res.model_busbw_gbps, res.link_busbw_gbps);
  res.assumptions.push_back(buf);
  res.assumptions.push_back(res.overlap ? "bucket i is ready at (i+1) x compute/buckets and reduced in order on one "
                                          "communication thread, overlapping the rest of the compute (PyTorch DDP)"
                                        : "no overlap (MPI without thread support): compute, then every bucket");
  std::snprintf(buf, sizeof buf, "a step is at least compute + the last bucket's allreduce and at least the last measured "
                "step; %.2f ms the model missed at %d node(s) is carried forward", res.overhead_s * 1e3, last.nodes);
  res.assumptions.push_back(buf);
  res.assumptions.push_back("one sample per rank per step: throughput = ranks / step, efficiency = step(1) / step(N), "
                            "never rising past the last measured node count");
}

Json scaling_json(const ScalingResult& s) {
  Json j;
  j["ranks_per_node"] = s.ranks_per_node;
  j["grad_bytes"] = s.grad_bytes;
  j["bucket_bytes"] = s.bucket_bytes;
  j["buckets"] = s.buckets;
  j["compute_s"] = s.compute_s;
  j["overlap"] = s.overlap;
  j["model"] = {{"alpha_us", s.alpha_s * 1e6},
                {"fitted_busbw_GBps", s.busbw_gbps},
                {"link_busbw_GBps", s.link_busbw_gbps},
                {"busbw_GBps", s.model_busbw_gbps},
                {"overhead_ms", s.overhead_s * 1e3},
                {"allreduce", "2(n-1) x alpha + 2(n-1)/n x bytes / busbw"},
                {"step", "bucket i ready at (i+1) x compute/buckets, reduced in order"},
                {"assumptions", s.assumptions}};
  Json pts = Json::array();
  for (const auto& p : s.points) {
    Json pj = {{"nodes", p.nodes}, {"ranks", p.ranks}, {"predicted", p.predicted}, {"step_s", p.step_s},
               {"throughput", p.throughput}, {"efficiency", p.efficiency},
               {"bucket_allreduce_s", p.bucket_allreduce_s}, {"busbw_GBps", p.busbw_gbps}, {"limit", p.limit}};
    if (!p.predicted && p.step_stats.n > 0)
      pj["step_spread_s"] = {{"n", p.step_stats.n}, {"min", p.step_stats.min}, {"p5", p.step_stats.p5},
                             {"median", p.step_stats.median}, {"p95", p.step_stats.p95}, {"max", p.step_stats.max}};
    pts.push_back(pj);
  }
  j["points"] = pts;
  return j;
}

std::string scaling_text(const ScalingResult& s, const std::string& target) {
  char line[256];
  std::snprintf(line, sizeof line,
                "# scaling (%s): %s gradients in %d bucket(s), %.0f ms compute per step, %d rank(s) per node%s\n",
                target.c_str(), format_size(static_cast<std::uint64_t>(s.grad_bytes)).c_str(), s.buckets, s.compute_s * 1e3, s.ranks_per_node,
                s.overlap ? "" : ", no overlap (MPI thread support missing)");
  std::string out = line;
  std::snprintf(line, sizeof line, "#%6s %6s %10s %17s %12s %10s %12s  %s\n", "nodes", "ranks", "step (ms)",
                "spread p5..p95", "samples/s", "efficiency", "busbw (GB/s)", "limited by");
  out += line;
  for (const auto& p : s.points) {
    char spread[40] = "-";
    if (!p.predicted && p.step_stats.n > 1)
      std::snprintf(spread, sizeof spread, "%.2f..%.2f", p.step_stats.p5 * 1e3, p.step_stats.p95 * 1e3);
    std::snprintf(line, sizeof line, "%7d %6d %10.2f %17s %12.2f %10.3f %12.3f  %s%s\n", p.nodes, p.ranks,
                  p.step_s * 1e3, spread, p.throughput, p.efficiency, p.busbw_gbps,
                  p.predicted ? "(predicted) " : "", p.limit.c_str());
    out += line;
  }
  for (const auto& a : s.assumptions) out += "# model: " + a + "\n";
  return out;
}

}  // namespace nodeprobe::allreduce
