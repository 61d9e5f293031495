// The nccl backend: ncclAllReduce on GPU buffers, one GPU per rank (all GPUs
// visible to every rank, or one per rank through CUDA_VISIBLE_DEVICES), the
// unique id through MPI. NCCL's INFO log (to a private file) tells which
// network it really used, so a silent EFA -> Socket fallback is caught. The
// CUDA and NCCL work is NcclRank's (backend_nccl_rank.h); this file is the
// MPI glue. Needs the CUDA toolkit's headers and static runtime, and NCCL at
// run time; not nvcc.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend.h"
#include "backend_nccl_device.h"
#include "backend_nccl_rank.h"
#include "data.h"
#include "driver.h"
#include "mpi_util.h"
#include "nccl_log.h"

namespace nodeprobe::allreduce {
namespace {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kInt32: return ncclInt32;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat16: return ncclFloat16;
    default: return ncclFloat32;
  }
}

ncclRedOp_t nccl_op(RedOp op) {
  switch (op) {
    case RedOp::kProd: return ncclProd;
    case RedOp::kMin: return ncclMin;
    case RedOp::kMax: return ncclMax;
    case RedOp::kAvg: return ncclAvg;
    default: return ncclSum;
  }
}

class NcclBackend final : public Backend {
 public:
  NcclBackend(const BackendContext& ctx, std::string net, const NcclApi& api)
      : ctx_(ctx), net_(std::move(net)), api_(api), gpu_(api, rank_of(ctx.comm), size_of(ctx.comm)) {
    rank_ = rank_of(ctx_.comm);
    nranks_ = size_of(ctx_.comm);
  }

  void setup(std::size_t max_count) override {
    bytes_ = max_count * dtype_size(ctx_.plan->dtype);
    std::string uuid;
    run_agreed(ctx_.comm, [&] {
      const NcclDeviceChoice choice =
          choose_nccl_device(gpu_.visible_devices(), ctx_.local_rank, ctx_.local_size, process_hostname());
      if (choice.device < 0) throw BackendUnavailable("nccl: " + choice.error);
      uuid = gpu_.open(choice.device, bytes_);
      host_.assign(bytes_ ? bytes_ : 1, 0);
      // NCCL's own log tells which network it used; keep it in a private file
      // unless the user already chose where NCCL logs go.
      if (!std::getenv("NCCL_DEBUG")) {
        const char* tmp = std::getenv("TMPDIR");
        log_path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/nodeprobe-nccl-" + std::to_string(::getpid()) + ".log";
        ::setenv("NCCL_DEBUG", "INFO", 1);
        ::setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
        ::setenv("NCCL_DEBUG_FILE", log_path_.c_str(), 1);
      } else if (const char* f = std::getenv("NCCL_DEBUG_FILE")) {
        log_path_ = f;  // may hold %h / %p: then it cannot be read back
      }
    });
    // Every rank knows every rank's GPU: the same verdict everywhere.
    const std::string shared = shared_gpu_problem(allgather_strings(ctx_.comm, process_hostname()),
                                                  allgather_strings(ctx_.comm, uuid));
    if (!shared.empty()) throw BackendUnavailable(shared);
    ncclUniqueId id{};
    std::string err;
    if (rank_ == 0) {
      const ncclResult_t rc = api_.nccl->ncclGetUniqueId(&id);
      if (rc != ncclSuccess)
        err = "ncclGetUniqueId on " + process_hostname() + ": " + nccl_result_name(rc) + ": " +
              api_.nccl->ncclGetErrorString(rc);
    }
    err = bcast_string(ctx_.comm, err, 0);
    if (!err.empty()) throw AgreedError(err);
    NP_CHECK_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, ctx_.comm));
    gpu_.init(id, net_);
    version_ = gpu_.version();
    // One call sets up the connections before anything is timed.
    const std::size_t warm = std::min<std::size_t>(max_count / static_cast<std::size_t>(nranks_), 1024);
    if (warm > 0) {
      launch(warm, coll_has_in_place(ctx_.plan->coll));
      wait();
    }
    read_log();
  }

  void bind_thread() override { gpu_.bind_thread(); }

  // In place as nccl-tests: allgather's input in the rank's block of the
  // result buffer, reducescatter's result in the rank's block of the input.
  void fill(std::size_t count, bool in_place, int rep) override {
    const CollData d = coll_data(ctx_, count);
    fill_coll_input(host_.data(), d, rep);
    gpu_.fill_coll(host_.data(), d, in_place);
  }

  void launch(std::size_t count, bool in_place) override {
    last_in_place_ = in_place;
    gpu_.launch(count, nccl_type(ctx_.plan->dtype), nccl_op(ctx_.plan->op), in_place, ctx_.plan->coll,
                ctx_.plan->root);
  }

  void wait() override { gpu_.wait(ctx_.opt->stall_timeout_s); }
  bool blocking() const override { return false; }

  long check(std::size_t count, int rep) override {
    const CollData d = coll_data(ctx_, count);
    if (!coll_has_result(d)) return 0;
    gpu_.read_coll(host_.data(), d, last_in_place_);
    return count_coll_wrong(host_.data(), d, rep);
  }

  void corrupt_one() override { gpu_.corrupt_one(); }

  std::string transport() const override { return info_.network.empty() ? "nccl" : info_.network; }
  std::string device() const override { return gpu_.device(); }

  Json details() const override {
    Json j;
    j["nccl_version"] = version_;
    j["nccl_library"] = api_.path;
    j["requested_net"] = net_.empty() ? "auto" : net_;
    j["network"] = info_.network;
    j["ofi_provider"] = info_.ofi_provider;
    j["socket_ifaces"] = info_.socket_ifaces;
    j["channels_via"] = info_.channel_vias;
    j["log_evidence"] = info_.evidence;
    j["log_file"] = log_path_;
    return j;
  }

  std::vector<Check> checks() const override {
    return {nccl_network_check(net_, info_, !ctx_.single_host)};
  }

 private:
  static int rank_of(MPI_Comm c) {
    int r = 0;
    MPI_Comm_rank(c, &r);
    return r;
  }
  static int size_of(MPI_Comm c) {
    int n = 1;
    MPI_Comm_size(c, &n);
    return n;
  }

  void read_log() {
    if (log_path_.empty() || log_path_.find('%') != std::string::npos) return;
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    info_ = parse_nccl_log(ss.str());
  }

  bool last_in_place_ = false;
  BackendContext ctx_;
  std::string net_;
  const NcclApi& api_;
  NcclRank gpu_;
  int rank_ = 0, nranks_ = 1;
  std::size_t bytes_ = 0;
  std::vector<unsigned char> host_;
  std::string version_, log_path_;
  NcclNetInfo info_;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const BackendContext& ctx, const std::string& net) {
  return std::make_unique<NcclBackend>(ctx, net, system_nccl_api());
}

std::string nccl_library_version() {
  const NcclApi& api = system_nccl_api();
  int v = 0;
  if (!api.nccl || api.nccl->ncclGetVersion(&v) != ncclSuccess) return {};
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace nodeprobe::allreduce
