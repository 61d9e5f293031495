#pragma once
/// MPI helpers: the check macro of the MPI family and the small collectives
/// the probe needs (strings, host map). Never MPI_Abort here: errors are
/// thrown and handled at the probe boundary.

#include <mpi.h>

#include <string>
#include <vector>

#include "nodeprobe/error.h"

namespace nodeprobe::allreduce {

/// MPI's text for an error code ("MPI_ERR_TRUNCATE: message truncated").
std::string mpi_error_text(int code);

/// Where each rank runs: host names, the host index of every rank (hosts in
/// order of their first rank), and this rank's place on its host.
struct HostMap {
  std::vector<std::string> rank_host;  ///< per rank
  std::vector<int> rank_node;          ///< per rank: index into hosts
  std::vector<std::string> hosts;      ///< distinct, in order of first rank
  int local_rank = 0;                  ///< among the ranks on this host
  int local_size = 1;
  /// Per rank: the kernel it runs on (boot id; network namespaces and
  /// containers on one machine share it, so they share its CPUs) and the CPUs
  /// it may run on (kernel list format, "0-3,8").
  std::vector<std::string> rank_machine, rank_cpus;
  /// Where more ranks share a machine than it gives them CPUs ("" where none
  /// does): per-rank times then measure the sharing, not the hosts.
  std::string oversubscribed;
  int node_count() const { return static_cast<int>(hosts.size()); }
};
HostMap host_map(MPI_Comm comm);

/// The CPUs this process may run on, in the kernel's list format ("0-3,8").
std::string affinity_list();
/// "4 ranks (0-3) share 2 CPUs on one machine" for every machine whose ranks
/// outnumber the union of their CPUs; "" where none does. Ranks whose CPU list
/// is empty or unreadable are not judged.
std::string cpu_oversubscription(const std::vector<std::string>& rank_machine,
                                 const std::vector<std::string>& rank_cpus);

/// Every rank's string, on every rank.
std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine);
/// Root's string on every rank.
std::string bcast_string(MPI_Comm comm, const std::string& s, int root);
/// Every rank's double on every rank.
std::vector<double> allgather_double(MPI_Comm comm, double v);

/// What Open MPI loaded into this process (from /proc/self/maps): pml, btl, mtl
/// component names, plus the OMPI_MCA_ settings that choose them.
struct MpiTransport {
  std::string library;             ///< MPI_Get_library_version, first line
  std::vector<std::string> pml, btl, mtl, coll;
  std::string summary;             ///< "ob1:vader" (one host), "ob1:tcp", "cm:ofi", "ucx"
};
MpiTransport detect_mpi_transport(bool single_host);

}  // namespace nodeprobe::allreduce

/// MPI calls returning an error code.
#define NP_CHECK_MPI(call)                                                                 \
  do {                                                                                     \
    const int np_mpi_rc_ = (call);                                                         \
    if (np_mpi_rc_ != MPI_SUCCESS) {                                                       \
      ::nodeprobe::throw_api_error("mpi", np_mpi_rc_, "MPI error",                         \
                                   ::nodeprobe::allreduce::mpi_error_text(np_mpi_rc_),     \
                                   #call, __FILE__, __LINE__);                             \
    }                                                                                      \
  } while (0)

#include <functional>
#include <stdexcept>

namespace nodeprobe::allreduce {

/// A failure every rank of a communicator agreed on (run_agreed): the ranks
/// are still in step, so the run can go on with the next target.
class AgreedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs `local` (which may throw) on every rank of `comm`, then every rank
/// throws what the lowest failing rank threw: InputError and
/// BackendUnavailable keep their type (the check travels as JSON), anything
/// else becomes AgreedError("rank R: what"). Collective, so a failure on one
/// rank never leaves the others waiting in a later collective.
void run_agreed(MPI_Comm comm, const std::function<void()>& local);

}  // namespace nodeprobe::allreduce
