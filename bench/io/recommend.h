#pragma once
/// The sweep's judgement, kept pure for unit tests: from measured (layout,
/// workers, prefetch) points, the smallest configuration that reaches the
/// target AU, and the DataLoader settings a user would apply.

#include <cstddef>
#include <string>
#include <vector>

#include "loader_model.h"

namespace nodeprobe::io {

struct SweepPoint {
  std::string layout;  ///< "files" | "shards"
  std::size_t workers = 0, prefetch = 0;
  double au = 0, wait_fraction = 0, samples_per_s = 0;
  bool ok = true;      ///< ran without an error
};

struct Recommendation {
  bool reached = false;     ///< some point reached the target
  SweepPoint best;          ///< the smallest reaching it, else the highest AU
  bool pack_shards = false; ///< advise packing small files into shards
  bool pin_memory = true;
  std::size_t batch = 0;    ///< batch_size
  std::string pytorch;      ///< "DataLoader(ds, batch_size=32, num_workers=2, ...)"
  std::vector<std::string> notes;
  std::string bound;        ///< "storage" | "cpu" | "consumer" (after apply_bound)
  std::string advice;       ///< the bound's one line: "fine: ...", "CPU-bound: ..."
};

/// Smallest = fewest workers, then lowest prefetch, then files before shards
/// (no repacking needed). Shards are advised when they reach the target with
/// fewer resources than files, or when files never reach it.
/// `pin_memory`: the setting to recommend (the sweep's --pin-memory off says False).
Recommendation recommend(const std::vector<SweepPoint>& points, double target_au, std::size_t batch,
                         unsigned cores, bool gpu, bool pin_memory = true);

/// Names the binding bound in `rec`. When nothing reached the target, the
/// first note becomes the bound's advice, and packing into shards is advised
/// only where the storage binds (it does not make a CPU-bound loader faster).
void apply_bound(Recommendation& rec, const BoundReport& bound, double target_au);

/// 1, 2, 4, ... up to `cores` (and `cores` itself when it is not a power of two).
std::vector<std::size_t> default_worker_list(unsigned cores);

}  // namespace nodeprobe::io
