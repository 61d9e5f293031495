#include "recommend.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace nodeprobe::io {
namespace {

bool smaller(const SweepPoint& a, const SweepPoint& b) {
  return std::make_tuple(a.workers, a.prefetch, a.layout != "files") <
         std::make_tuple(b.workers, b.prefetch, b.layout != "files");
}

}  // namespace

std::vector<std::size_t> default_worker_list(unsigned cores) {
  std::vector<std::size_t> out;
  if (cores == 0) cores = 1;
  for (std::size_t w = 1; w <= cores; w *= 2) out.push_back(w);
  if (out.back() != cores) out.push_back(cores);
  return out;
}

Recommendation recommend(const std::vector<SweepPoint>& points, double target_au, std::size_t batch,
                         unsigned cores, bool gpu, bool pin_memory) {
  Recommendation rec;
  rec.batch = batch;
  const SweepPoint* best = nullptr;
  bool files_measured = false, files_reached = false, shards_measured = false;
  for (const auto& p : points) {
    if (!p.ok) continue;
    (p.layout == "files" ? files_measured : shards_measured) = true;
    if (p.au < target_au) continue;
    if (p.layout == "files") files_reached = true;
    if (!best || smaller(p, *best)) best = &p;
  }
  rec.reached = best != nullptr;
  if (!best) {
    for (const auto& p : points)
      if (p.ok && (!best || p.au > best->au || (p.au == best->au && smaller(p, *best)))) best = &p;
  }
  if (!best) {
    rec.notes.push_back("no configuration ran without an error");
    return rec;
  }
  rec.best = *best;
  char buf[256];
  if (rec.reached) {
    rec.pack_shards = best->layout == "shards" && files_measured;
    if (rec.pack_shards)
      rec.notes.push_back(files_reached ? "shards reach the target with fewer workers or less prefetch than files"
                                        : "files never reach the target; shards do");
  } else {
    rec.pack_shards = best->layout == "files" || (files_measured && !shards_measured);
    std::snprintf(buf, sizeof buf,
                  "no configuration reaches AU %.0f %% (best %.1f %%): the input pipeline cannot feed this step "
                  "time here%s",
                  100 * target_au, 100 * best->au,
                  rec.pack_shards ? "; pack the small files into shards, cache the dataset on local NVMe, or "
                                    "use faster storage"
                                  : "; cache the dataset on local NVMe or use faster storage");
    rec.notes.push_back(buf);
  }
  if (best->layout == "files" && !rec.pack_shards && !shards_measured && rec.reached)
    rec.notes.push_back("files are fast enough here; shards were not measured (add a --dir with a shards dataset to compare)");
  if (cores > 0 && best->workers * 4 > cores * 3)
    rec.notes.push_back("more than 3/4 of the cores as workers competes with the training process for CPU");
  rec.pin_memory = pin_memory;
  if (pin_memory)
    rec.notes.push_back(gpu ? "pin_memory=True: page-locked batches let the copy to the GPU run asynchronously"
                            : "pin_memory=True on the GPU node (this host has no usable GPU: its effect was not measured)");
  std::snprintf(buf, sizeof buf,
                "DataLoader(dataset, batch_size=%zu, shuffle=True, num_workers=%zu, prefetch_factor=%zu, "
                "pin_memory=%s, persistent_workers=True)",
                batch, best->workers, best->prefetch, pin_memory ? "True" : "False");
  rec.pytorch = buf;
  return rec;
}

void apply_bound(Recommendation& rec, const BoundReport& bound, double target_au) {
  rec.bound = to_string(bound.bound);
  rec.advice = bound.advice;
  if (rec.reached || rec.notes.empty() || rec.pytorch.empty()) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "no configuration reaches AU %.0f %% (best %.1f %%): ", 100 * target_au,
                100 * rec.best.au);
  rec.notes.front() = buf + bound.advice;
  if (bound.bound != Bound::kStorage) rec.pack_shards = false;
}

}  // namespace nodeprobe::io
