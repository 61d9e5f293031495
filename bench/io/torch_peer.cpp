#include "torch_peer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "cache.h"
#include "nodeprobe/data_files.h"
#include "nodeprobe/report.h"
#include "nodeprobe/subprocess.h"

namespace nodeprobe::io {
namespace {

constexpr const char* kScript = "torch_loader.py";

// The last non-empty line of a stream (Python's tracebacks end with the error).
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string find_torch_peer(const std::string& python, double timeout_s, Clock& clock, TorchPeer* peer) {
  std::string looked;
  const std::string script = find_data_file(kScript, &looked);
  if (script.empty()) return std::string(kScript) + " not found (looked in " + looked + ")";
  SpawnOptions so;
  so.argv = {python, "-c", "import torch; print(torch.__version__)"};
  so.capture_stdout = so.capture_stderr = true;
  so.timeout_s = timeout_s;
  const SpawnResult r = run_process(so, clock);
  if (!r.exited_ok()) {
    std::string why = last_line(r.err);
    if (why.empty()) why = r.describe();
    return "`" + python + " -c 'import torch'` failed: " + why;
  }
  peer->python = python;
  peer->script = script;
  peer->version = last_line(r.out);
  return "";
}

PeerPoint run_torch_point(const TorchPeer& peer, Dataset& ds, const LoaderConfig& cfg, Collate collate,
                          double burn_us, double seconds, bool pin_memory, double timeout_s, Clock& clock) {
  PeerPoint p;
  p.workers = cfg.workers;
  p.prefetch = cfg.prefetch;
  // The same cache state the native loader starts from.
  if (cfg.cache == CacheMode::kCold) evict(ds);
  else if (cfg.cache == CacheMode::kWarm) prewarm(ds);
  SpawnOptions so;
  so.argv = {peer.python, peer.script, "--dir", ds.dir(), "--seconds", fmt(seconds), "--step-ms",
             fmt(cfg.step_s * 1e3), "--workers", std::to_string(cfg.workers), "--prefetch",
             std::to_string(cfg.prefetch), "--batch", std::to_string(cfg.batch), "--collate", to_string(collate),
             "--burn-us", fmt(burn_us), "--seed", std::to_string(cfg.seed)};
  if (cfg.cache == CacheMode::kCold) so.argv.push_back("--cold");
  if (pin_memory) so.argv.push_back("--pin-memory");
  so.capture_stdout = so.capture_stderr = true;
  so.timeout_s = timeout_s;
  const SpawnResult r = run_process(so, clock);
  if (!r.exited_ok()) {
    p.error = "torch_loader.py " + r.describe() + (last_line(r.err).empty() ? "" : ": " + last_line(r.err));
    return p;
  }
  try {
    const Json j = Json::parse(last_line(r.out));
    p.au = j.at("au").get<double>();
    p.wait_fraction = j.at("wait_fraction").get<double>();
    p.samples_per_s = j.at("samples_per_s").get<double>();
    p.batches = j.at("batches").get<std::size_t>();
  } catch (const std::exception& e) {
    p.error = std::string("torch_loader.py printed no result (") + e.what() + ")";
  }
  if (p.error.empty() && p.batches < 2) p.error = "torch_loader.py delivered fewer than 2 batches";
  return p;
}

std::vector<std::pair<std::size_t, std::size_t>> peer_settings(std::size_t workers, std::size_t prefetch,
                                                               const std::vector<std::size_t>& worker_list,
                                                               const std::vector<std::size_t>& prefetch_list) {
  std::vector<std::pair<std::size_t, std::size_t>> out{{workers, prefetch}};
  auto neighbours = [](const std::vector<std::size_t>& list, std::size_t v) {
    std::vector<std::size_t> sorted = list;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::vector<std::size_t> n;
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), v);
    if (it != sorted.begin()) n.push_back(*(it - 1));
    const auto next = it != sorted.end() && *it == v ? it + 1 : it;
    if (next != sorted.end()) n.push_back(*next);
    return n;
  };
  for (std::size_t w : neighbours(worker_list, workers)) out.emplace_back(w, prefetch);
  for (std::size_t p : neighbours(prefetch_list, prefetch)) out.emplace_back(workers, p);
  return out;
}

Json confirm_with_torch(ProbeContext& ctx, ProbeResult& r, const PeerRequest& req,
                        const std::function<double(std::size_t, std::size_t)>& predict, bool* out_of_time) {
  TorchPeer tp;
  const double check_s = ctx.deadline_s > 0 ? std::max(1.0, std::min(120.0, ctx.remaining_s() - 1)) : 120.0;
  const std::string why = find_torch_peer(req.python, check_s, ctx.clock, &tp);
  Json out{{"name", "torch"}, {"status", why.empty() ? "ran" : "skipped"}, {"reason", why}};
  if (!why.empty()) {
    ctx.log << "peer torch: skipped: " << why << "\n";
    return out;
  }
  ctx.log << "peer torch " << tp.version << " (" << tp.script
          << "): a real DataLoader, same files, step and cache state\n";
  char line[320];
  std::snprintf(line, sizeof line, "%7s %8s %13s %12s %7s %10s\n", "workers", "prefetch", "predicted AU",
                "measured AU", "diff", "samples/s");
  ctx.log << line;
  auto no_time_for = [&](double s) { return ctx.deadline_s > 0 && ctx.remaining_s() < s + 2; };
  Json runs = Json::array();
  for (const auto& [w, p] : peer_settings(req.workers, req.prefetch, req.worker_list, req.prefetch_list)) {
    const double predicted = predict(w, p);
    if (no_time_for(req.seconds + 30)) {
      *out_of_time = true;
      break;
    }
    LoaderConfig cfg = req.base;
    cfg.workers = w;
    cfg.prefetch = p;
    // Importing torch and starting workers on a busy node takes a while; the deadline still holds.
    const double timeout = ctx.deadline_s > 0 ? std::max(1.0, std::min(req.seconds + 120, ctx.remaining_s() - 1))
                                              : req.seconds + 120;
    PeerPoint pp = run_torch_point(tp, *req.ds, cfg, req.collate, req.burn_us, req.seconds, req.pin_memory, timeout,
                                   ctx.clock);
    pp.predicted_au = predicted;
    const bool ok = pp.error.empty();
    runs.push_back(Json{{"workers", w},
                        {"prefetch", p},
                        {"recommended", w == req.workers && p == req.prefetch},
                        {"predicted_au", predicted < 0 ? Json(nullptr) : Json(predicted)},
                        {"au", ok ? Json(pp.au) : Json(nullptr)},
                        {"wait_fraction", ok ? Json(pp.wait_fraction) : Json(nullptr)},
                        {"samples_per_s", ok ? Json(pp.samples_per_s) : Json(nullptr)},
                        {"error", pp.error}});
    if (!ok) {
      std::snprintf(line, sizeof line, "%7zu %8zu  %s\n", w, p, pp.error.c_str());
      ctx.log << line;
      continue;
    }
    const Labels axes{{"layout", req.layout}, {"workers", std::to_string(w)}, {"prefetch", std::to_string(p)}};
    add_metric(r, "peer_au", pp.au, axes);
    add_metric(r, "peer_samples_per_s", pp.samples_per_s, axes);
    char pred_txt[16] = "-", diff_txt[16] = "-";
    if (predicted >= 0) {
      std::snprintf(pred_txt, sizeof pred_txt, "%.1f%%", 100 * predicted);
      std::snprintf(diff_txt, sizeof diff_txt, "%+.2f", predicted - pp.au);
    }
    std::snprintf(line, sizeof line, "%7zu %8zu %13s %11.1f%% %7s %10.0f\n", w, p, pred_txt, 100 * pp.au, diff_txt,
                  pp.samples_per_s);
    ctx.log << line;
  }
  out["torch"] = tp.version;
  out["script"] = tp.script;
  out["burn_us"] = req.burn_us;
  out["runs"] = runs;
  // The recommended setting's prediction against the real loader.
  if (!runs.empty() && runs.front().at("error").get<std::string>().empty() &&
      !runs.front().at("predicted_au").is_null()) {
    const double pred = runs.front().at("predicted_au").get<double>();
    const double real = runs.front().at("au").get<double>();
    char obs[160];
    std::snprintf(obs, sizeof obs, "predicted AU %.1f %%, a real DataLoader %.1f %% (%zu workers, prefetch %zu)",
                  100 * pred, 100 * real, req.workers, req.prefetch);
    const bool close = std::fabs(pred - real) <= 0.10;
    add_check(r, "io.sweep_peer", close ? Status::kPass : Status::kWarn, obs, "within 0.10 of the real DataLoader's AU",
              close ? "" : "trust the measured AU; measure this node's loader costs with "
                           "bench/io/loader_costs.py and pass --sample-cpu-us / --batch-cpu-us");
  }
  return out;
}

}  // namespace nodeprobe::io
