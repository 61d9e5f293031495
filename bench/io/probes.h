#pragma once
/// The probes behind nodeprobe-io's subcommands. Each runs through the
/// shared driver (run_probes), so every subcommand writes a normal report.

#include <string>
#include <vector>

#include "loader.h"
#include "nodeprobe/probe.h"
#include "prepare.h"

namespace nodeprobe::io {

/// `read`: one loader run on a dataset (probe "io", merges into accept).
struct ReadOptions {
  std::string dir;
  LoaderConfig cfg;
  double target_au = 0.9;
};
class ReadProbe final : public Probe {
 public:
  explicit ReadProbe(ReadOptions o) : opt_(std::move(o)) {}
  std::string key() const override { return "io"; }
  std::string description() const override {
    return "DataLoader-style reads: samples/s, MB/s, data-wait fraction, AU, batch latency";
  }
  void run(ProbeContext& ctx, ProbeResult& r) override;

 private:
  ReadOptions opt_;
};

/// `prepare`: writes a dataset (probe "io-prepare").
class PrepareProbe final : public Probe {
 public:
  explicit PrepareProbe(PrepareOptions o) : opt_(std::move(o)) {}
  std::string key() const override { return "io-prepare"; }
  std::string description() const override { return "write an incompressible dataset (files or shards)"; }
  void run(ProbeContext& ctx, ProbeResult& r) override;

 private:
  PrepareOptions opt_;
};

/// `clean`: removes a dataset prepare made (probe "io-clean").
class CleanProbe final : public Probe {
 public:
  explicit CleanProbe(std::string dir) : dir_(std::move(dir)) {}
  std::string key() const override { return "io-clean"; }
  std::string description() const override { return "remove a dataset made by prepare"; }
  void run(ProbeContext& ctx, ProbeResult& r) override;

 private:
  std::string dir_;
};

/// `sweep`: workers x prefetch grid, smallest setting reaching the target AU (probe "io-sweep").
struct SweepOptions {
  std::vector<std::string> dirs;
  LoaderConfig base;
  std::vector<std::size_t> workers;           ///< empty: 1, 2, 4, ... cores
  std::vector<std::size_t> prefetch{1, 2, 4};
  double target_au = 0.9;
  double seconds_per_point = 2;
  bool exhaustive = false;  ///< keep going after a worker count reached the target
  // The DataLoader model (loader_model.h): what a PyTorch loader adds to the reads.
  std::string pipeline = "raw";     ///< a preset (pipeline_presets()) or "native" (no model: a native loader)
  std::string collate;              ///< "stack" | "list"; "" = the preset's
  double sample_cpu_us = -1;        ///< worker CPU per sample; < 0: the preset's measured default
  double batch_cpu_us = -1;         ///< main-process CPU per batch; < 0: the measured default
  double step_cpu_fraction = 0;     ///< share of the step the training process spends on the CPU
  unsigned cores = 0;               ///< cores the loader and the training process get (0: all this process may use)
  std::string pin_memory = "auto";  ///< the modelled loader's pin_memory thread: auto (with a usable GPU), on, off
  std::string peer;                 ///< "" | "torch": confirm with a real DataLoader when there is one
  std::string python = "python3";   ///< the interpreter the torch peer runs with
};
class SweepProbe final : public Probe {
 public:
  explicit SweepProbe(SweepOptions o) : opt_(std::move(o)) {}
  std::string key() const override { return "io-sweep"; }
  std::string description() const override {
    return "smallest num_workers x prefetch_factor reaching a target AU, and what to set";
  }
  void run(ProbeContext& ctx, ProbeResult& r) override;

 private:
  SweepOptions opt_;
};

/// `accept`: a small temporary dataset under a data directory, read warm and
/// cold in both layouts, judged, removed (probe "io", for nodeprobe accept).
struct AcceptIoOptions {
  std::string data_dir;        ///< empty: $TMPDIR or /tmp
  std::string profile = "quick";
  double step_ms = 25;         ///< nominal GPU step per batch for the AU check
  double target_au = 0.9;
  double min_cold_mb_s = 125;  ///< EBS gp3 baseline throughput
  std::size_t workers = 0;     ///< 0: half the cores
  std::size_t batch = 32;
  std::size_t prefetch = 2;
};
class AcceptIoProbe final : public Probe {
 public:
  explicit AcceptIoProbe(AcceptIoOptions o) : opt_(std::move(o)) {}
  std::string key() const override { return "io"; }
  std::string description() const override {
    return "input pipeline fitness: small dataset read warm and cold, files and shards, AU at a nominal step";
  }
  void run(ProbeContext& ctx, ProbeResult& r) override;

 private:
  AcceptIoOptions opt_;
};

/// Default worker count: half the online cores, at least 1 (FIELD-NOTES: 1/2..3/4).
std::size_t default_workers();

}  // namespace nodeprobe::io
