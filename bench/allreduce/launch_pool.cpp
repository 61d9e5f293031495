#include "launch_pool.h"

#include <sys/stat.h>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/error.h"
#include "nodeprobe/json_input.h"

namespace nodeprobe::allreduce {

SamplePool::SamplePool(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (path_.empty() || ::stat(path_.c_str(), &st) != 0) return;
  const auto j = load_json(path_, input_limits(InputKind::kReport));
  if (!j.is_object() || !j.contains("launches") || !j["launches"].is_number_integer() || !j.contains("cells") ||
      !j["cells"].is_object())
    throw InputError(path_ + ": not a sample pool of nodeprobe-allreduce --launches");
  launches_ = j["launches"].get<int>();
  cells_ = j["cells"];
}

std::vector<double> SamplePool::add(const std::string& key, const std::vector<double>& samples, double mean_us,
                                    int iters, double* pooled_mean_us) {
  if (!counted_) ++launches_, counted_ = true;
  auto& cell = cells_[key];
  if (!cell.is_object()) cell = {{"samples_us", nlohmann::ordered_json::array()}, {"sum_us", 0.0}, {"iters", 0}};
  for (double s : samples) cell["samples_us"].push_back(s);
  cell["sum_us"] = cell["sum_us"].get<double>() + mean_us * iters;
  cell["iters"] = cell["iters"].get<int>() + iters;
  const int n = cell["iters"].get<int>();
  if (pooled_mean_us) *pooled_mean_us = n > 0 ? cell["sum_us"].get<double>() / n : mean_us;
  return cell["samples_us"].get<std::vector<double>>();
}

void SamplePool::save() const {
  if (path_.empty()) return;
  write_file_atomic(path_, nlohmann::ordered_json{{"launches", launches_}, {"cells", cells_}}.dump() + "\n", 0600);
}

}  // namespace nodeprobe::allreduce
