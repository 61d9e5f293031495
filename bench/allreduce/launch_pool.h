#pragma once
/// --launches K: the launcher starts the ranks K times (separate mpirun
/// launches) and each launch's rank 0 adds its timed samples to a pool file
/// the launcher owns, so the last launch reports every launch's samples
/// together. Samples inside one launch share its process and CPU placement;
/// two launches of an unchanged node can differ far beyond one launch's
/// spread (measured on a 2-vCPU VM: MPI at 1 MiB 140 us in most launches,
/// 730 us in some, every sample of a launch in one mode). Pooled, the spread
/// holds that variation and compare does not call it a change.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeprobe::allreduce {

class SamplePool {
 public:
  /// Reads `path` when it exists (an earlier launch wrote it). Throws
  /// InputError on a file that is not a pool.
  explicit SamplePool(std::string path);

  /// Adds this launch's `samples` (us per allreduce) and its mean `mean_us`
  /// over `iters` iterations under `key`; returns every launch's samples so
  /// far and sets `*pooled_mean_us` to the iteration-weighted mean of the
  /// launches' means.
  std::vector<double> add(const std::string& key, const std::vector<double>& samples, double mean_us, int iters,
                          double* pooled_mean_us);

  /// Launches whose samples are in the pool, this one included once add() ran.
  int launches() const { return launches_; }

  /// Writes the pool for the next launch (atomic_file.h). Throws ApiError.
  void save() const;

 private:
  std::string path_;
  nlohmann::ordered_json cells_ = nlohmann::ordered_json::object();
  int launches_ = 0;
  bool counted_ = false;
};

}  // namespace nodeprobe::allreduce
