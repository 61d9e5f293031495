#pragma once
/// Plain vocabulary of the allreduce probe: data types, reduction ops, what
/// to run (targets) and what one size of a sweep measured.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::allreduce {

enum class DType { kFloat32, kInt32, kBFloat16, kFloat16 };
/// The collectives of nccl-tests (--collective).
enum class Coll { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
enum class RedOp { kSum, kProd, kMin, kMax, kAvg };

/// Bytes per element.
std::size_t dtype_size(DType t);
/// nccl-tests spelling in tables ("float", "int32", "bfloat16", "half").
std::string_view to_string(DType t);
/// Accepts nccl-tests and common names: float, float32, int, int32, bfloat16, bf16, half, float16, fp16.
std::optional<DType> dtype_from_string(std::string_view s);
std::string_view to_string(RedOp op);
std::optional<RedOp> redop_from_string(std::string_view s);
/// "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv".
std::string_view to_string(Coll c);
/// Accepts the names above and nccl-tests' binary names (all_reduce, all_gather,
/// reduce_scatter, alltoall, sendrecv, with or without _perf).
std::optional<Coll> coll_from_string(std::string_view s);
/// Whether the collective reduces (allreduce, reducescatter, reduce): uses the op.
bool coll_reduces(Coll c);
/// Whether nccl-tests checks its in-place result (not alltoall, sendrecv: their
/// in-place columns are not measured here).
bool coll_has_in_place(Coll c);

/// The element counts of one size of a sweep, as nccl-tests derives them
/// (GetCollByteCount): `param` is the count the call takes (per rank block
/// for allgather, reducescatter and alltoall), `send` / `recv` the elements of
/// each buffer. Blocks are rounded down to 16 bytes as nccl-tests does.
struct CollCounts {
  std::size_t send = 0, recv = 0, param = 0;
  std::size_t bytes = 0;  ///< the size column: the larger buffer, in bytes
};
CollCounts coll_counts(Coll c, std::size_t bytes, std::size_t elem_size, int nranks);
/// The same from the call's count (what backends are given).
CollCounts coll_counts_of(Coll c, std::size_t param, std::size_t elem_size, int nranks);

/// One thing to measure: a backend and, for fabric, a libfabric provider or,
/// for nccl, the requested network ("socket", "ofi"; "" = NCCL's own choice).
struct Target {
  std::string backend;   ///< "mpi", "fabric", "nccl"
  std::string provider;  ///< fabric: "tcp", "efa", "shm", "udp", ...; nccl: "socket", "ofi", ""
  /// "mpi", "fabric:tcp", "nccl:socket": the name used in tables, checks and --compare.
  std::string label() const;
  bool operator==(const Target& o) const { return backend == o.backend && provider == o.provider; }
};

/// Parses one target: "mpi", "nccl", "nccl:socket", "fabric", "fabric:efa", or a bare
/// provider name ("tcp", "efa", "shm", "udp", ... meaning fabric over it).
/// `default_provider` fills "fabric" without a provider. Throws InputError.
Target parse_target(const std::string& text, const std::string& default_provider);

/// The measurement of one placement (out-of-place or in-place) at one size.
struct Placement {
  bool measured = false;
  double time_us = 0;    ///< mean time per allreduce, averaged over ranks (nccl-tests -a 1)
  double algbw = 0;      ///< GB/s (1e9 B/s): bytes / time
  double busbw = 0;      ///< GB/s: algbw x 2(n-1)/n
  long wrong = -1;       ///< elements wrong summed over ranks; -1 when not checked
  /// us per allreduce over the timed samples (per iteration on blocking
  /// backends, per group of iterations on asynchronous ones), each sample the
  /// mean over ranks; algbw and busbw stats are derived from it (rank 0 only).
  Stats time_stats;
  double time_p50_us = 0;  ///< median / 99th percentile of those samples (rank 0 only)
  double time_p99_us = 0;
  std::vector<double> rank_time_us;  ///< per rank (rank 0 only)
};

/// One line of the nccl-tests style table.
struct SizeRow {
  std::size_t bytes = 0;
  std::size_t count = 0;
  std::string algo;  ///< the algorithm the backend ran at this size ("" when its library chose)
  Placement oop;  ///< out-of-place
  Placement ip;   ///< in-place
};

/// --pt2pt: one pair at one size (measured on rank a, gathered on rank 0).
struct Pt2ptRow {
  int a = 0, b = 0;
  std::size_t bytes = 0;
  Stats latency_us;         ///< half round trip per ping-pong (osu_latency)
  double latency_p99_us = 0;
  Stats bw_GBps;            ///< a to b, per window of messages
  double bw_total_GBps = 0; ///< all windows' bytes over their time (osu_bw's number)
};

/// What one target produced.
struct TargetResult {
  Target target;
  Status status = Status::kPass;
  std::string reason;        ///< for skip / error
  std::string transport;     ///< what really carried the data ("ob1:vader", "tcp;ofi_rxm", "Socket")
  std::string device;        ///< "cpu" or the GPU
  Json details = Json::object();  ///< provider / MCA / NCCL facts
  std::vector<SizeRow> rows;
  std::vector<Pt2ptRow> pt2pt;  ///< --pt2pt (rank 0)
  std::vector<std::string> rank_devices;  ///< per rank (rank 0 only)
  /// Extra judged items (efa.missing, efa.fallback_tcp).
  std::vector<Check> checks;
};

}  // namespace nodeprobe::allreduce
