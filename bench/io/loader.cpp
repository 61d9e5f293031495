#include "loader.h"

#include <unistd.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "loader_model.h"
#include "nodeprobe/stop.h"
#include "plan.h"

namespace nodeprobe::io {
namespace {

double process_cpu_s() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

// What a worker recorded of batch k of the epoch: its read time and who read it.
struct ReadMark {
  double latency_s = -1;  // -1: not read (the run stopped first)
  std::uint32_t worker = 0;
};

// The slots and workers of one run. A worker takes a free slot for batch k
// (the most recently freed one: see SlotPool) and fills it; the consumer
// takes batches in order and frees their slots. Round-robin (PyTorch): batch
// k belongs to worker k mod W, which runs at most `prefetch` batches ahead
// in its own slots. First-free: the next batch goes to whichever worker is
// free; W x P batches in flight in all.
//
// A consumer that only counts batches (no step time, no device copy: the raw
// throughput runs) is woken lazily: once W x P - W batches are ready, or when
// a worker needs a slot, or when the epoch's last batch is in. Nothing
// observes its timing, and a wake per batch costs two context switches that a
// small machine pays in read throughput (13 % of the CPU at 8 records a batch
// on 2 cores). A consumer with work to do is woken for every batch it waits for.
class Pipeline final : public BatchSource {
 public:
  Pipeline(const Dataset& ds, const LoaderConfig& cfg, Staging& staging, std::size_t cap, Clock& clock)
      : ds_(ds), cfg_(cfg), clock_(clock), cap_(cap),
        pool_(cfg.workers, cfg.prefetch, cfg.dispatch == Dispatch::kRoundRobin) {
    const std::size_t slots = pool_.slots();
    lazy_after_ = cfg.step_s <= 0 && cfg.batch_cpu_s <= 0 && !staging.info().device && slots > cfg.workers
                      ? slots - cfg.workers
                      : 1;
    state_.assign(slots, kFree);
    batch_of_.assign(slots, kNone);
    bytes_of_.assign(slots, 0);
    reads_.resize(slots * cfg.batch);
    for (std::size_t i = 0; i < reads_.size(); ++i) {
      reads_[i].buf = staging.data() + i * cap;
      reads_[i].cap = cap;
    }
    for (std::size_t w = 0; w < cfg.workers; ++w) engines_.push_back(make_engine(cfg.method, ds, cfg.batch));
    stats_.resize(cfg.workers);
    receiver_ = cfg.receive_thread && cfg.batch_cpu_s > 0;
  }

  void start(const std::vector<std::uint32_t>* order, const BatchPlan& plan, std::vector<ReadMark>* reads) {
    order_ = order;
    plan_ = plan;
    read_marks_ = reads;
    stop_ = false;
    next_ = 0;
    filled_ = 0;
    std::fill(state_.begin(), state_.end(), kFree);
    std::fill(batch_of_.begin(), batch_of_.end(), kNone);
    pool_.reset();
    received_ = 0;
    for (std::size_t w = 0; w < cfg_.workers; ++w) threads_.emplace_back([this, w] { work(w); });
    if (receiver_) threads_.emplace_back([this] { receive(); });
  }

  void stop_and_join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // With the DataLoader model, the main process's per-batch work (receive,
  // unpickle, map the tensors) happens here, inside next(): the training loop
  // waits for it as it waits for data. With a receive thread (PyTorch's
  // pin_memory thread) it happened there, and next() only takes the batch.
  bool acquire(std::size_t k) override {
    bool ok = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      waiting_for_ = k;
      ready_cv_.wait(lock, [&] { return stop_ || deliverable(k); });
      waiting_for_ = kNone;
      ok = deliverable(k) && error_.empty();
    }
    if (ok && cfg_.batch_cpu_s > 0 && !receiver_) burn_cpu_until(thread_cpu_s() + cfg_.batch_cpu_s);
    return ok;
  }

  void release(std::size_t k) override {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      state_[pool_.slot(k)] = kFree;
      pool_.release(k);
      wake = slot_waiters_ > 0;
    }
    if (wake) free_cv_.notify_all();
  }

  /// The reads of batch k (valid between acquire and release).
  const ReadSlot* batch_reads(std::size_t k, std::size_t* n, std::uint64_t* bytes) const {
    const std::size_t s = pool_.slot(k);
    *n = k + 1 == plan_.batches ? plan_.last_size : cfg_.batch;
    *bytes = bytes_of_[s];
    return &reads_[s * cfg_.batch];
  }

  const std::string& error() const { return error_; }
  std::uint64_t bad_samples() const { return bad_; }
  const std::string& first_bad() const { return first_bad_; }
  const std::vector<WorkerStats>& stats() const { return stats_; }

 private:
  enum State { kFree, kFilling, kReady };

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  void work(std::size_t w) {
    const double cpu0 = thread_cpu_s();
    WorkerStats& st = stats_[w];
    const bool rr = cfg_.dispatch == Dispatch::kRoundRobin;
    for (std::size_t k = rr ? w : next_.fetch_add(1); k < plan_.batches;
         k = rr ? k + cfg_.workers : next_.fetch_add(1)) {
      std::size_t s = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        // About to wait for a slot: a lazily left consumer must free one.
        if (!pool_.available(k) && consumer_can_go()) ready_cv_.notify_one();
        ++slot_waiters_;
        free_cv_.wait(lock, [&] { return stop_ || pool_.available(k); });
        --slot_waiters_;
        if (stop_) break;
        s = pool_.take(k);
        state_[s] = kFilling;
        batch_of_[s] = k;
      }
      const double t0 = clock_.now_s();
      const double c0 = cfg_.sample_cpu_s > 0 ? thread_cpu_s() : 0.0;
      const std::size_t n = k + 1 == plan_.batches ? plan_.last_size : cfg_.batch;
      ReadSlot* r = &reads_[s * cfg_.batch];
      std::uint64_t bytes = 0;
      for (std::size_t i = 0; i < n; ++i) r[i].sample = (*order_)[k * cfg_.batch + i];
      try {
        engines_[w]->read(r, n);
      } catch (const std::exception& e) {
        fail(e.what());
        break;
      }
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t len = ds_.index().entries[r[i].sample].length;
        bytes += len;
        const SampleCheck c = check_sample(r[i].data, r[i].got, len, r[i].sample);
        if (c != SampleCheck::kOk) bad_sample(r[i].sample, c);
      }
      // The Python work of a DataLoader worker: what the read left of n x sample_cpu.
      if (cfg_.sample_cpu_s > 0) burn_cpu_until(c0 + static_cast<double>(n) * cfg_.sample_cpu_s);
      const double t1 = clock_.now_s();
      (*read_marks_)[k] = {t1 - t0, static_cast<std::uint32_t>(w)};
      st.busy_s += t1 - t0;
      st.samples += n;
      st.bytes += bytes;
      ++st.batches;
      bool wake = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        bytes_of_[s] = bytes;
        state_[s] = kReady;
        ++filled_;
        // No context switch for a batch the consumer is not yet waiting for.
        const std::size_t ready_count = filled_ - pool_.released();  // filled, not yet released
        wake = consumer_can_go() &&
               (ready_count >= lazy_after_ || slot_waiters_ > 0 || filled_ == plan_.batches);
      }
      if (wake) ready_cv_.notify_one();
      if (receiver_) recv_cv_.notify_one();
    }
    st.cpu_s += thread_cpu_s() - cpu0;
  }

  // PyTorch's pin_memory thread: takes the batches in order as workers finish
  // them, spends the main process's per-batch CPU on each, hands it on.
  void receive() {
    for (std::size_t k = 0; k < plan_.batches; ++k) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        recv_cv_.wait(lock, [&] { return stop_ || is_ready(k); });
        if (stop_) return;
      }
      burn_cpu_until(thread_cpu_s() + cfg_.batch_cpu_s);
      std::lock_guard<std::mutex> lock(mu_);
      received_ = k + 1;
      if (waiting_for_ == k) ready_cv_.notify_all();
    }
  }

  // Batch k may go to the consumer (call with mu_ held).
  bool deliverable(std::size_t k) const { return is_ready(k) && (!receiver_ || received_ > k); }

  // Batch k is filled and not yet released (call with mu_ held). Before
  // batch k takes a slot, slot(k) is stale and holds another batch, never k.
  bool is_ready(std::size_t k) const {
    const std::size_t s = pool_.slot(k);
    return state_[s] == kReady && batch_of_[s] == k;
  }

  // The consumer is blocked on a batch that is ready (call with mu_ held).
  bool consumer_can_go() const { return waiting_for_ != kNone && deliverable(waiting_for_); }

  void fail(const std::string& what) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.empty()) error_ = what;
      stop_ = true;
    }
    wake_all();
  }

  void wake_all() {
    free_cv_.notify_all();
    ready_cv_.notify_all();
    recv_cv_.notify_all();
  }

  void bad_sample(std::uint32_t id, SampleCheck c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bad_++ == 0) first_bad_ = ds_.where(id) + " (sample " + std::to_string(id) + "): " + describe(c);
  }

  const Dataset& ds_;
  const LoaderConfig& cfg_;
  Clock& clock_;
  std::size_t cap_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<ReadSlot> reads_;
  std::vector<State> state_;
  std::vector<std::size_t> batch_of_;  // the batch each slot holds (kNone: none yet this epoch)
  SlotPool pool_;
  std::vector<std::uint64_t> bytes_of_;
  std::vector<WorkerStats> stats_;
  std::vector<std::thread> threads_;
  const std::vector<std::uint32_t>* order_ = nullptr;
  std::vector<ReadMark>* read_marks_ = nullptr;
  BatchPlan plan_;
  std::mutex mu_;
  std::condition_variable free_cv_;  // workers waiting for a slot
  std::size_t slot_waiters_ = 0;
  std::size_t filled_ = 0;       // batches filled this epoch
  std::size_t lazy_after_ = 1;   // ready batches before a waiting consumer is woken
  std::atomic<std::size_t> next_{0};  // first-free: the next unclaimed batch
  std::condition_variable ready_cv_;
  std::size_t waiting_for_ = kNone;  // the batch the consumer is blocked on
  bool receiver_ = false;            // a receive thread does the per-batch CPU
  std::size_t received_ = 0;         // batches [0, received_) went through it this epoch
  std::condition_variable recv_cv_;
  bool stop_ = false;
  std::string error_, first_bad_;
  std::uint64_t bad_ = 0;
};

void prepare_cache(Dataset& ds, const LoaderConfig& cfg, bool first, LoaderResult& res) {
  if (cfg.cache == CacheMode::kCold) {
    if (cfg.drop_caches) drop_caches();
    evict(ds);
  } else if (cfg.cache == CacheMode::kWarm && first) {
    prewarm(ds);
  }
  if (!first) return;
  res.resident_fraction = resident_fraction(ds);
  switch (cfg.cache) {
    case CacheMode::kCold: res.cache_label = res.resident_fraction <= 0.1 ? "cold" : "cold-unevictable"; break;
    case CacheMode::kWarm: res.cache_label = res.resident_fraction >= 0.9 ? "warm" : "warm-partial"; break;
    case CacheMode::kAsIs: res.cache_label = "as-is"; break;
  }
}

}  // namespace

const char* to_string(Dispatch d) { return d == Dispatch::kRoundRobin ? "round-robin" : "first-free"; }

LoaderResult run_loader(Dataset& ds, const LoaderConfig& cfg, Clock& clock, double budget_s) {
  if (cfg.workers == 0 || cfg.batch == 0 || cfg.prefetch == 0 || cfg.epochs == 0)
    throw InputError("workers, batch, prefetch and epochs must be at least 1");
  LoaderResult res;
  const double t_begin = clock.now_s();
  if (is_direct(cfg.method)) ds.open_direct();
  const std::size_t cap = slot_capacity(ds.max_length());
  res.slot_sample_bytes = cap;
  res.staging_bytes = cfg.workers * cfg.prefetch * cfg.batch * cap;
  Staging staging(res.staging_bytes, cfg.batch * cap, cfg.pin);
  res.pin = staging.info();
  Pipeline pipe(ds, cfg, staging, cap, clock);

  const BatchPlan plan = plan_batches(ds.samples(), cfg.batch, cfg.drop_last);
  if (plan.batches == 0)
    throw InputError("the dataset has " + std::to_string(ds.samples()) + " samples, fewer than one batch of " +
                     std::to_string(cfg.batch) + " with --drop-last");
  std::vector<ReadMark> reads(plan.batches);
  auto out_of_time = [&] { return budget_s > 0 && clock.now_s() - t_begin >= budget_s; };

  for (std::uint32_t e = 0; e < cfg.epochs; ++e) {
    if (stop_requested()) {
      res.stop_reason = "interrupted";
      break;
    }
    if (out_of_time()) {
      res.stop_reason = "deadline";
      break;
    }
    if (e > 0 && cfg.epoch_gap_s > 0) ::usleep(static_cast<useconds_t>(cfg.epoch_gap_s * 1e6));
    const double p0 = clock.now_s();
    prepare_cache(ds, cfg, e == 0, res);
    res.prep_s += clock.now_s() - p0;
    const auto order = epoch_order(ds.samples(), cfg.seed, e, cfg.shuffle);
    std::fill(reads.begin(), reads.end(), ReadMark{});

    const double before = res.elapsed_s;
    const double cpu0 = process_cpu_s();
    const double t0 = clock.now_s();
    const std::size_t consumed0 = res.consumer.batches;
    pipe.start(&order, plan, &reads);
    auto stop = [&] {
      // Ctrl-C / SIGTERM / SIGHUP or --timeout (stop.h): the epochs and
      // batches that finished are reported.
      if (stop_requested()) {
        res.stop_reason = "interrupted";
        return true;
      }
      if (cfg.max_seconds > 0 && before + clock.now_s() - t0 >= cfg.max_seconds) {
        res.stop_reason = "max-seconds";
        return true;
      }
      if (out_of_time()) {
        res.stop_reason = "deadline";
        return true;
      }
      return false;
    };
    const double cpu_before = res.cpu_s;
    auto on_batch = [&](std::size_t k) {
      std::size_t n = 0;
      std::uint64_t bytes = 0;
      const ReadSlot* r = pipe.batch_reads(k, &n, &bytes);
      res.samples += n;
      res.bytes += bytes;
      if (cfg.step_cpu_s > 0) burn_cpu_until(thread_cpu_s() + std::min(cfg.step_cpu_s, cfg.step_s));
      BatchRecord rec;
      rec.samples = n;
      rec.bytes = bytes;
      rec.cpu_s = cpu_before + process_cpu_s() - cpu0;
      if (res.pin.device) {
        const double h0 = clock.now_s();
        std::size_t off = 0;
        for (std::size_t i = 0; i < n; ++i) {
          staging.copy_to_device(r[i].data, r[i].got, off);
          off += r[i].got;
        }
        staging.sync();
        rec.h2d_s = clock.now_s() - h0;
        rec.h2d_bytes = off;
        res.h2d_s += rec.h2d_s;
        res.h2d_bytes += off;
      }
      res.batches.push_back(rec);
    };
    const double sleep_s = std::max(0.0, cfg.step_s - cfg.step_cpu_s);  // the step's CPU part is burnt in on_batch
    // The modelled PyTorch loader frees a worker's slot once next() has the batch.
    const bool pytorch_model = cfg.sample_cpu_s > 0 || cfg.batch_cpu_s > 0;
    const std::size_t marks0 = res.consumer.marks.size();
    consume(pipe, clock, plan.batches, sleep_s, e == 0, on_batch, stop, res.consumer, pytorch_model);
    pipe.stop_and_join();
    // Batch k of this epoch got mark marks0 + k: the same order, one each.
    for (std::size_t i = marks0; i < res.consumer.marks.size(); ++i) {
      const BatchMark& m = res.consumer.marks[i];
      BatchRecord& rec = res.batches[i];
      rec.end_s = before + m.end_s - t0;
      rec.wait_s = m.wait_s;
      rec.compute_s = m.compute_s;
      rec.latency_s = reads[i - marks0].latency_s;
      rec.worker = reads[i - marks0].worker;
    }
    // Every epoch starts its workers afresh (PyTorch without persistent_workers):
    // the wait for its first batch is one sample of the start-up.
    if (res.consumer.marks.size() > marks0) res.epoch_first_wait_s.push_back(res.consumer.marks[marks0].wait_s);
    res.elapsed_s += clock.now_s() - t0;
    res.cpu_s += process_cpu_s() - cpu0;
    for (const ReadMark& r : reads)
      if (r.latency_s >= 0) res.batch_latency_s.push_back(r.latency_s);

    const std::size_t consumed = res.consumer.batches - consumed0;
    if (!pipe.error().empty()) {
      res.error = pipe.error();
      res.stop_reason = "error";
    }
    if (consumed < plan.batches) {
      res.epochs_done += static_cast<double>(consumed) / static_cast<double>(plan.batches);
      if (res.stop_reason.empty()) res.stop_reason = "error";
      break;
    }
    ++res.epochs_full;
    res.epochs_done += 1.0;
  }
  res.workers = pipe.stats();
  res.bad_samples = pipe.bad_samples();
  res.first_bad = pipe.first_bad();
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  res.peak_rss_kb = ru.ru_maxrss;
  return res;
}

}  // namespace nodeprobe::io
