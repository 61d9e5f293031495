#pragma once
/// One code path per backend behind a small interface (after fabtests'
/// shared harness): set up for the largest size, fill inputs, run one
/// allreduce, check the output. The sweep, the scaling emulation and the
/// report are written once against it.

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "ar_types.h"
#include "data.h"
#include "options.h"

namespace nodeprobe::allreduce {

/// Thrown by a backend's setup when it cannot run here (no GPU, no provider):
/// the target is reported as skip (or with `check` as a failed check) instead of error.
class BackendUnavailable : public std::runtime_error {
 public:
  BackendUnavailable(const std::string& why, Check check = {})
      : std::runtime_error(why), check_(std::move(check)) {}
  const Check& check() const { return check_; }

 private:
  Check check_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// Allocates buffers for `max_count` elements and connects the ranks. Collective.
  /// Throws BackendUnavailable (same outcome on every rank) or ApiError.
  virtual void setup(std::size_t max_count) = 0;
  /// `count` below is the collective call's count (nccl-tests' count column:
  /// the per-rank block of allgather, reducescatter and alltoall; the whole
  /// vector otherwise); coll_data() gives the buffers' element counts.
  /// Writes this rank's inputs for check repetition `rep` (into the result buffer when in place).
  virtual void fill(std::size_t count, bool in_place, int rep) = 0;
  /// Starts one collective (Plan::coll) of `count`; host backends complete it before returning.
  virtual void launch(std::size_t count, bool in_place) = 0;
  /// Waits for every launched allreduce (GPU backends); no-op for host ones.
  virtual void wait() {}
  /// Whether launch() completes the operation (per-iteration timing is then exact).
  virtual bool blocking() const { return true; }
  /// Wrong elements in this rank's result for repetition `rep`.
  virtual long check(std::size_t count, int rep) = 0;
  /// Overwrites one result element (fault injection for tests).
  virtual void corrupt_one() = 0;
  /// The algorithm this backend runs for `count` elements ("rd", "ring"; "" when the library chooses).
  virtual std::string algorithm(std::size_t /*count*/) const { return {}; }
  /// What carried the data ("ob1:tcp", "tcp;ofi_rxm", "Socket"), known after setup.
  virtual std::string transport() const = 0;
  /// "cpu" or the GPU.
  virtual std::string device() const { return "cpu"; }
  /// Facts for the report (provider attributes, MCA settings, NCCL log lines).
  virtual Json details() const { return Json::object(); }
  /// Judged items the backend found (efa.fallback_tcp), known after the sweep.
  virtual std::vector<Check> checks() const { return {}; }
  /// Makes the calling thread usable for launch() (GPU: set the device).
  virtual void bind_thread() {}

  /// --pt2pt: whether the backend sends single messages (mpi, fabric; not nccl).
  virtual bool has_pt2pt() const { return false; }
  /// `window` messages of `bytes` from the send buffer to `peer`, returning when all went out.
  virtual void send_to(int /*peer*/, std::size_t /*bytes*/, int /*window*/) {}
  /// `window` messages of `bytes` from `peer` into the receive buffer, returning when all arrived.
  virtual void recv_from(int /*peer*/, std::size_t /*bytes*/, int /*window*/) {}
};

class SamplePool;

struct BackendContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  const Options* opt = nullptr;
  const Plan* plan = nullptr;
  bool single_host = false;
  int local_rank = 0, local_size = 1;
  std::string iface_ip;  ///< address of the chosen interface (fabric tcp domain pick)
  std::string iface;     ///< its name
  SamplePool* pool = nullptr;  ///< rank 0 under --launches: earlier launches' samples (launch_pool.h)
};

std::unique_ptr<Backend> make_mpi_backend(const BackendContext& ctx);
/// Throws BackendUnavailable when this build has no libfabric.
std::unique_ptr<Backend> make_fabric_backend(const BackendContext& ctx, const std::string& provider);
/// Throws BackendUnavailable when this build has no NCCL.
std::unique_ptr<Backend> make_nccl_backend(const BackendContext& ctx, const std::string& net);

std::unique_ptr<Backend> make_backend(const BackendContext& ctx, const Target& t);

/// What this rank of `ctx` reads and writes in one collective of `count`
/// (the call's count: Backend's `count` everywhere).
CollData coll_data(const BackendContext& ctx, std::size_t count);

}  // namespace nodeprobe::allreduce
