#include "ar_math.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "nodeprobe/error.h"

namespace nodeprobe::allreduce {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kBFloat16:
    case DType::kFloat16:
      return 2;
  }
  return 4;
}

std::string_view to_string(DType t) {
  switch (t) {
    case DType::kFloat32: return "float";
    case DType::kInt32: return "int32";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat16: return "half";
  }
  return "unknown";
}

std::optional<DType> dtype_from_string(std::string_view s) {
  if (s == "float" || s == "float32" || s == "fp32") return DType::kFloat32;
  if (s == "int" || s == "int32") return DType::kInt32;
  if (s == "bfloat16" || s == "bf16") return DType::kBFloat16;
  if (s == "half" || s == "float16" || s == "fp16") return DType::kFloat16;
  return std::nullopt;
}

std::string_view to_string(RedOp op) {
  switch (op) {
    case RedOp::kSum: return "sum";
    case RedOp::kProd: return "prod";
    case RedOp::kMin: return "min";
    case RedOp::kMax: return "max";
    case RedOp::kAvg: return "avg";
  }
  return "unknown";
}

std::optional<RedOp> redop_from_string(std::string_view s) {
  if (s == "sum") return RedOp::kSum;
  if (s == "prod") return RedOp::kProd;
  if (s == "min") return RedOp::kMin;
  if (s == "max") return RedOp::kMax;
  if (s == "avg") return RedOp::kAvg;
  return std::nullopt;
}

std::string_view to_string(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "allreduce";
    case Coll::kAllGather: return "allgather";
    case Coll::kReduceScatter: return "reducescatter";
    case Coll::kBroadcast: return "broadcast";
    case Coll::kReduce: return "reduce";
    case Coll::kAllToAll: return "alltoall";
    case Coll::kSendRecv: return "sendrecv";
  }
  return "unknown";
}

std::optional<Coll> coll_from_string(std::string_view s) {
  std::string k;
  for (char ch : s)
    if (ch != '_' && ch != '-') k += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (k.size() > 4 && k.compare(k.size() - 4, 4, "perf") == 0) k.resize(k.size() - 4);  // all_reduce_perf
  for (Coll c : {Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast, Coll::kReduce,
                 Coll::kAllToAll, Coll::kSendRecv})
    if (k == to_string(c)) return c;
  if (k == "bcast") return Coll::kBroadcast;
  return std::nullopt;
}

bool coll_reduces(Coll c) { return c == Coll::kAllReduce || c == Coll::kReduceScatter || c == Coll::kReduce; }

bool coll_has_in_place(Coll c) { return c != Coll::kAllToAll && c != Coll::kSendRecv; }

CollCounts coll_counts(Coll c, std::size_t bytes, std::size_t elem_size, int nranks) {
  const std::size_t n = static_cast<std::size_t>(std::max(1, nranks));
  const std::size_t count = bytes / elem_size;
  // Per-rank blocks: a whole number of 16-byte units (nccl-tests: & ~(16/eltSize - 1)).
  const std::size_t align = std::max<std::size_t>(1, 16 / elem_size);
  const std::size_t block = (count / n) / align * align;
  const bool blocks = c == Coll::kAllGather || c == Coll::kReduceScatter || c == Coll::kAllToAll;
  return coll_counts_of(c, blocks ? block : count, elem_size, nranks);
}

CollCounts coll_counts_of(Coll c, std::size_t param, std::size_t elem_size, int nranks) {
  const std::size_t n = static_cast<std::size_t>(std::max(1, nranks));
  CollCounts k;
  k.param = k.send = k.recv = param;
  switch (c) {
    case Coll::kAllGather: k.recv = param * n; break;
    case Coll::kReduceScatter: k.send = param * n; break;
    case Coll::kAllToAll: k.send = k.recv = param * n; break;
    default: break;
  }
  k.bytes = std::max(k.send, k.recv) * elem_size;
  return k;
}

std::string Target::label() const { return provider.empty() ? backend : backend + ":" + provider; }

Target parse_target(const std::string& text, const std::string& default_provider) {
  if (text.empty()) throw InputError("empty backend name");
  const auto colon = text.find(':');
  std::string head = text.substr(0, colon);
  std::string tail = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (head == "mpi") {
    if (!tail.empty()) throw InputError("backend 'mpi' takes no provider ('" + text + "')");
    return {"mpi", ""};
  }
  if (head == "nccl") {
    if (!tail.empty() && tail != "socket" && tail != "ofi")
      throw InputError("unknown NCCL network '" + tail + "' (use nccl:socket or nccl:ofi)");
    return {"nccl", tail};
  }
  if (head == "fabric") {
    if (colon != std::string::npos && tail.empty()) throw InputError("'fabric:' needs a provider");
    return {"fabric", tail.empty() ? default_provider : tail};
  }
  if (colon != std::string::npos)
    throw InputError("unknown backend '" + head + "' (use mpi, fabric[:PROVIDER] or nccl[:socket|ofi])");
  // A bare name is a libfabric provider: "tcp" means fabric over tcp.
  for (char c : head)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ';' || c == '-'))
      throw InputError("'" + text + "' is neither a backend nor a provider name");
  return {"fabric", head};
}

double algbw_gbps(std::size_t bytes, double seconds) {
  if (!(seconds > 0)) return 0;
  return static_cast<double>(bytes) / 1e9 / seconds;
}

double allreduce_bus_factor(int nranks) {
  if (nranks <= 1) return 0;
  return 2.0 * (nranks - 1) / nranks;
}

double allreduce_busbw(double algbw, int nranks) { return algbw * allreduce_bus_factor(nranks); }

double coll_bus_factor(Coll c, int nranks) {
  switch (c) {
    case Coll::kAllReduce: return allreduce_bus_factor(nranks);
    case Coll::kAllGather:
    case Coll::kReduceScatter:
    case Coll::kAllToAll: return nranks <= 1 ? 0 : static_cast<double>(nranks - 1) / nranks;
    case Coll::kBroadcast:
    case Coll::kReduce:
    case Coll::kSendRecv: return 1;
  }
  return 0;
}

std::vector<std::size_t> size_sweep(std::size_t min_bytes, std::size_t max_bytes, double factor,
                                    std::size_t step, std::size_t elem_size) {
  std::vector<std::size_t> out;
  if (elem_size == 0 || min_bytes > max_bytes) return out;
  if (!(factor > 1) && step == 0) factor = 2;
  std::size_t size = min_bytes;
  for (;;) {
    const std::size_t rounded = size / elem_size * elem_size;
    if (rounded > 0 && (out.empty() || out.back() != rounded)) out.push_back(rounded);
    std::size_t next;
    if (factor > 1) {
      const double n = std::ceil(static_cast<double>(size) * factor);
      if (n > static_cast<double>(max_bytes)) break;
      next = static_cast<std::size_t>(n);
      if (next <= size) next = size + 1;
    } else {
      if (max_bytes - size < step) break;
      next = size + step;
    }
    size = next;
    if (size > max_bytes) break;
  }
  return out;
}

double average_busbw(const std::vector<SizeRow>& rows) {
  double sum = 0;
  int n = 0;
  for (const auto& r : rows) {
    for (const Placement* p : {&r.oop, &r.ip}) {
      if (!p->measured) continue;
      sum += p->busbw;
      ++n;
    }
  }
  return n ? sum / n : 0;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<int> stragglers(const std::vector<double>& values, double factor) {
  std::vector<int> out;
  if (values.size() < 2) return out;
  const double med = median_of(values);
  if (!(med > 0)) return out;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] > factor * med) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace nodeprobe::allreduce
