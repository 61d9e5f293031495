#include "loader_model.h"

#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace nodeprobe::io {
namespace {

// The measured defaults. bench/io/loader_costs.py measures them with a real
// torch.utils.data.DataLoader (one worker, warm page cache, no step, CPU from
// RUSAGE_CHILDREN for the workers and process_time for the main process) and
// fits the lines below; docs/io.md, "The loader model", has the run, the
// machine and the fit. They are CPU seconds, which other tenants move much
// less than wall time, but they are one machine's: a node with torch can
// measure its own (`bench/io/loader_costs.py` prints them as flags) and
// `--peer torch` checks the prediction against the real loader.
constexpr double kReadBaseUs = 61;     // worker, per sample: the Python-level read, collate excluded
constexpr double kReadPerMBUs = 1184;  // worker, per MB handed over (bytearray fill, copy into shared memory)
constexpr double kShareTensorUs = 217;  // worker, per tensor sent (shared-memory segment, descriptor served)
constexpr double kBatchBaseUs = 1010;   // main, per batch: queue get, unpickle, next index put
constexpr double kTensorUs = 217;      // main, per tensor: descriptor received, mapped, unmapped
constexpr double kMainPerMBUs = 139;   // main, per MB of the batch: its shared-memory pages freed

// calibration_us() on the machine and at the time the constants above were
// measured (bench/io/loader_costs.py prints both).
constexpr double kCalibrationRefUs = 112.7;

double tensors_per_batch(Collate c, std::size_t batch) {
  return c == Collate::kList ? static_cast<double>(batch) : 1.0;
}

std::string whole(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace

const char* to_string(Collate c) { return c == Collate::kStack ? "stack" : "list"; }

const std::vector<PipelinePreset>& pipeline_presets() {
  static const std::vector<PipelinePreset> presets{
      {"raw", "the record's bytes as a uint8 tensor (a plain Python-level read), list collate", 0, Collate::kList, 0},
      {"jpeg-224",
       "PIL decode of a ~110 kB JPEG + RandomResizedCrop(224) + flip + ToTensor + Normalize, stack collate", 3659,
       Collate::kStack, 3 * 224 * 224 * 4},
  };
  return presets;
}

const PipelinePreset* find_preset(std::string_view name) {
  for (const auto& p : pipeline_presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string out;
  for (const auto& p : pipeline_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

double calibration_ref_us() { return kCalibrationRefUs; }

double calibration_us() {
  constexpr std::size_t kBytes = 110000;  // an ImageNet-sized sample
  constexpr int kRounds = 5, kIterations = 16;
  std::vector<unsigned char> src(kBytes, 0x5a);
  std::vector<double> rounds;
  for (int round = 0; round < kRounds; ++round) {
    const double c0 = thread_cpu_s();
    for (int i = 0; i < kIterations; ++i) {
      // What torch does to hand a sample over: a shared-memory segment, sized,
      // mapped, filled (faulting its pages), unmapped and freed.
      const int fd = ::memfd_create("nodeprobe-calibrate", MFD_CLOEXEC);
      if (fd < 0) return 0;
      if (::ftruncate(fd, static_cast<off_t>(kBytes)) != 0) {
        ::close(fd);
        return 0;
      }
      void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) {
        std::memcpy(p, src.data(), kBytes);
        ::munmap(p, kBytes);
      }
      ::close(fd);
    }
    rounds.push_back((thread_cpu_s() - c0) / kIterations * 1e6);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

double python_read_us(double sample_bytes, Collate collate, std::size_t batch) {
  const double b = static_cast<double>(std::max<std::size_t>(batch, 1));
  return kReadBaseUs + kReadPerMBUs * sample_bytes / 1e6 + kShareTensorUs * tensors_per_batch(collate, batch) / b;
}

double main_batch_us(double sample_bytes, Collate collate, std::size_t batch) {
  return kBatchBaseUs + kTensorUs * tensors_per_batch(collate, batch) +
         kMainPerMBUs * sample_bytes * static_cast<double>(batch) / 1e6;
}

LoaderCpu loader_cpu(const PipelinePreset& preset, Collate collate, double mean_sample_bytes, std::size_t batch,
                     double sample_cpu_us_flag, double batch_cpu_us_flag, double step_cpu_fraction, double step_s,
                     double cpu_factor) {
  LoaderCpu c;
  const std::string scaled = cpu_factor != 1.0 ? ", x" + whole(cpu_factor * 100) + " % for this CPU" : "";
  const double handed = preset.out_bytes > 0 ? static_cast<double>(preset.out_bytes) : mean_sample_bytes;
  if (sample_cpu_us_flag >= 0) {
    c.sample_cpu_s = sample_cpu_us_flag * 1e-6;
    c.sample_from = "--sample-cpu-us";
  } else {
    // The read of the record, plus the preset's transform, plus moving what it
    // hands over (the record, or the transform's output) into shared memory.
    const double us = python_read_us(handed, collate, batch) + preset.extra_sample_us;
    c.sample_cpu_s = us * cpu_factor * 1e-6;
    c.sample_from = "measured default for " + preset.name + " (" + whole(handed / 1e3) + " kB per sample, " +
                    to_string(collate) + " collate" + scaled + ")";
  }
  if (batch_cpu_us_flag >= 0) {
    c.batch_cpu_s = batch_cpu_us_flag * 1e-6;
    c.batch_from = "--batch-cpu-us";
  } else {
    c.batch_cpu_s = main_batch_us(handed, collate, batch) * cpu_factor * 1e-6;
    c.batch_from = std::string("measured default (") + to_string(collate) + " collate, " +
                   whole(tensors_per_batch(collate, batch)) + " tensors per batch" + scaled + ")";
  }
  c.step_cpu_s = std::clamp(step_cpu_fraction, 0.0, 1.0) * std::max(0.0, step_s);
  return c;
}

double cpu_ceiling(const LoaderCpu& cpu, double native_sample_cpu_s, std::size_t workers, std::size_t batch,
                   double cores) {
  const double s = std::max(cpu.sample_cpu_s, native_sample_cpu_s);
  const double b = static_cast<double>(std::max<std::size_t>(batch, 1));
  const double inf = std::numeric_limits<double>::infinity();
  const double by_workers = s > 0 ? static_cast<double>(workers) / s : inf;
  const double by_main = cpu.batch_cpu_s > 0 ? b / cpu.batch_cpu_s : inf;
  const double per_sample = s + (cpu.batch_cpu_s + cpu.step_cpu_s) / b;
  const double by_cores = per_sample > 0 ? std::max(cores, 1e-9) / per_sample : inf;
  return std::min({by_workers, by_main, by_cores});
}

double loop_ceiling(const LoaderCpu& cpu, std::size_t batch, double step_s) {
  const double step = std::max(0.0, step_s);
  const double period = cpu.receive_thread ? std::max(step, cpu.batch_cpu_s) : step + cpu.batch_cpu_s;
  return period > 0 ? static_cast<double>(batch) / period : std::numeric_limits<double>::infinity();
}

double demand(std::size_t batch, double step_s) {
  return step_s > 0 ? static_cast<double>(batch) / step_s : std::numeric_limits<double>::infinity();
}

const char* to_string(Bound b) {
  switch (b) {
    case Bound::kStorage: return "storage";
    case Bound::kCpu: return "cpu";
    case Bound::kConsumer: return "consumer";
  }
  return "unknown";
}

BoundReport judge_bound(const BoundInputs& in) {
  BoundReport r;
  const LoaderCpu& cpu = in.cpu;
  r.storage_sps = in.storage_sps;
  r.loader_cpu_sps = cpu_ceiling(cpu, in.native_sample_cpu_s, in.workers, in.batch, in.cores);
  r.loader_sps = in.loader_sps >= 0 ? in.loader_sps : r.loader_cpu_sps;
  r.loop_sps = loop_ceiling(cpu, in.batch, in.step_s);
  r.demand_sps = demand(in.batch, in.step_s);
  char buf[400];
  if (in.predicted_au >= in.target_au) {
    r.bound = Bound::kConsumer;
    std::snprintf(buf, sizeof buf,
                  "fine: the step decides (it takes %.0f samples/s; the loader can give ~%.0f, the storage %.0f)",
                  r.demand_sps, std::min(r.loader_sps, r.loop_sps), r.storage_sps);
    r.advice = buf;
    return r;
  }
  // Which side of the loader binds, from the costs: the main process (its
  // receive, paced with the step) or the workers on the cores left to them.
  LoaderCpu workers_only = cpu;
  workers_only.batch_cpu_s = 0;
  const double workers_sps = cpu_ceiling(workers_only, in.native_sample_cpu_s, in.workers, in.batch, in.cores);
  if (in.storage_sps < std::min(r.loader_sps, r.loop_sps)) {
    r.bound = Bound::kStorage;
    std::snprintf(buf, sizeof buf, "storage-bound: the storage feeds ~%.0f samples/s, the step takes %.0f; %s",
                  in.storage_sps, r.demand_sps,
                  in.files_layout ? "pack into shards, cache the dataset on local NVMe or use faster storage"
                                  : "cache the dataset on local NVMe or use faster storage");
  } else if (r.loop_sps <= workers_sps && r.loop_sps <= r.loader_sps) {
    r.bound = Bound::kCpu;
    std::snprintf(buf, sizeof buf,
                  "CPU-bound: the main process spends ~%.1f ms per batch receiving it%s, so AU cannot exceed ~%.0f "
                  "%% at a %.0f ms step whatever the workers do; fewer tensors per batch (collate into one)%s, "
                  "larger steps",
                  cpu.batch_cpu_s * 1e3, cpu.receive_thread ? " in its pin_memory thread" : ", inside next()",
                  100 * in.step_s * r.loop_sps / static_cast<double>(in.batch), in.step_s * 1e3,
                  cpu.receive_thread ? "" : ", pin_memory=True on the GPU node (the receive moves to its thread)");
  } else {
    r.bound = Bound::kCpu;
    std::snprintf(buf, sizeof buf,
                  "CPU-bound: the loader cannot exceed ~%.0f samples/s on this node with %.0f cores (%.0f us of "
                  "worker CPU per sample, %.1f ms of main-process CPU per batch); move decode to the GPU (DALI) "
                  "or use more cores",
                  r.loader_sps, in.cores, std::max(cpu.sample_cpu_s, in.native_sample_cpu_s) * 1e6,
                  cpu.batch_cpu_s * 1e3);
  }
  r.advice = buf;
  return r;
}

double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void burn_cpu_until(double until_s) {
  volatile std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  while (thread_cpu_s() < until_s) {
    // ~1 us of arithmetic between clock reads, so the clock is not most of the work.
    for (int i = 0; i < 256; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  }
}

unsigned available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

std::string restrict_cores(unsigned n) {
  cpu_set_t set, keep;
  CPU_ZERO(&set);
  CPU_ZERO(&keep);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return std::string("sched_getaffinity: ") + std::strerror(errno);
  unsigned kept = 0;
  for (std::size_t cpu = 0; cpu < CPU_SETSIZE && kept < n; ++cpu)
    if (CPU_ISSET(cpu, &set)) {
      CPU_SET(cpu, &keep);
      ++kept;
    }
  if (kept < n) return "only " + std::to_string(kept) + " cores are available to this process";
  if (::sched_setaffinity(0, sizeof keep, &keep) != 0) return std::string("sched_setaffinity: ") + std::strerror(errno);
  return "";
}

}  // namespace nodeprobe::io
