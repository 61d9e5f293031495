#pragma once
/// A libfabric RDM endpoint for one communicator, set up the way fabtests'
/// shared.h does it (fi_getinfo with a provider name, fabric, domain, CQ, AV,
/// endpoint, addresses exchanged out of band, here through MPI). The same
/// code runs on tcp and shm in CI and on efa in the field.

#include <mpi.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <string>
#include <vector>

#include "nodeprobe/error.h"
#include "nodeprobe/report.h"

namespace nodeprobe::allreduce {

/// "FI_EAGAIN" for FI_EAGAIN etc.
std::string fi_errno_name(int err);

/// Providers libfabric knows of (present here or not), to tell a typo from a
/// provider that is simply not installed.
bool is_known_provider(const std::string& name);
/// Distinct provider names usable here (core names: "tcp" for "tcp;ofi_rxm").
std::vector<std::string> present_providers();
/// The provider to open for what the user asked (`present`: present_providers()).
/// "tcp" is libfabric's TCP transport at its best here: libfabric 1.16 and
/// 1.17 ship the rewritten TCP provider that runs RDM endpoints itself (no
/// ofi_rxm layer) as "net", and from 1.18 it is "tcp"; where "net" is
/// present, "tcp" opens it. Measured on 4 netns hosts (docs/allreduce.md):
/// half a round trip 17-24 us against 33-35 us for tcp;ofi_rxm, the same
/// bandwidth. "tcp;ofi_rxm" asks for the layered one; other names are kept.
std::string resolve_provider(const std::string& requested, const std::vector<std::string>& present);

/// Every operation's context: fi_context2 first, as FI_CONTEXT2 mode requires.
struct FabricOp {
  fi_context2 fi{};
  int kind = 0;          ///< 0 send, 1 recv
  std::size_t unit = 0;
  int slot = -1;
};

/// How a progress loop waits for completions: it polls, yielding the CPU
/// after every empty poll (ranks may share cores: yielding only after 16
/// empty polls, 8 B-4 KB allreduces on 4 netns hosts took 101-174 us p50,
/// yielding at once 79-124 us, the same bandwidth from 256 KB; MPI, with
/// mpi_yield_when_idle, 71-86 us), and blocks in the CQ only
/// after 2 ms without progress. Blocking earlier costs latency: a blocking
/// read of the tcp provider may sleep its whole 1 ms although the message is
/// there (measured: about 450 us per 8-byte recursive-doubling allreduce on 4
/// netns hosts against about 120 us for MPI spinning with yields).
class PollPacer {
 public:
  /// Block time (ms) for the next FabricEndpoint::poll.
  int block_ms() const;
  /// After each round: `busy` when something completed or was posted.
  void note(bool busy);

 private:
  int idle_ = 0;
  double idle_since_s_ = 0;
};

class FabricEndpoint {
 public:
  /// Opens fabric, domain, CQ, AV and endpoint for `provider`, preferring the
  /// domain named `iface` when given. Local only; throws ApiError (FI_ENODATA
  /// from fi_getinfo when the provider is not available).
  FabricEndpoint(const std::string& provider, const std::string& iface);
  /// Exchanges endpoint names over `comm` and inserts them into the AV. Collective.
  void connect(MPI_Comm comm);
  /// Inserts every rank's endpoint name (by rank, this one's included), however
  /// they were exchanged; peer(r) is then rank r.
  void connect(const std::vector<std::string>& names);
  /// This endpoint's address (fi_getname; over tcp both endpoints'), to hand to the peers.
  const std::string& name() const { return name_; }
  ~FabricEndpoint();
  FabricEndpoint(const FabricEndpoint&) = delete;
  FabricEndpoint& operator=(const FabricEndpoint&) = delete;

  fi_addr_t peer(int rank) const { return peers_[static_cast<std::size_t>(rank)]; }
  /// Registers `buf` when the provider needs local registration; returns its descriptor or nullptr.
  void* register_memory(void* buf, std::size_t len);
  /// False when the provider's queue is full (poll, then retry).
  bool post_send(const void* buf, std::size_t len, void* desc, fi_addr_t dest, std::uint64_t tag,
                 FabricOp* op);
  bool post_recv(void* buf, std::size_t len, void* desc, std::uint64_t tag, FabricOp* op);
  /// fi_tinject: a send of at most inject_size() bytes that completes at once
  /// (no completion to wait for: one less wakeup per small message). False when the queue is full.
  bool inject(const void* buf, std::size_t len, fi_addr_t dest, std::uint64_t tag);
  std::size_t inject_size() const { return inject_size_; }
  /// Reads up to `max` completions; 0 when none. With `block_ms` > 0 waits up to
  /// that long for one (when the CQ can block). Throws ApiError on a failed operation.
  int poll(FabricOp** done, int max, int block_ms = 0);

  std::size_t max_msg_size() const { return max_msg_; }
  std::size_t tx_depth() const { return tx_depth_; }
  std::size_t rx_depth() const { return rx_depth_; }
  /// "tcp;ofi_rxm", "efa", "shm".
  const std::string& provider_name() const { return prov_name_; }
  Json describe() const;

 private:
  void close_all() noexcept;

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;     ///< sends (and receives unless split_)
  fid_ep* ep_rx_ = nullptr;  ///< receives when split_
  fid_av* av_rx_ = nullptr;
  bool split_ = false;       ///< tcp: one endpoint per direction (fabric_ep.cpp says why)
  std::vector<fid_mr*> mrs_;
  int shm_cleanup_ = -1;  // stop-handler registration of the shm region
  std::vector<fi_addr_t> peers_;
  std::string prov_name_, fabric_name_, domain_name_, name_;
  std::size_t max_msg_ = 0, tx_depth_ = 0, rx_depth_ = 0, inject_size_ = 0;
  std::uint64_t mr_mode_ = 0;
  std::uint64_t next_key_ = 1;
  bool can_block_ = false;
};

}  // namespace nodeprobe::allreduce

/// libfabric calls returning 0 or a negative fi_errno.
#define NP_CHECK_FI(call)                                                                   \
  do {                                                                                      \
    const long np_fi_rc_ = static_cast<long>(call);                                         \
    if (np_fi_rc_ < 0) {                                                                    \
      const int np_fi_err_ = static_cast<int>(-np_fi_rc_);                                  \
      ::nodeprobe::throw_api_error("libfabric", np_fi_rc_,                                  \
                                   ::nodeprobe::allreduce::fi_errno_name(np_fi_err_),       \
                                   fi_strerror(np_fi_err_), #call, __FILE__, __LINE__);     \
    }                                                                                       \
  } while (0)
