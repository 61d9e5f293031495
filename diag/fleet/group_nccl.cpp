#include "group_nccl.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifdef NODEPROBE_ALLREDUCE_HAVE_NCCL
#include "backend.h"
#include "backend_nccl_api.h"
#include "backend_nccl_rank.h"
#endif

namespace nodeprobe::fleet {

#ifdef NODEPROBE_ALLREDUCE_HAVE_NCCL

Json nccl_pair_support(const allreduce::NcclApi& api, int gpu) {
  Json out{{"usable", false}, {"gpu", gpu}};
  try {
    allreduce::NcclRank probe(api, 0, 1);
    const int n = probe.visible_devices();
    out["gpus"] = n;
    out["version"] = probe.version();
    if (n == 0) out["why"] = "no GPU visible";
    else if (gpu >= n) out["why"] = "--pair-gpu " + std::to_string(gpu) + " but " + std::to_string(n) + " GPU(s) visible";
    else out["usable"] = true;
  } catch (const std::exception& e) {
    out["why"] = e.what();
  }
  return out;
}

Json nccl_pair_support(int gpu) { return nccl_pair_support(allreduce::system_nccl_api(), gpu); }

struct NcclGroup::Impl {
  allreduce::NcclRank rank;
  std::string net, id_hex;
  int gpu = 0, size = 1;
  std::size_t bytes = 0;
  Impl(const allreduce::NcclApi& api, int index, int n) : rank(api, index, n) {}
};

NcclGroup::NcclGroup(const allreduce::NcclApi& api, int gpu, const std::string& net, int index, int size,
                     std::size_t bytes)
    : impl_(std::make_unique<Impl>(api, index, size)) {
  impl_->net = net;
  impl_->gpu = gpu;
  impl_->size = size;
  impl_->bytes = bytes;
  const int n = impl_->rank.visible_devices();
  if (gpu >= n)
    throw allreduce::BackendUnavailable("--pair-gpu " + std::to_string(gpu) + " but " + std::to_string(n) +
                                        " GPU(s) visible on " + process_hostname());
  impl_->rank.open(gpu, bytes);
  if (index == 0) {
    ncclUniqueId id{};
    const ncclResult_t r = api.nccl->ncclGetUniqueId(&id);
    if (r != ncclSuccess)
      throw std::runtime_error(std::string("ncclGetUniqueId: ") + api.nccl->ncclGetErrorString(r));
    impl_->id_hex = to_hex(std::string(id.internal, sizeof id.internal));
  }
}

NcclGroup::~NcclGroup() = default;

std::string NcclGroup::address() const { return impl_->id_hex; }

GroupResult NcclGroup::run(const std::vector<std::string>& addresses, int index, const GroupRunOptions& opt,
                           const std::function<bool()>& stop) {
  const std::string raw = addresses.empty() ? std::string() : from_hex(addresses[0]);
  ncclUniqueId id{};
  if (raw.size() != sizeof id.internal)
    throw std::runtime_error("the first member sent no NCCL unique id (" + std::to_string(raw.size()) + " bytes, not " +
                             std::to_string(sizeof id.internal) + ")");
  if (static_cast<int>(addresses.size()) != impl_->size)
    throw std::runtime_error("the group has " + std::to_string(addresses.size()) + " members, opened for " +
                             std::to_string(impl_->size));
  if (opt.bytes > impl_->bytes)
    throw std::runtime_error("the group was opened for " + std::to_string(impl_->bytes) + " bytes, not " +
                             std::to_string(opt.bytes));
  std::memcpy(id.internal, raw.data(), raw.size());
  allreduce::NcclRank& gpu = impl_->rank;
  gpu.bind_thread();
  gpu.set_stop(stop);
  GroupResult res;
  const char* env_net = std::getenv("NCCL_NET");
  const std::string net = impl_->net == "socket" ? "Socket" : env_net && *env_net ? env_net : "";
  try {
    gpu.init(id, impl_->net, /*bounded=*/true);
    res.transport = "nccl " + gpu.version() + (net.empty() ? "" : " net " + net);
    GroupOps ops;
    ops.allreduce_data = [&](std::size_t count) {
      gpu.launch(count, ncclFloat32, ncclSum, /*in_place=*/true);
      gpu.wait(opt.stall_s);
    };
    ops.allreduce_vote = [&](float mine) {
      gpu.fill(&mine, sizeof mine, /*in_place=*/true);
      gpu.launch(1, ncclFloat32, ncclSum, true);
      gpu.wait(opt.stall_s);
      float total = 0;
      gpu.read(&total, sizeof total);
      return total;
    };
    ops.load = [&](const void* host, std::size_t b) { gpu.fill(host, b, /*in_place=*/true); };
    ops.store = [&](void* host, std::size_t b) { gpu.read(host, b); };
    measure_group(ops, index, impl_->size, opt, res);
  } catch (const allreduce::NcclStopped& e) {
    throw GroupStopped(e.what());
  }
  return res;
}

std::unique_ptr<MeasureGroup> open_system_nccl_group(int gpu, int index, int size, std::size_t bytes) {
  return std::make_unique<NcclGroup>(allreduce::system_nccl_api(), gpu, "", index, size, bytes);
}

#else

Json nccl_pair_support(const allreduce::NcclApi&, int gpu) {
  return Json{{"usable", false}, {"gpu", gpu}, {"why", "this build has no NCCL support"}};
}
Json nccl_pair_support(int gpu) { return Json{{"usable", false}, {"gpu", gpu}, {"why", "this build has no NCCL support"}}; }

struct NcclGroup::Impl {};
NcclGroup::NcclGroup(const allreduce::NcclApi&, int, const std::string&, int, int, std::size_t) {
  throw std::runtime_error("this build has no NCCL support: pairs cannot use nccl");
}
NcclGroup::~NcclGroup() = default;
std::string NcclGroup::address() const { return {}; }
GroupResult NcclGroup::run(const std::vector<std::string>&, int, const GroupRunOptions&, const std::function<bool()>&) {
  throw std::runtime_error("this build has no NCCL support");
}
std::unique_ptr<MeasureGroup> open_system_nccl_group(int, int, int, std::size_t) {
  throw std::runtime_error("this build has no NCCL support: pairs cannot use nccl");
}

#endif

}  // namespace nodeprobe::fleet
