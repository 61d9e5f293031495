#include "sweep.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "ar_math.h"
#include "launch_pool.h"
#include "mpi_util.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/error.h"
#include "nodeprobe/stats.h"
#include "pt2pt.h"

namespace nodeprobe::allreduce {
namespace {

struct Timed {
  double rank_seconds = 0;             // this rank's mean per iteration
  std::vector<double> sample_seconds;  // mean seconds per iteration of each sample
};

/// Asynchronous backends (NCCL) are synchronised once per group, not per
/// iteration, so their pipelining is kept; at most this many groups.
constexpr int kAsyncGroups = 5;

/// With `spread_s` > 0 the samples (iterations, or groups of an asynchronous
/// backend) start on a schedule: sample k not before t0 + k x spread_s /
/// samples, after a barrier, and each is timed from its own start. Back-to-back
/// samples of a busy host all fall in one scheduling slice of the ranks (all
/// fast or all slow), so two runs of an unchanged node disagree far beyond
/// either run's spread; spread out, each run samples the host's states.
Timed time_loop(Backend& b, MPI_Comm comm, std::size_t count, bool in_place, int warmup, int iters,
                double spread_s) {
  for (int i = 0; i < warmup; ++i) b.launch(count, in_place);
  b.wait();
  NP_CHECK_MPI(MPI_Barrier(comm));
  Timed t;
  Clock& clock = steady_clock();
  const double t0 = clock.now_s();
  double prev = t0, busy = 0;
  const int samples = b.blocking() ? iters : std::min(iters, kAsyncGroups);
  auto pace = [&](int k) {
    if (spread_s <= 0 || k == 0) return;
    const double due = t0 + spread_s * k / samples;
    if (const double wait = due - clock.now_s(); wait > 0) ::usleep(static_cast<useconds_t>(wait * 1e6));
    NP_CHECK_MPI(MPI_Barrier(comm));
    prev = clock.now_s();
  };
  for (int k = 0; k < samples; ++k) {
    pace(k);
    const int n = b.blocking() ? 1 : iters * (k + 1) / samples - iters * k / samples;
    for (int i = 0; i < n; ++i) b.launch(count, in_place);
    if (!b.blocking() || spread_s > 0) b.wait();
    const double now = clock.now_s();
    t.sample_seconds.push_back((now - prev) / n);
    busy += now - prev;
    prev = now;
  }
  b.wait();
  // The mean is the timed samples' sum over the iterations: back to back that is
  // the wall time from t0 (an asynchronous backend's tail included, as each group
  // ends with its wait), so the value always lies within its samples' spread (a
  // trailing wait timed here as well put sub-microsecond NCCL calls above it).
  t.rank_seconds = busy / iters;
  return t;
}

}  // namespace

void maybe_fault(const Plan& plan, int rank, std::size_t bytes, bool* corrupt, int launch) {
  const auto& f = plan.fault;
  if (f.rank != rank || bytes < f.at_bytes || (f.launch > 0 && f.launch != launch)) return;
  if (f.kind == "exit") ::_exit(3);
  if (f.kind == "kill") ::raise(SIGKILL);
  if (f.kind == "stop") ::raise(SIGSTOP);
  if (f.kind == "throw") throw std::runtime_error("injected fault (--test-fault)");
  if (f.kind == "corrupt" && corrupt) *corrupt = true;
}

TargetResult run_target(const BackendContext& ctx, const Target& t, const SweepHooks& hooks) {
  TargetResult res;
  res.target = t;
  const Plan& plan = *ctx.plan;
  const Options& opt = *ctx.opt;
  int rank = 0, nranks = 1;
  MPI_Comm_rank(ctx.comm, &rank);
  MPI_Comm_size(ctx.comm, &nranks);
  const std::size_t esize = dtype_size(plan.dtype);
  // Every collective's buffers of a size fit in size / element size elements.
  const std::size_t max_count = plan.sizes.back() / esize;
  if ((plan.coll == Coll::kBroadcast || plan.coll == Coll::kReduce) && plan.root >= nranks)
    throw InputError("--root " + std::to_string(plan.root) + " is not a rank of this run (" +
                     std::to_string(nranks) + " ranks)");
  if (!plan.pt2pt && std::none_of(plan.sizes.begin(), plan.sizes.end(), [&](std::size_t size) {
        return coll_counts(plan.coll, size, esize, nranks).param > 0;
      }))
    throw InputError(std::string(to_string(plan.coll)) + " splits each buffer into " + std::to_string(nranks) +
                     " blocks of a 16-byte multiple: -e " + format_size(plan.sizes.back()) + " is too small (at least " +
                     format_size(16 * static_cast<std::size_t>(nranks)) + ")");

  std::unique_ptr<Backend> b;
  try {
    if (hooks.phase) hooks.phase(t.label() + " setup");
    run_agreed(ctx.comm, [&] { b = make_backend(ctx, t); });
    b->setup(max_count);
  } catch (const BackendUnavailable& e) {
    res.reason = e.what();
    res.status = Status::kSkip;
    if (!e.check().id.empty()) {
      res.status = e.check().status;
      res.checks.push_back(e.check());
    }
    return res;
  } catch (const AgreedError& e) {
    res.status = Status::kError;
    res.reason = e.what();
    return res;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    // Only this rank knows: the others may wait in a collective.
    hooks.fail(t.label() + " setup: " + e.what());
  }
  res.transport = b->transport();

  try {
    if (plan.pt2pt) res.pt2pt = run_pt2pt(*b, ctx.comm, plan.sizes, opt.warmup, opt.iters, hooks.phase);
    else for (const std::size_t size : plan.sizes) {
      // nccl-tests' counts: a per-rank block of a 16-byte multiple where the
      // collective splits the buffer; a size too small for one is not run.
      const CollCounts counts = coll_counts(plan.coll, size, esize, nranks);
      if (counts.param == 0) continue;
      const std::size_t bytes = counts.bytes;
      SizeRow row;
      row.bytes = bytes;
      row.count = counts.param;
      row.algo = b->algorithm(row.count);
      for (const bool in_place : {false, true}) {
        if (in_place && (!opt.inplace || !coll_has_in_place(plan.coll))) continue;
        Placement& p = in_place ? row.ip : row.oop;
        if (hooks.phase)
          hooks.phase(t.label() + " " + format_size(bytes) + (in_place ? " in-place" : " out-of-place"));
        b->fill(row.count, in_place, 0);
        bool corrupt = false;
        maybe_fault(plan, rank, bytes, &corrupt, opt.launch);
        const Timed tm = time_loop(*b, ctx.comm, row.count, in_place, opt.warmup, opt.iters, opt.spread_ms / 1e3);
        double sum = 0;
        NP_CHECK_MPI(MPI_Allreduce(&tm.rank_seconds, &sum, 1, MPI_DOUBLE, MPI_SUM, ctx.comm));
        std::vector<double> per_rank(static_cast<std::size_t>(nranks));
        NP_CHECK_MPI(MPI_Gather(&tm.rank_seconds, 1, MPI_DOUBLE, per_rank.data(), 1, MPI_DOUBLE, 0, ctx.comm));
        const double avg = sum / nranks;
        p.measured = true;
        p.time_us = avg * 1e6;
        p.algbw = algbw_gbps(bytes, avg);
        p.busbw = p.algbw * coll_bus_factor(plan.coll, nranks);
        // Each sample is the mean over ranks of that iteration (or group), as
        // the value is the mean over ranks: both come from the same samples.
        std::vector<double> samples_sum(tm.sample_seconds.size());
        NP_CHECK_MPI(MPI_Reduce(tm.sample_seconds.data(), samples_sum.data(),
                                static_cast<int>(tm.sample_seconds.size()), MPI_DOUBLE, MPI_SUM, 0, ctx.comm));
        if (rank == 0) {
          for (double s : per_rank) p.rank_time_us.push_back(s * 1e6);
          for (double& s : samples_sum) s = s / nranks * 1e6;
          if (ctx.pool) {
            // --launches: this launch's samples join the earlier launches'.
            double mean_us = p.time_us;
            samples_sum = ctx.pool->add(t.label() + " " + std::to_string(bytes) + (in_place ? " ip" : " oop"),
                                        samples_sum, p.time_us, opt.iters, &mean_us);
            p.time_us = mean_us;
            p.algbw = algbw_gbps(bytes, mean_us / 1e6);
            p.busbw = p.algbw * coll_bus_factor(plan.coll, nranks);
          }
          p.time_stats = compute_stats(samples_sum);
          std::sort(samples_sum.begin(), samples_sum.end());
          p.time_p50_us = p.time_stats.median;
          p.time_p99_us = samples_sum.empty() ? p.time_us : percentile_sorted(samples_sum, 0.99);
        }
        if (opt.check > 0) {
          long wrong = 0;
          for (int rep = 1; rep <= opt.check; ++rep) {
            if (hooks.phase) hooks.phase(t.label() + " " + format_size(bytes) + " data check");
            b->fill(row.count, in_place, rep);
            b->launch(row.count, in_place);
            b->wait();
            if (corrupt && rep == 1) b->corrupt_one();
            wrong += b->check(row.count, rep);
          }
          long total = 0;
          NP_CHECK_MPI(MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, ctx.comm));
          p.wrong = total;
        }
      }
      if (rank == 0 && hooks.row_done) hooks.row_done(row);
      res.rows.push_back(row);
    }
  } catch (const std::exception& e) {
    hooks.fail(t.label() + ": " + e.what());
  }
  res.device = b->device();
  res.rank_devices = allgather_strings(ctx.comm, res.device);
  res.details = b->details();
  for (auto& c : b->checks()) res.checks.push_back(c);
  for (const auto& r : res.rows)
    for (const Placement* p : {&r.oop, &r.ip})
      if (p->wrong > 0) res.status = Status::kFail;
  return res;
}

}  // namespace nodeprobe::allreduce
