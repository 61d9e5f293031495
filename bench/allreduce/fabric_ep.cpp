#include "fabric_ep.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "driver.h"
#include "mpi_util.h"
#include "nodeprobe/atomic_file.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/stop.h"
#include "shm_segments.h"

namespace nodeprobe::allreduce {
namespace {

constexpr std::uint32_t kFiVersion = FI_VERSION(1, 9);

std::string core_name(const char* prov) {
  std::string s = prov ? prov : "";
  return s.substr(0, s.find(';'));
}

std::string endpoint_name(fid_ep* ep) {
  char name[1024];
  std::size_t len = sizeof name;
  NP_CHECK_FI(fi_getname(&ep->fid, name, &len));
  return std::string(name, len);
}

template <typename T>
void close_fid(T*& obj) noexcept {
  if (!obj) return;
  const int rc = fi_close(&obj->fid);
  if (rc != 0) report_cleanup_failure(std::string("fi_close: ") + fi_strerror(-rc));
  obj = nullptr;
}

}  // namespace

std::string fi_errno_name(int err) {
  switch (err) {
    case FI_EAGAIN: return "FI_EAGAIN";
    case FI_ENODATA: return "FI_ENODATA";
    case FI_EAVAIL: return "FI_EAVAIL";
    case FI_ETRUNC: return "FI_ETRUNC";
    case FI_ENOMEM: return "FI_ENOMEM";
    case FI_EINVAL: return "FI_EINVAL";
    case FI_ENOSYS: return "FI_ENOSYS";
    case FI_EOPNOTSUPP: return "FI_EOPNOTSUPP";
    case FI_ETIMEDOUT: return "FI_ETIMEDOUT";
    case FI_ECONNREFUSED: return "FI_ECONNREFUSED";
    case FI_ECONNRESET: return "FI_ECONNRESET";
    case FI_EHOSTUNREACH: return "FI_EHOSTUNREACH";
    case FI_ECANCELED: return "FI_ECANCELED";
    case FI_EIO: return "FI_EIO";
    case FI_EACCES: return "FI_EACCES";
    case FI_ETOOSMALL: return "FI_ETOOSMALL";
    case FI_EOTHER: return "FI_EOTHER";
    default: return "FI_E" + std::to_string(err);
  }
}

bool is_known_provider(const std::string& name) {
  static const std::set<std::string> kKnown = {
      "efa", "tcp", "shm", "udp", "sockets", "verbs", "psm", "psm2", "psm3", "opx", "cxi",
      "ucx", "usnic", "net", "rxm", "rxd", "ofi_rxm", "ofi_rxd", "gni", "bgq", "lnx", "sm2",
      "mlx", "rstream", "mrail", "ofi_mrail", "hook_debug"};
  return kKnown.count(name) > 0;
}

std::vector<std::string> present_providers() {
  std::set<std::string> names;
  fi_info* list = nullptr;
  if (fi_getinfo(kFiVersion, nullptr, nullptr, 0, nullptr, &list) == 0) {
    for (fi_info* i = list; i; i = i->next)
      if (i->fabric_attr && i->fabric_attr->prov_name) names.insert(core_name(i->fabric_attr->prov_name));
    fi_freeinfo(list);
  }
  return {names.begin(), names.end()};
}

std::string resolve_provider(const std::string& requested, const std::vector<std::string>& present) {
  if (requested == "tcp" && std::find(present.begin(), present.end(), "net") != present.end()) return "net";
  return requested;
}

FabricEndpoint::FabricEndpoint(const std::string& provider, const std::string& iface) {
  fi_info* hints = fi_allocinfo();
  if (!hints) throw_api_error("libfabric", -FI_ENOMEM, "FI_ENOMEM", "fi_allocinfo failed", "fi_allocinfo()", __FILE__, __LINE__);
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
  hints->fabric_attr->prov_name = ::strdup(provider.c_str());
  fi_info* list = nullptr;
  const int rc = fi_getinfo(kFiVersion, nullptr, nullptr, 0, hints, &list);
  fi_freeinfo(hints);
  NP_CHECK_FI(rc);
  // Prefer the domain of the chosen interface (tcp: domain = interface name),
  // then an IPv4 one, then whatever came first.
  fi_info* pick = nullptr;
  for (fi_info* i = list; i && !pick; i = i->next)
    if (!iface.empty() && i->domain_attr->name && iface == i->domain_attr->name &&
        i->addr_format != FI_SOCKADDR_IN6)
      pick = i;
  for (fi_info* i = list; i && !pick; i = i->next)
    if (i->addr_format != FI_SOCKADDR_IN6) pick = i;
  if (!pick) pick = list;
  info_ = fi_dupinfo(pick);
  fi_freeinfo(list);
  try {
    prov_name_ = info_->fabric_attr->prov_name ? info_->fabric_attr->prov_name : provider;
    fabric_name_ = info_->fabric_attr->name ? info_->fabric_attr->name : "";
    domain_name_ = info_->domain_attr->name ? info_->domain_attr->name : "";
    max_msg_ = info_->ep_attr->max_msg_size;
    tx_depth_ = info_->tx_attr->size;
    rx_depth_ = info_->rx_attr->size;
    inject_size_ = info_->tx_attr->inject_size;
    mr_mode_ = static_cast<std::uint64_t>(info_->domain_attr->mr_mode);

    NP_CHECK_FI(fi_fabric(info_->fabric_attr, &fabric_, nullptr));
    NP_CHECK_FI(fi_domain(fabric_, info_, &domain_, nullptr));
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = std::max<std::size_t>(2 * (tx_depth_ + rx_depth_), 64);
    // A CQ that can block lets an idle rank sleep instead of spinning (ranks
    // sharing cores, CPU-bound tcp); providers without one are polled.
    cq_attr.wait_obj = FI_WAIT_UNSPEC;
    can_block_ = fi_cq_open(domain_, &cq_attr, &cq_, nullptr) == 0;
    if (!can_block_) {
      cq_attr.wait_obj = FI_WAIT_NONE;
      NP_CHECK_FI(fi_cq_open(domain_, &cq_attr, &cq_, nullptr));
    }
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    // Over tcp a rank sends from one endpoint and receives on another, so
    // each TCP connection carries bulk data one way only. With one endpoint,
    // two ranks that send to each other (a two-rank ring, every exchange of
    // recursive doubling and Rabenseifner) share one connection both ways,
    // and the rendezvous messages that let one direction go on wait behind
    // megabytes of the other direction's data in the socket's send buffer:
    // each direction then moves about half the time (half the link rate,
    // measured on 2 netns hosts). shm and efa have no such stream.
    split_ = core_name(prov_name_.c_str()) == "tcp";
    NP_CHECK_FI(fi_av_open(domain_, &av_attr, &av_, nullptr));
    NP_CHECK_FI(fi_endpoint(domain_, info_, &ep_, nullptr));
    NP_CHECK_FI(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV));
    NP_CHECK_FI(fi_ep_bind(ep_, &av_->fid, 0));
    if (split_) {
      NP_CHECK_FI(fi_av_open(domain_, &av_attr, &av_rx_, nullptr));
      NP_CHECK_FI(fi_endpoint(domain_, info_, &ep_rx_, nullptr));
      NP_CHECK_FI(fi_ep_bind(ep_rx_, &cq_->fid, FI_TRANSMIT | FI_RECV));
      NP_CHECK_FI(fi_ep_bind(ep_rx_, &av_rx_->fid, 0));
    }
    if (prov_name_ == "shm") {
      // shm names its region /dev/shm/<pid>:<ep>:<n> by default: a rank killed
      // before closing leaves it behind, and a later process that gets the
      // same pid hangs in setup on the stale region. A random name of ours
      // cannot collide, every exit the stop handlers see removes it, and the
      // pid in it lets the launcher remove it after a SIGKILL (shm_segments.h).
      std::string shm_name = own_segment_name(random_hex(8));
      NP_CHECK_FI(fi_setname(&ep_->fid, shm_name.data(), shm_name.size() + 1));
      shm_cleanup_ = register_stop_cleanup("/dev/shm/" + shm_name, CleanupKind::kFile);
    }
    NP_CHECK_FI(fi_enable(ep_));
    name_ = endpoint_name(ep_);
    if (split_) {
      NP_CHECK_FI(fi_enable(ep_rx_));
      name_ += endpoint_name(ep_rx_);
    }
  } catch (...) {
    close_all();
    throw;
  }
}

void FabricEndpoint::connect(MPI_Comm comm) { connect(allgather_strings(comm, name_)); }

void FabricEndpoint::connect(const std::vector<std::string>& names) {
  const int nranks = static_cast<int>(names.size());
  // A split endpoint's name is its sending endpoint's then its receiving one's:
  // sends go to the peers' receiving endpoints, which know the sending ones.
  const std::size_t half = split_ ? name_.size() / 2 : name_.size();
  std::string to_rx, to_tx;
  for (const auto& n : names) {
    if (n.size() != name_.size())
      throw_api_error("libfabric", -FI_EINVAL, "FI_EINVAL", "endpoint names differ in length between ranks",
                      "fi_getname()", __FILE__, __LINE__);
    to_rx += split_ ? n.substr(half) : n;
    to_tx += n.substr(0, half);
  }
  auto insert = [&](fid_av* av, const std::string& packed, std::vector<fi_addr_t>& out) {
    out.assign(names.size(), FI_ADDR_UNSPEC);
    const int inserted = fi_av_insert(av, packed.data(), names.size(), out.data(), 0, nullptr);
    NP_CHECK_FI(inserted);
    if (inserted != nranks)
      throw_api_error("libfabric", -FI_EINVAL, "FI_EINVAL",
                      "inserted " + std::to_string(inserted) + " of " + std::to_string(nranks) + " addresses",
                      "fi_av_insert()", __FILE__, __LINE__);
  };
  insert(av_, to_rx, peers_);
  if (split_) {
    std::vector<fi_addr_t> senders;
    insert(av_rx_, to_tx, senders);
  }
}

FabricEndpoint::~FabricEndpoint() { close_all(); }

void FabricEndpoint::close_all() noexcept {
  close_fid(ep_rx_);
  close_fid(ep_);
  unregister_stop_cleanup(shm_cleanup_);  // closing the endpoint removed the region
  shm_cleanup_ = -1;
  for (auto*& mr : mrs_) close_fid(mr);
  mrs_.clear();
  close_fid(av_rx_);
  close_fid(av_);
  close_fid(cq_);
  close_fid(domain_);
  close_fid(fabric_);
  if (info_) fi_freeinfo(info_);
  info_ = nullptr;
}

void* FabricEndpoint::register_memory(void* buf, std::size_t len) {
  if (!(mr_mode_ & FI_MR_LOCAL) || len == 0) return nullptr;
  fid_mr* mr = nullptr;
  NP_CHECK_FI(fi_mr_reg(domain_, buf, len, FI_SEND | FI_RECV, 0, next_key_++, 0, &mr, nullptr));
  mrs_.push_back(mr);
  if (mr_mode_ & FI_MR_ENDPOINT) {
    if (split_) NP_CHECK_FI(fi_mr_bind(mr, &ep_rx_->fid, 0));
    NP_CHECK_FI(fi_mr_bind(mr, &ep_->fid, 0));
    NP_CHECK_FI(fi_mr_enable(mr));
  }
  return fi_mr_desc(mr);
}

bool FabricEndpoint::post_send(const void* buf, std::size_t len, void* desc, fi_addr_t dest,
                               std::uint64_t tag, FabricOp* op) {
  const ssize_t rc = fi_tsend(ep_, buf, len, desc, dest, tag, op);
  if (rc == -FI_EAGAIN) return false;
  NP_CHECK_FI(rc);
  return true;
}

bool FabricEndpoint::inject(const void* buf, std::size_t len, fi_addr_t dest, std::uint64_t tag) {
  const ssize_t rc = fi_tinject(ep_, buf, len, dest, tag);
  if (rc == -FI_EAGAIN) return false;
  NP_CHECK_FI(rc);
  return true;
}

bool FabricEndpoint::post_recv(void* buf, std::size_t len, void* desc, std::uint64_t tag, FabricOp* op) {
  const ssize_t rc = fi_trecv(split_ ? ep_rx_ : ep_, buf, len, desc, FI_ADDR_UNSPEC, tag, 0, op);
  if (rc == -FI_EAGAIN) return false;
  NP_CHECK_FI(rc);
  return true;
}

int FabricEndpoint::poll(FabricOp** done, int max, int block_ms) {
  fi_cq_tagged_entry entries[32];
  const std::size_t want = static_cast<std::size_t>(std::min(max, 32));
  const bool block = block_ms > 0 && can_block_;
  const ssize_t n = block ? fi_cq_sread(cq_, entries, want, nullptr, block_ms) : fi_cq_read(cq_, entries, want);
  // Some providers end a blocking read that saw nothing with FI_ETIMEDOUT instead of FI_EAGAIN.
  if (n == -FI_EAGAIN || (block && n == -FI_ETIMEDOUT)) return 0;
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    fi_cq_readerr(cq_, &err, 0);
    char buf[256] = {};
    const char* text = fi_cq_strerror(cq_, err.prov_errno, err.err_data, buf, sizeof buf);
    throw_api_error("libfabric", -err.err, fi_errno_name(err.err),
                    std::string(fi_strerror(err.err)) + " (provider: " + (text ? text : "?") + ")",
                    "fi_cq_read()", __FILE__, __LINE__);
  }
  if (n < 0)
    throw_api_error("libfabric", n, fi_errno_name(static_cast<int>(-n)), fi_strerror(static_cast<int>(-n)),
                    block ? "fi_cq_sread()" : "fi_cq_read()", __FILE__, __LINE__);
  for (ssize_t i = 0; i < n; ++i) done[i] = static_cast<FabricOp*>(entries[i].op_context);
  return static_cast<int>(n);
}

int PollPacer::block_ms() const {
  constexpr int kSpins = 64;
  constexpr double kSpinFor_s = 0.002;
  return idle_ > kSpins && steady_clock().now_s() - idle_since_s_ > kSpinFor_s ? 1 : 0;
}

void PollPacer::note(bool busy) {
  if (busy) {
    idle_ = 0;
    return;
  }
  if (idle_++ == 0) idle_since_s_ = steady_clock().now_s();
  else if (idle_ > 0) sched_yield();
}

Json FabricEndpoint::describe() const {
  Json j;
  j["provider"] = prov_name_;
  j["fabric"] = fabric_name_;
  j["domain"] = domain_name_;
  j["libfabric"] = std::to_string(FI_MAJOR(fi_version())) + "." + std::to_string(FI_MINOR(fi_version()));
  j["max_msg_size"] = max_msg_;
  j["tx_size"] = tx_depth_;
  j["inject_size"] = inject_size_;
  j["rx_size"] = rx_depth_;
  j["mr_local"] = (mr_mode_ & FI_MR_LOCAL) != 0;
  j["cq_wait"] = can_block_ ? "poll, yielding; block after 2 ms idle" : "poll, yielding";
  j["endpoints"] = split_ ? "one to send, one to receive (each connection carries data one way)" : "one";
  return j;
}

}  // namespace nodeprobe::allreduce

namespace nodeprobe::allreduce {

std::string libfabric_version() {
  const std::uint32_t v = fi_version();
  return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

}  // namespace nodeprobe::allreduce
