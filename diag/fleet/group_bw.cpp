#include "group_bw.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "data.h"
#include "nodeprobe/clock.h"
#include "wire.h"

#ifdef NODEPROBE_ALLREDUCE_HAVE_FABRIC
#include "fabric_ep.h"
#include "fabric_ring.h"
#endif

namespace nodeprobe::fleet {

using allreduce::DType;
using allreduce::RedOp;

namespace {
constexpr std::size_t kSmallElems = 256 * 1024;  // 1 MiB of floats
}  // namespace

void measure_group(const GroupOps& ops, int index, int n, const GroupRunOptions& opt, GroupResult& res) {
  const std::size_t count = std::max<std::size_t>(1, opt.bytes / sizeof(float));
  std::vector<unsigned char> host(count * sizeof(float));
  Clock& clock = steady_clock();
  // Warm-up and data check need not be full size: the first connects the
  // peers, the second proves the data path.
  const std::size_t small = std::min<std::size_t>(count, kSmallElems);
  allreduce::fill_input(host.data(), count, DType::kFloat32, RedOp::kSum, index, 0);
  ops.load(host.data(), host.size());
  ops.allreduce_data(small);
  const double t_start = clock.now_s();
  for (;;) {
    const double t0 = clock.now_s();
    ops.allreduce_data(count);
    res.iter_s.push_back(clock.now_s() - t0);
    // Every member must run the same number of allreduces: each votes, the sum decides.
    const int iters = static_cast<int>(res.iter_s.size());
    const bool more = iters < opt.max_iters && (iters < opt.min_iters || clock.now_s() - t_start < opt.min_seconds);
    if (!(ops.allreduce_vote(more ? 1.0f : 0.0f) > 0.5f)) break;
  }
  // Wrong data is a failure whatever the speed: check once after timing.
  allreduce::fill_input(host.data(), small, DType::kFloat32, RedOp::kSum, index, 1);
  ops.load(host.data(), small * sizeof(float));
  ops.allreduce_data(small);
  ops.store(host.data(), small * sizeof(float));
  res.wrong = allreduce::count_wrong(host.data(), small, DType::kFloat32, RedOp::kSum, n, 1);
}

#ifdef NODEPROBE_ALLREDUCE_HAVE_FABRIC

namespace {
// nodeprobe-allreduce's defaults (--chunk 4M, --window 8).
constexpr std::size_t kChunkBytes = 4u << 20;
constexpr std::size_t kWindow = 8;
}  // namespace

struct FabricGroup::Impl {
  allreduce::FabricEndpoint ep;
  Impl(const std::string& provider, const std::string& iface) : ep(provider, iface) {}
};

FabricGroup::FabricGroup(const std::string& provider, const std::string& iface)
    : impl_(std::make_unique<Impl>(provider, iface)) {}

FabricGroup::~FabricGroup() = default;

std::string FabricGroup::address() const { return to_hex(impl_->ep.name()); }

GroupResult FabricGroup::run(const std::vector<std::string>& addresses, int index, const GroupRunOptions& opt,
                             const std::function<bool()>& stop) {
  std::vector<std::string> names;
  for (const auto& a : addresses) names.push_back(from_hex(a));
  auto& ep = impl_->ep;
  ep.connect(names);
  const int n = static_cast<int>(names.size());
  const std::size_t count = std::max<std::size_t>(1, opt.bytes / sizeof(float));
  std::vector<unsigned char> data(count * sizeof(float), 0), vote(sizeof(float), 0);
  void* desc = ep.register_memory(data.data(), data.size());
  void* vote_desc = ep.register_memory(vote.data(), vote.size());
  allreduce::FabricRing ring(ep, index, n, DType::kFloat32, RedOp::kSum, kChunkBytes, kWindow);
  auto run_one = [&](unsigned char* buf, void* d, std::size_t c) {
    try {
      ring.allreduce(buf, d, c, stop);
    } catch (const allreduce::RingStopped&) {
      throw GroupStopped("stopped before the allreduce finished");
    }
  };
  GroupOps ops;
  ops.allreduce_data = [&](std::size_t c) { run_one(data.data(), desc, c); };
  ops.allreduce_vote = [&](float mine) {
    std::memcpy(vote.data(), &mine, sizeof mine);
    run_one(vote.data(), vote_desc, 1);
    float total = 0;
    std::memcpy(&total, vote.data(), sizeof total);
    return total;
  };
  ops.load = [&](const void* h, std::size_t b) { std::memcpy(data.data(), h, b); };
  ops.store = [&](void* h, std::size_t b) { std::memcpy(h, data.data(), b); };
  GroupResult res;
  res.transport = ep.provider_name();
  measure_group(ops, index, n, opt, res);
  return res;
}

bool fabric_groups_available() { return true; }
std::vector<std::string> fabric_providers() { return allreduce::present_providers(); }

#else

struct FabricGroup::Impl {};
FabricGroup::FabricGroup(const std::string&, const std::string&) {
  throw std::runtime_error("this build has no libfabric: pairs and ring cannot be measured");
}
FabricGroup::~FabricGroup() = default;
std::string FabricGroup::address() const { return {}; }
GroupResult FabricGroup::run(const std::vector<std::string>&, int, const GroupRunOptions&, const std::function<bool()>&) {
  throw std::runtime_error("this build has no libfabric");
}
bool fabric_groups_available() { return false; }
std::vector<std::string> fabric_providers() { return {}; }

#endif

}  // namespace nodeprobe::fleet
