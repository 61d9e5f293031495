// The nccl backend: ncclAllReduce on GPU buffers, one GPU per rank, the
// unique id through MPI. NCCL's INFO log (to a private file) tells which
// network it really used, so a silent EFA -> Socket fallback is caught.
// Needs the CUDA runtime and NCCL libraries, not nvcc.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend.h"
#include "data.h"
#include "driver.h"
#include "mpi_util.h"
#include "nccl_log.h"

/// CUDA runtime calls.
#define NP_CHECK_CUDA(call)                                                                  \
  do {                                                                                       \
    const cudaError_t np_cu_rc_ = (call);                                                    \
    if (np_cu_rc_ != cudaSuccess)                                                            \
      ::nodeprobe::throw_api_error("cuda", static_cast<long long>(np_cu_rc_),                \
                                   cudaGetErrorName(np_cu_rc_), cudaGetErrorString(np_cu_rc_), \
                                   #call, __FILE__, __LINE__);                               \
  } while (0)

/// NCCL calls: the result's text plus ncclGetLastError (nccl-tests' habit).
#define NP_CHECK_NCCL(call, comm)                                                            \
  do {                                                                                       \
    const ncclResult_t np_nc_rc_ = (call);                                                   \
    if (np_nc_rc_ != ncclSuccess && np_nc_rc_ != ncclInProgress) {                           \
      const char* np_last_ = ncclGetLastError(comm);                                         \
      ::nodeprobe::throw_api_error("nccl", static_cast<long long>(np_nc_rc_), "ncclResult",  \
                                   std::string(ncclGetErrorString(np_nc_rc_)) +              \
                                       (np_last_ && *np_last_ ? std::string(": ") + np_last_ \
                                                              : std::string()),              \
                                   #call, __FILE__, __LINE__);                               \
    }                                                                                        \
  } while (0)

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

std::string cuda_failure(const char* call, cudaError_t rc) {
  return std::string(call) + " failed: " + cudaGetErrorName(rc) + " (" +
         std::to_string(static_cast<int>(rc)) + "): " + cudaGetErrorString(rc);
}

class NcclBackend final : public Backend {
 public:
  NcclBackend(const BackendContext& ctx, std::string net) : ctx_(ctx), net_(std::move(net)) {
    MPI_Comm_rank(ctx_.comm, &rank_);
    MPI_Comm_size(ctx_.comm, &nranks_);
  }

  ~NcclBackend() override {
    if (comm_) ncclCommDestroy(comm_);
    if (send_) cudaFree(send_);
    if (recv_) cudaFree(recv_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void setup(std::size_t max_count) override {
    bytes_ = max_count * dtype_size(ctx_.plan->dtype);
    run_agreed(ctx_.comm, [&] {
      int ndev = 0;
      const cudaError_t rc = cudaGetDeviceCount(&ndev);
      if (rc != cudaSuccess) throw BackendUnavailable("no usable GPU: " + cuda_failure("cudaGetDeviceCount()", rc));
      if (ndev < ctx_.local_size)
        throw BackendUnavailable("nccl needs one GPU per rank: " + std::to_string(ctx_.local_size) +
                                 " ranks on " + process_hostname() + " but " + std::to_string(ndev) + " GPU(s)");
      dev_ = ctx_.local_rank;
      NP_CHECK_CUDA(cudaSetDevice(dev_));
      cudaDeviceProp prop{};
      NP_CHECK_CUDA(cudaGetDeviceProperties(&prop, dev_));
      char bus[32];
      std::snprintf(bus, sizeof bus, "%04x:%02x:%02x", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
      device_ = "GPU" + std::to_string(dev_) + " " + prop.name + " " + bus;
      NP_CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      NP_CHECK_CUDA(cudaMalloc(&send_, bytes_ ? bytes_ : 1));
      NP_CHECK_CUDA(cudaMalloc(&recv_, bytes_ ? bytes_ : 1));
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
    ncclUniqueId id{};
    std::string err;
    if (rank_ == 0) {
      const ncclResult_t rc = ncclGetUniqueId(&id);
      if (rc != ncclSuccess) err = std::string("ncclGetUniqueId: ") + ncclGetErrorString(rc);
    }
    err = bcast_string(ctx_.comm, err, 0);
    if (!err.empty()) throw AgreedError(err);
    NP_CHECK_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, ctx_.comm));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0)
    if (net_ == "socket") config.netName = "Socket";
#endif
    NP_CHECK_NCCL(ncclCommInitRankConfig(&comm_, nranks_, id, rank_, &config), comm_);
    int version = 0;
    ncclGetVersion(&version);
    version_ = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
               std::to_string(version % 100);
    // One call sets up the connections before anything is timed.
    launch(std::min<std::size_t>(max_count, 1024), true);
    wait();
    read_log();
  }

  void bind_thread() override { NP_CHECK_CUDA(cudaSetDevice(dev_)); }

  void fill(std::size_t count, bool in_place, int rep) override {
    const std::size_t n = count * dtype_size(ctx_.plan->dtype);
    fill_input(host_.data(), count, ctx_.plan->dtype, ctx_.plan->op, rank_, rep);
    NP_CHECK_CUDA(cudaMemcpy(in_place ? recv_ : send_, host_.data(), n, cudaMemcpyHostToDevice));
    if (!in_place) NP_CHECK_CUDA(cudaMemset(recv_, 0xff, n));
  }

  void launch(std::size_t count, bool in_place) override {
    NP_CHECK_NCCL(ncclAllReduce(in_place ? recv_ : send_, recv_, count, nccl_type(ctx_.plan->dtype),
                                nccl_op(ctx_.plan->op), comm_, stream_),
                  comm_);
  }

  void wait() override { NP_CHECK_CUDA(cudaStreamSynchronize(stream_)); }
  bool blocking() const override { return false; }

  long check(std::size_t count, int rep) override {
    NP_CHECK_CUDA(cudaMemcpy(host_.data(), recv_, count * dtype_size(ctx_.plan->dtype), cudaMemcpyDeviceToHost));
    return count_wrong(host_.data(), count, ctx_.plan->dtype, ctx_.plan->op, nranks_, rep);
  }

  void corrupt_one() override {
    unsigned char b = 0x5a;
    NP_CHECK_CUDA(cudaMemcpy(recv_, &b, 1, cudaMemcpyHostToDevice));
  }

  std::string transport() const override { return info_.network.empty() ? "nccl" : info_.network; }
  std::string device() const override { return device_; }

  Json details() const override {
    Json j;
    j["nccl_version"] = version_;
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
  void read_log() {
    if (log_path_.empty() || log_path_.find('%') != std::string::npos) return;
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    info_ = parse_nccl_log(ss.str());
  }

  BackendContext ctx_;
  std::string net_;
  int rank_ = 0, nranks_ = 1, dev_ = 0;
  std::size_t bytes_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::vector<unsigned char> host_;
  std::string device_ = "gpu", version_, log_path_;
  NcclNetInfo info_;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const BackendContext& ctx, const std::string& net) {
  return std::make_unique<NcclBackend>(ctx, net);
}

}  // namespace nodeprobe::allreduce

namespace nodeprobe::allreduce {

std::string nccl_library_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return {};
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace nodeprobe::allreduce
