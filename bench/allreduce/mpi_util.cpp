#include "mpi_util.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

namespace nodeprobe::allreduce {

std::string mpi_error_text(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return "unknown MPI error";
  return std::string(buf, static_cast<std::size_t>(len));
}

std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine) {
  int n = 0;
  NP_CHECK_MPI(MPI_Comm_size(comm, &n));
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(n));
  NP_CHECK_MPI(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  std::vector<int> displs(static_cast<std::size_t>(n));
  int total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    displs[i] = total;
    total += lens[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  NP_CHECK_MPI(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                              MPI_CHAR, comm));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lens.size(); ++i)
    out.push_back(all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
  return out;
}

std::string bcast_string(MPI_Comm comm, const std::string& s, int root) {
  int len = static_cast<int>(s.size());
  NP_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, root, comm));
  std::string out = s;
  out.resize(static_cast<std::size_t>(len));
  NP_CHECK_MPI(MPI_Bcast(out.data(), len, MPI_CHAR, root, comm));
  return out;
}

std::vector<double> allgather_double(MPI_Comm comm, double v) {
  int n = 0;
  NP_CHECK_MPI(MPI_Comm_size(comm, &n));
  std::vector<double> out(static_cast<std::size_t>(n));
  NP_CHECK_MPI(MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, comm));
  return out;
}

namespace {

/// The running kernel's boot id: one per machine (VMs have their own), shared by
/// its network namespaces and containers; the host name where it is unreadable.
std::string machine_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (in && std::getline(in, id) && !id.empty()) return id;
  return "host:" + process_hostname();
}

/// CPU numbers of a kernel list ("0-3,8"); empty on anything else.
std::set<int> parse_cpu_list(const std::string& s) {
  std::set<int> cpus;
  std::size_t i = 0;
  auto number = [&](int& v) {
    const std::size_t start = i;
    v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 7) v = v * 10 + (s[i++] - '0');
    return i > start;
  };
  while (i < s.size()) {
    int a = 0, b = 0;
    if (!number(a)) return {};
    b = a;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!number(b) || b < a) return {};
    }
    for (int c = a; c <= b; ++c) cpus.insert(c);
    if (i < s.size() && s[i++] != ',') return {};
  }
  return cpus;
}

std::string range_text(const std::vector<int>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string affinity_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "";
  std::vector<int> cpus;
  for (std::size_t c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(static_cast<int>(c));
  return range_text(cpus);
}

std::string cpu_oversubscription(const std::vector<std::string>& rank_machine,
                                 const std::vector<std::string>& rank_cpus) {
  std::map<std::string, std::pair<std::vector<int>, std::set<int>>> machines;  // ranks, CPUs
  std::vector<std::string> order;
  for (std::size_t r = 0; r < rank_machine.size() && r < rank_cpus.size(); ++r) {
    const auto cpus = parse_cpu_list(rank_cpus[r]);
    if (cpus.empty()) continue;
    auto [it, fresh] = machines.try_emplace(rank_machine[r]);
    if (fresh) order.push_back(rank_machine[r]);
    it->second.first.push_back(static_cast<int>(r));
    it->second.second.insert(cpus.begin(), cpus.end());
  }
  std::string out;
  for (const auto& id : order) {
    const auto& [ranks, cpus] = machines[id];
    if (ranks.size() <= cpus.size()) continue;
    out += (out.empty() ? "" : "; ") + std::to_string(ranks.size()) + " ranks (" + range_text(ranks) + ") share " +
           std::to_string(cpus.size()) + (cpus.size() == 1 ? " CPU" : " CPUs") + " on one machine";
  }
  return out;
}

HostMap host_map(MPI_Comm comm) {
  HostMap m;
  int rank = 0;
  NP_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  m.rank_host = allgather_strings(comm, process_hostname());
  m.rank_machine = allgather_strings(comm, machine_id());
  m.rank_cpus = allgather_strings(comm, affinity_list());
  m.oversubscribed = cpu_oversubscription(m.rank_machine, m.rank_cpus);
  std::map<std::string, int> index;
  for (const auto& h : m.rank_host) {
    auto it = index.find(h);
    if (it == index.end()) {
      it = index.emplace(h, static_cast<int>(m.hosts.size())).first;
      m.hosts.push_back(h);
    }
    m.rank_node.push_back(it->second);
  }
  const int mine = m.rank_node[static_cast<std::size_t>(rank)];
  m.local_rank = 0;
  m.local_size = 0;
  for (std::size_t r = 0; r < m.rank_node.size(); ++r) {
    if (m.rank_node[r] != mine) continue;
    if (static_cast<int>(r) < rank) ++m.local_rank;
    ++m.local_size;
  }
  return m;
}

MpiTransport detect_mpi_transport(bool single_host) {
  MpiTransport t;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
    t.library.assign(lib, static_cast<std::size_t>(len));
    const auto nl = t.library.find_first_of("\n,");
    if (nl != std::string::npos) t.library.resize(nl);
  }
  // Open MPI builds its components as mca_<framework>_<name>.so and unloads
  // the ones selection dropped, so what is mapped is what runs.
  std::set<std::string> pml, btl, mtl, coll;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto at = line.find("mca_");
    if (at == std::string::npos) continue;
    std::string name = line.substr(at + 4);
    name = name.substr(0, name.find(".so"));
    const auto us = name.find('_');
    if (us == std::string::npos) continue;
    const std::string fw = name.substr(0, us), comp = name.substr(us + 1);
    if (fw == "pml") pml.insert(comp);
    if (fw == "btl") btl.insert(comp);
    if (fw == "mtl") mtl.insert(comp);
    if (fw == "coll") coll.insert(comp);
  }
  t.pml.assign(pml.begin(), pml.end());
  t.btl.assign(btl.begin(), btl.end());
  t.mtl.assign(mtl.begin(), mtl.end());
  t.coll.assign(coll.begin(), coll.end());
  auto has = [](const std::vector<std::string>& v, const char* s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  if (t.pml.empty()) {
    t.summary = t.library.empty() ? "unknown" : "mpi";
  } else if (has(t.pml, "cm") && !t.mtl.empty()) {
    t.summary = "cm:" + t.mtl.front();
  } else if (has(t.pml, "ucx")) {
    t.summary = "ucx";
  } else {
    // ob1 moves data through BTLs: shared memory within a host, a network BTL across.
    std::string via;
    if (single_host) {
      for (const char* b : {"vader", "sm", "smcuda"})
        if (has(t.btl, b)) { via = b; break; }
    }
    if (via.empty()) {
      for (const char* b : {"ofi", "uct", "openib", "usnic", "tcp"})
        if (has(t.btl, b)) { via = b; break; }
    }
    t.summary = t.pml.front() + ":" + (via.empty() ? "self" : via);
  }
  return t;
}

}  // namespace nodeprobe::allreduce
