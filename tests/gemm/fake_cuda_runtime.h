#pragma once
// A CPU stand-in for the CUDA runtime calls in nodeprobe::cuda::Runtime, for
// unit tests of code that has never met a GPU. Device memory is host memory;
// what matters is the *ordering* model, taken from the CUDA documentation:
//
// - work on a stream runs in order, and only when something waits for that
//   stream (cudaStreamSynchronize, cudaStreamQuery, an event on it);
// - streams created with cudaStreamNonBlocking are not ordered with the
//   legacy default stream (stream 0) or with each other;
// - an H2D copy from pageable memory takes its data when called (the runtime
//   stages it) but lands in device memory only when its stream runs; a D2H
//   copy to pageable memory waits for its stream first;
// - fresh device memory holds garbage (0xab bytes), as cudaMalloc's does.
//
// So a copy queued on the wrong stream is visibly out of order, the way a
// race on a GPU would be, but every time.
//
// Threads: every call holds one lock, so several threads (the ranks of a
// fake multi-rank NCCL) may drive it at once. A queued step may be unable to
// finish yet (enqueue_until: a collective waiting for its peers): its stream
// is then not ready, and a synchronising call waits for it, bounded.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "nodeprobe/cuda/runtime.h"

namespace nodeprobe::testing {

class FakeCudaRuntime {
 public:
  /// Installs this instance behind the table's functions (one at a time).
  FakeCudaRuntime();
  ~FakeCudaRuntime();
  FakeCudaRuntime(const FakeCudaRuntime&) = delete;
  FakeCudaRuntime& operator=(const FakeCudaRuntime&) = delete;

  const cuda::Runtime& runtime() const { return rt_; }

  // Knobs.
  int runtime_version = 13000, driver_version = 13000;
  cudaError_t device_count_error = cudaSuccess;
  std::vector<cudaDeviceProp> devices;  ///< one "NVIDIA H100 80GB HBM3" (9.0) by default
  bool hang = false;                    ///< queued work never completes (a hung kernel)
  cudaError_t query_error = cudaSuccess;  ///< what cudaStreamQuery reports instead of running

  /// Queues `op` on `s` (fake libraries' kernels, e.g. the fake NCCL).
  void enqueue(cudaStream_t s, std::function<void()> op);
  /// Queues a step that may not be able to finish yet: it returns false and
  /// is tried again (the stream stays not ready) until it returns true.
  void enqueue_until(cudaStream_t s, std::function<bool()> op);
  /// Runs what is queued on `s`; false when a step could not finish yet.
  bool run(cudaStream_t s);
  /// Runs every stream (what cudaFree's implicit device synchronisation does).
  void run_all();
  /// Calls made, by name, in order (when record_calls).
  std::vector<std::string> calls;
  bool record_calls = true;
  int current_device = 0;
  /// The instance currently installed (for the C functions behind the table).
  static FakeCudaRuntime& current();

 private:
  friend struct FakeCudaAccess;
  struct Stream {
    std::deque<std::function<bool()>> ops;
  };
  std::recursive_mutex mu_;
  Stream& stream(cudaStream_t s);
  cuda::Runtime rt_;
  Stream legacy_;
  std::set<Stream*> streams_;
  std::set<void*> pinned_;
  std::map<void*, std::size_t> device_;
  struct Event {
    Stream* stream = nullptr;
    bool recorded = false, done = false;
    long long seq = 0;
  };
  std::set<Event*> events_;
  long long seq_ = 0;
};

}  // namespace nodeprobe::testing
