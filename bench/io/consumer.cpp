#include "consumer.h"

namespace nodeprobe::io {

void consume(BatchSource& src, Clock& clock, std::size_t count, double step_s, bool first,
             const std::function<void(std::size_t)>& on_batch, const std::function<bool()>& stop,
             ConsumerTimes& t) {
  for (std::size_t k = 0; k < count; ++k) {
    if (stop && stop()) return;
    const double t0 = clock.now_s();
    const bool ok = src.acquire(k);
    const double t1 = clock.now_s();
    t.wait_s += t1 - t0;
    if (first && k == 0) t.first_wait_s = t1 - t0;
    if (!ok) return;
    if (on_batch) on_batch(k);
    if (step_s > 0) clock.sleep_s(step_s);
    const double t2 = clock.now_s();
    t.compute_s += t2 - t1;
    t.marks.push_back({t1 - t0, t2 - t1, t2});
    ++t.batches;
    src.release(k);
  }
}

WaitSummary summarize(const ConsumerTimes& t) {
  WaitSummary s;
  const double wait = t.wait_s - t.first_wait_s;
  const double total = wait + t.compute_s;
  if (total <= 0) return s;
  s.wait_fraction = wait / total;
  s.au = 1.0 - s.wait_fraction;
  return s;
}

}  // namespace nodeprobe::io
