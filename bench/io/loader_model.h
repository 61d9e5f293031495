#pragma once
/// The CPU side of a real PyTorch DataLoader, which the native reader does
/// not have. A DataLoader's worker processes spend Python-level CPU on every
/// sample (open, read into a bytearray, make a tensor, the user's decode and
/// transform, its share of collate and of moving the batch into shared
/// memory), and the main process spends CPU on every batch inside next()
/// (take it from the result queue, unpickle, receive one descriptor per
/// tensor, map it). On a small node these, not the storage, decide how fast
/// the loader can go, and the main process's part is paid inline with the
/// training step.
///
/// The sweep emulates this model in the native loader (workers burn their
/// per-sample CPU, the consumer burns the per-batch CPU as data wait), so the
/// AU it predicts is measured under the node's real scheduling, storage and
/// contention. The formulas here give the ceilings it prints side by side
/// and name the bound that binds; they are pure, so the tests check them with
/// known costs.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nodeprobe::io {

/// How a batch reaches the main process: one tensor for the whole batch
/// (default_collate stacks equal-sized samples) or one per sample (a list, what
/// variable-sized bytes need). The main process pays per tensor.
enum class Collate { kStack, kList };
const char* to_string(Collate c);

/// A named input pipeline: what a worker does per sample after the read, and
/// how it collates. The costs are the model's defaults (see docs/io.md, "The
/// loader model", for how each was measured).
struct PipelinePreset {
  std::string name;         ///< "raw", "jpeg-224"
  std::string what;         ///< one line for --help and the report
  double extra_sample_us;   ///< worker CPU per sample beyond the plain Python-level read
  Collate collate;          ///< the collate the pipeline needs
  std::size_t out_bytes;    ///< bytes per sample the worker hands over (0: the record itself)
};
const std::vector<PipelinePreset>& pipeline_presets();
/// nullptr when there is no such preset.
const PipelinePreset* find_preset(std::string_view name);
/// "raw, jpeg-224".
std::string preset_names();

/// The CPU a PyTorch DataLoader spends: the model's inputs.
struct LoaderCpu {
  double sample_cpu_s = 0;  ///< a worker's CPU per sample, all of it (read, transform, collate share)
  double batch_cpu_s = 0;   ///< the main process's CPU per batch inside next() (receive, unpickle, map)
  double step_cpu_s = 0;    ///< CPU the training step itself keeps busy per batch (0: GPU-bound / a sleep)
  bool receive_thread = false;  ///< batch_cpu_s runs in pin_memory's thread, beside the step, not inside next()
  std::string sample_from;  ///< where sample_cpu_s comes from ("--sample-cpu-us", "measured default ...")
  std::string batch_from;
  bool any() const { return sample_cpu_s > 0 || batch_cpu_s > 0 || step_cpu_s > 0; }
};

/// The node's CPU against the machine the defaults were measured on: a fixed
/// native workload with the kernel work a DataLoader does per sample (a fresh
/// shared-memory segment, the sample copied in, its pages faulted and freed),
/// timed in thread CPU at start-up. The defaults are multiplied by
/// cpu_factor = calibration_us() / kCalibrationRefUs.
double calibration_us();
double calibration_ref_us();

/// Worker CPU per sample of a plain Python-level read of `sample_bytes` (the
/// measured default): kReadBaseUs + kReadPerMBUs x MB, plus the per-tensor
/// share-memory cost of the collate.
double python_read_us(double sample_bytes, Collate collate, std::size_t batch);
/// Main-process CPU per batch inside next(): kBatchBaseUs + kTensorUs x
/// tensors + kMainPerMBUs x the batch's MB (freeing its shared memory).
double main_batch_us(double sample_bytes, Collate collate, std::size_t batch);

/// The model's inputs for a pipeline preset on samples of `mean_sample_bytes`,
/// batches of `batch`; explicit flags (>= 0) override the defaults.
/// The defaults are scaled by `cpu_factor` (1: the reference machine).
LoaderCpu loader_cpu(const PipelinePreset& preset, Collate collate, double mean_sample_bytes, std::size_t batch,
                     double sample_cpu_us_flag, double batch_cpu_us_flag, double step_cpu_fraction, double step_s,
                     double cpu_factor = 1.0);

/// Samples/s the modelled loader's CPU allows with `workers` worker processes
/// on `cores` cores and no step: each worker is one process (at most one core),
/// the main process is one thread (at most one core), and all of them share
/// the cores. `native_sample_cpu_s` is what the read itself costs (a worker
/// spends the larger of the two).
double cpu_ceiling(const LoaderCpu& cpu, double native_sample_cpu_s, std::size_t workers, std::size_t batch,
                   double cores);

/// Samples/s the training loop can take at most with the main process's
/// per-batch CPU paid inline: batch / (step + batch_cpu); with a receive
/// thread beside the step: batch / max(step, batch_cpu).
double loop_ceiling(const LoaderCpu& cpu, std::size_t batch, double step_s);

/// The consumer's demand: batch / step.
double demand(std::size_t batch, double step_s);

enum class Bound { kStorage, kCpu, kConsumer };
const char* to_string(Bound b);

/// What the bound is judged from.
struct BoundInputs {
  double storage_sps = 0;          ///< the native reader, no step (measured)
  double loader_sps = -1;          ///< the modelled loader without IO, no step (measured; < 0: not measured)
  LoaderCpu cpu;
  double native_sample_cpu_s = 0;  ///< the native reader's CPU per sample
  std::size_t workers = 1;         ///< the most workers of the sweep
  std::size_t batch = 32;
  double cores = 1;
  double step_s = 0;
  double predicted_au = 0, target_au = 0.9;
  bool files_layout = true;
};

/// The three ceilings side by side, and which binds.
struct BoundReport {
  double storage_sps = 0;     ///< the native reader, no step (measured)
  double loader_sps = 0;      ///< the modelled loader's ceiling: measured without IO, else computed
  double loader_cpu_sps = 0;  ///< the same from the CPU costs alone (cpu_ceiling)
  double loop_sps = 0;        ///< what the loop can take with the receive inline (computed)
  double demand_sps = 0;      ///< batch / step
  Bound bound = Bound::kConsumer;
  std::string advice;         ///< "fine: ...", "storage-bound: ...", "CPU-bound: ..."
};

/// Which bound binds. When the predicted AU reaches the target the consumer's
/// demand binds (the loader keeps up: "fine"); otherwise the lower of the
/// storage ceiling and the loader's ceiling (its CPU, including the main
/// process's receive paid inline with the step) is the one to raise.
BoundReport judge_bound(const BoundInputs& in);

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), seconds.
double thread_cpu_s();
/// Spins until the calling thread's CPU time reaches `until_s` (of
/// thread_cpu_s()): the emulated Python work. It costs CPU, not wall time, so
/// when threads outnumber cores it takes longer, as the real work would.
void burn_cpu_until(double until_s);

/// Cores this process may run on (its affinity mask; at least 1).
unsigned available_cores();
/// Restricts this process (the calling thread and every thread and child it
/// creates afterwards) to the first `n` CPUs of its affinity mask. Returns ""
/// or why it could not.
std::string restrict_cores(unsigned n);

}  // namespace nodeprobe::io
