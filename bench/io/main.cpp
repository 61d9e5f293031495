// nodeprobe-io: what a training input pipeline does to storage.
//   prepare  write a dataset (files or shards)     probe io-prepare
//   read     DataLoader emulation on a dataset     probe io
//   sweep    workers x prefetch -> recommendation  probe io-sweep
//   clean    remove a dataset prepare made         probe io-clean
//   accept   small temporary dataset, judged       probe io (for nodeprobe accept)
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <vector>

#include "engine.h"
#include "loader_model.h"
#include "nodeprobe/cli_checks.h"
#include "nodeprobe/probe_main.h"
#include "nodeprobe/size.h"
#include "probes.h"

namespace {

using namespace nodeprobe;
using namespace nodeprobe::io;

struct CacheFlags {
  bool cold = false, warm = false, as_is = false;
  CacheMode mode() const { return cold ? CacheMode::kCold : as_is ? CacheMode::kAsIs : CacheMode::kWarm; }
};

struct LoaderFlags {
  std::string method = "pread";
  std::string pin = "auto";
  std::string dispatch = "round-robin";
  double step_ms = 0;
  bool no_shuffle = false;
  CacheFlags cache;
};

void add_loader_flags(CLI::App* sub, LoaderConfig& cfg, LoaderFlags& f) {
  sub->add_option("--batch,-b", cfg.batch, "Samples per batch (batch_size)")->capture_default_str()->check(finite_range(1, 1e6));
  sub->add_option("--method", f.method, std::string("Read method: ") + method_names())
      ->capture_default_str()
      ->check(CLI::IsMember({"pread", "direct", "mmap", "uring", "uring-direct", "null"}));
  auto* cold = sub->add_flag("--cold", f.cache.cold, "Evict the dataset from the page cache before each epoch");
  auto* warm = sub->add_flag("--warm", f.cache.warm, "Read the dataset once first, so epochs hit the page cache (default)");
  auto* as_is = sub->add_flag("--as-is", f.cache.as_is, "Leave the page cache as it is");
  cold->excludes(warm)->excludes(as_is);
  warm->excludes(as_is);
  sub->add_flag("--drop-caches", cfg.drop_caches, "With --cold: also drop the whole page cache (root only)")->needs(cold);
  sub->add_option("--pin", f.pin, "Staging memory: auto (cudaHostAlloc, else mlock), cuda, mlock, none")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cuda", "mlock", "none"}));
  sub->add_option("--seed", cfg.seed, "Shuffle seed (epoch e uses seed and e)")->capture_default_str()
      ->check(finite_range(0, 1.8e19));
  sub->add_flag("--no-shuffle", f.no_shuffle, "Read in index order");
  sub->add_flag("--drop-last", cfg.drop_last, "Drop the last incomplete batch of an epoch");
  sub->add_option("--dispatch", f.dispatch,
                  "Batches to workers: round-robin (PyTorch: batch k to worker k mod W) or first-free "
                  "(the next batch to any idle worker; same W x P in flight)")
      ->capture_default_str()
      ->check(CLI::IsMember({"round-robin", "first-free"}));
}

void finish_loader(LoaderConfig& cfg, const LoaderFlags& f) {
  cfg.method = *method_from_string(f.method);
  cfg.pin = f.pin == "cuda" ? PinMode::kCuda : f.pin == "mlock" ? PinMode::kMlock : f.pin == "none" ? PinMode::kNone : PinMode::kAuto;
  cfg.step_s = f.step_ms / 1e3;
  cfg.shuffle = !f.no_shuffle;
  cfg.cache = f.cache.mode();
  cfg.dispatch = f.dispatch == "first-free" ? Dispatch::kFirstFree : Dispatch::kRoundRobin;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nodeprobe-io: DataLoader-style IO throughput: small files vs shards, workers, prefetch, "
               "cold/warm cache, data-wait fraction",
               "nodeprobe-io"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersion) + " (" + kGitDescribe + ")");
  CommonOptions common;

  PrepareOptions prep;
  std::string size_text = "110kB";
  bool no_space_check = false;
  CLI::App* prepare = app.add_subcommand("prepare", "Write a dataset: N files, or K shards plus an index");
  prepare->add_option("--dir", prep.dir, "Dataset directory (created; an empty one is used)")->required();
  prepare->add_option("--files,-n", prep.samples, "Number of samples")->required()->check(finite_range(1, 1e9));
  prepare->add_option("--size", size_text, "Mean sample size (110kB = 110000 bytes, 128K = 131072, 2MiB)")
      ->capture_default_str()
      ->check(size_range(1, std::uint64_t{1} << 40));
  prepare->add_option("--size-spread", prep.spread_pct, "Sizes uniform in size x (1 +- PCT/100)")->capture_default_str()
      ->check(finite_range(0, 100));
  prepare->add_option("--shards", prep.shards, "Pack into K shard files with an index (0: one file per sample)")
      ->capture_default_str()->check(finite_range(0, 1e6));
  prepare->add_option("--align", prep.align, "Record alignment inside shards (4096 suits O_DIRECT)")->capture_default_str()
      ->check(finite_range(1, 1 << 30));
  prepare->add_option("--seed", prep.seed, "Content and size seed")->capture_default_str()->check(finite_range(0, 1.8e19));
  prepare->add_flag("--overwrite", prep.overwrite, "Replace a nodeprobe-io dataset already in --dir");
  prepare->add_flag("--no-space-check", no_space_check, "Skip the free-space check (unreliable statvfs, e.g. some network filesystems)");
  add_common_flags(*prepare, common);

  ReadOptions rd;
  rd.cfg.workers = default_workers();
  LoaderFlags rflags;
  CLI::App* read = app.add_subcommand("read", "Read a dataset the way a PyTorch DataLoader does");
  read->add_option("--dir", rd.dir, "Dataset directory")->required();
  read->add_option("--workers,-w", rd.cfg.workers, "Worker threads (num_workers; default half the cores)")
      ->capture_default_str()->check(finite_range(1, 4096));
  read->add_option("--prefetch,-p", rd.cfg.prefetch, "Batches in flight per worker (prefetch_factor)")
      ->capture_default_str()->check(finite_range(1, 1024));
  read->add_option("--epochs,-e", rd.cfg.epochs, "Epochs")->capture_default_str()->check(finite_range(1, 1e6));
  read->add_option("--step-ms", rflags.step_ms, "Consumer time per batch, the GPU step (0: none)")
      ->capture_default_str()->check(finite_range(0, 1e7));
  read->add_option("--max-seconds", rd.cfg.max_seconds, "Stop after this much reading time (0: none)")
      ->check(finite_range(0, 1e7));
  read->add_option("--target-au", rd.target_au, "AU the io.starved check expects")->capture_default_str()->check(finite_range(0.0, 1.0));
  add_loader_flags(read, rd.cfg, rflags);
  add_common_flags(*read, common);

  SweepOptions sw;
  LoaderFlags sflags;
  sflags.step_ms = 50;
  CLI::App* sweep = app.add_subcommand("sweep", "Find the smallest num_workers x prefetch_factor reaching a target AU");
  sweep->add_option("--dir", sw.dirs, "Dataset directory (repeat to compare files and shards)")->required();
  sweep->add_option("--step-ms", sflags.step_ms, "GPU step time per batch to feed")->capture_default_str()->check(finite_range(0.001, 1e7));
  sweep->add_option("--target-au", sw.target_au, "Accelerator utilisation to reach")->capture_default_str()->check(finite_range(0.0, 1.0));
  sweep->add_option("--workers-list", sw.workers, "Worker counts (default 1,2,4,... up to the cores)")->delimiter(',')
      ->check(finite_range(1, 4096));
  sweep->add_option("--prefetch-list", sw.prefetch, "Prefetch depths")->delimiter(',')->capture_default_str()
      ->check(finite_range(1, 1024));
  sweep->add_option("--seconds-per-point", sw.seconds_per_point, "Reading time per configuration")
      ->capture_default_str()->check(finite_range(0.01, 1e6));
  sweep->add_flag("--exhaustive", sw.exhaustive, "Measure every worker count, not only up to the first that reaches the target");
  std::vector<std::string> pipelines{"native"};
  for (const auto& pr : pipeline_presets()) pipelines.push_back(pr.name);
  sweep->add_option("--pipeline", sw.pipeline,
                    "What a PyTorch worker does per sample (the model's defaults): " + preset_names() +
                        ", or native (no Python model: a native loader such as DALI)")
      ->capture_default_str()
      ->check(CLI::IsMember(pipelines));
  sweep->add_option("--collate", sw.collate, "How batches reach the main process: stack (one tensor) or list "
                                             "(one per sample); default: the pipeline's")
      ->check(CLI::IsMember({"stack", "list"}));
  sweep->add_option("--sample-cpu-us", sw.sample_cpu_us,
                    "Worker CPU per sample, read and transform included (default: the measured cost of the pipeline)")
      ->check(finite_range(0.0, 1e9));
  sweep->add_option("--batch-cpu-us", sw.batch_cpu_us,
                    "Main-process CPU per batch inside next(): receive, unpickle, map (default: measured)")
      ->check(finite_range(0.0, 1e9));
  sweep->add_option("--step-cpu-fraction", sw.step_cpu_fraction,
                    "Share of the step the training process keeps a core busy (0: the GPU does the work)")
      ->capture_default_str()->check(finite_range(0.0, 1.0));
  sweep->add_option("--cores", sw.cores, "Cores the loader and the training process get (default: all this process may use)")
      ->check(finite_range(0.01, 1e7));  // more than this machine has: a clear run-time error
  sweep->add_option("--pin-memory", sw.pin_memory,
                    "The modelled loader's pin_memory=True: its thread receives the batches instead of next(); "
                    "auto: when a GPU is usable (PyTorch ignores it without one), on, off")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off"}));
  sweep->add_option("--peer", sw.peer, "torch: confirm with a real torch DataLoader when python can import torch")
      ->check(CLI::IsMember({"torch"}));
  sweep->add_option("--python", sw.python, "Interpreter for --peer torch")->capture_default_str();
  add_loader_flags(sweep, sw.base, sflags);
  add_common_flags(*sweep, common);

  std::string clean_dir;
  CLI::App* clean = app.add_subcommand("clean", "Remove a dataset made by prepare (nothing else)");
  clean->add_option("--dir", clean_dir, "Dataset directory")->required();
  add_common_flags(*clean, common);

  AcceptIoOptions acc;
  CLI::App* accept = app.add_subcommand("accept", "Small temporary dataset read warm and cold, judged, removed");
  accept->add_option("--data-dir", acc.data_dir, "Where the temporary dataset goes (default $TMPDIR or /tmp)");
  accept->add_option("--profile", acc.profile, "quick (seconds) or full (a minute)")
      ->capture_default_str()->check(CLI::IsMember({"quick", "full"}));
  accept->add_option("--step-ms", acc.step_ms, "Nominal GPU step per batch for the AU check")->capture_default_str()
      ->check(finite_range(0, 1e7));
  accept->add_option("--target-au", acc.target_au, "AU the io.starved check expects")->capture_default_str()
      ->check(finite_range(0, 1));
  accept->add_option("--workers,-w", acc.workers, "Worker threads (default half the cores)")->check(finite_range(1, 4096));
  accept->add_option("--min-cold-mb-s", acc.min_cold_mb_s, "Cold read throughput below this warns")->capture_default_str()
      ->check(finite_range(0, 1e9));
  add_common_flags(*accept, common);

  if (auto rc = parse_command_line(app, argc, argv)) return *rc;

  std::vector<std::unique_ptr<Probe>> probes;
  try {
    if (prepare->parsed()) {
      prep.size = parse_size(size_text).value_or(0);  // checked by size_range
      prep.space_check = !no_space_check;
      probes.push_back(std::make_unique<PrepareProbe>(prep));
    } else if (read->parsed()) {
      finish_loader(rd.cfg, rflags);
      probes.push_back(std::make_unique<ReadProbe>(rd));
    } else if (sweep->parsed()) {
      finish_loader(sw.base, sflags);
      probes.push_back(std::make_unique<SweepProbe>(sw));
    } else if (clean->parsed()) {
      probes.push_back(std::make_unique<CleanProbe>(clean_dir));
    } else if (accept->parsed()) {
      probes.push_back(std::make_unique<AcceptIoProbe>(acc));
    }
  } catch (const InputError& e) {
    std::cerr << "nodeprobe-io: " << e.what() << " (see --help)\n";
    return exit_code::kUsage;
  }
  if (probes.empty()) return exit_code::kUsage;
  return run_probes("nodeprobe-io", probes, common, argc, argv);
}
