#pragma once
/// `sweep --peer torch`: the prediction checked against a real
/// torch.utils.data.DataLoader, when the node has one. The shipped script
/// torch_loader.py (found through nodeprobe/data_files.h) runs over the same
/// files with the same step and cache state; nodeprobe never needs Python
/// otherwise, and without torch the peer is skipped with the reason.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "dataset.h"
#include "loader.h"
#include "loader_model.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/probe.h"

namespace nodeprobe::io {

/// Where the peer comes from: the interpreter, the script, torch's version.
struct TorchPeer {
  std::string python, script, version;
};

/// Finds the script and checks `python -c 'import torch'` (within
/// `timeout_s`). Returns "" and fills `peer`, or why the peer cannot run.
std::string find_torch_peer(const std::string& python, double timeout_s, Clock& clock, TorchPeer* peer);

/// One setting run by the real DataLoader.
struct PeerPoint {
  std::size_t workers = 0, prefetch = 0;
  double predicted_au = -1;   ///< the modelled loader's AU at this setting (-1: not measured)
  double au = 0, wait_fraction = 0, samples_per_s = 0;
  std::size_t batches = 0;
  std::string error;          ///< "" when it ran
};

/// Runs the DataLoader for `seconds` at cfg's workers, prefetch, batch and
/// step, with the cache as cfg asks (evicted or warmed here first, as the
/// native loader does), `burn_us` of extra CPU per sample in its workers; the
/// script is killed after `timeout_s`.
PeerPoint run_torch_point(const TorchPeer& peer, Dataset& ds, const LoaderConfig& cfg, Collate collate,
                          double burn_us, double seconds, bool pin_memory, double timeout_s, Clock& clock);

/// The settings to confirm: the recommended one, then its neighbours in the
/// sweep's lists (the previous and next worker count, the previous and next
/// prefetch depth).
std::vector<std::pair<std::size_t, std::size_t>> peer_settings(std::size_t workers, std::size_t prefetch,
                                                               const std::vector<std::size_t>& worker_list,
                                                               const std::vector<std::size_t>& prefetch_list);

/// What the sweep asks the peer to confirm.
struct PeerRequest {
  std::string python;
  Dataset* ds = nullptr;
  LoaderConfig base;              ///< step, batch, cache state, seed
  Collate collate = Collate::kList;
  double burn_us = 0;             ///< what the model adds beyond a plain read, per sample
  double seconds = 2;             ///< per setting
  bool pin_memory = false;
  std::string layout;             ///< of the recommended setting
  std::size_t workers = 0, prefetch = 0;  ///< the recommended setting
  std::vector<std::size_t> worker_list, prefetch_list;
};

/// Runs the peer at the recommended setting and its neighbours (or says why
/// it cannot), writes the side-by-side table to ctx.log, adds the metrics
/// peer_au and peer_samples_per_s and the check io.sweep_peer (predicted
/// within 0.10 of the real AU at the recommended setting), and returns
/// `data.peer`. `predict(w, p)` is the modelled AU there (< 0: none). Sets
/// *out_of_time when the deadline cut it short.
Json confirm_with_torch(ProbeContext& ctx, ProbeResult& r, const PeerRequest& req,
                        const std::function<double(std::size_t, std::size_t)>& predict, bool* out_of_time);

}  // namespace nodeprobe::io
