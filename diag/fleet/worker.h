#pragma once
/// Every rank's side of the fleet wire (rank 0 runs one too, on a thread):
/// connects to the coordinator, says hello, sends a heartbeat twice a second
/// from its own thread, and runs the commands it is sent one after another:
/// the node's accept, the mesh listener and probes, fabric and NCCL groups.

#include <string>

namespace nodeprobe::fleet {

struct WorkerConfig {
  int rank = 0;
  std::string host;
  std::string coordinator_ip;
  int coordinator_port = 0;
  std::string ip, iface;       ///< this node's address on the chosen interface
  double stall_s = 15;         ///< rank 0 silent this long (plus a grace): exit
  std::string bin_dir;         ///< where `nodeprobe` is (ends with '/')
  std::string stop_phase;      ///< tests: stop this process (SIGSTOP) when this phase starts here
  std::string pair_backend = "auto";  ///< --pair-backend: unless fabric, the hello says whether NCCL can carry pairs
  int pair_gpu = 0;            ///< --pair-gpu: the GPU an NCCL pair drives
};

/// What the worker loop ended with.
enum class WorkerEnd {
  kFinalize,   ///< goodbye, every rank alive: MPI_Finalize
  kNoFinalize, ///< goodbye, some rank lost: exit without MPI_Finalize (it would wait for the lost one)
  kLost,       ///< the coordinator is gone
};

WorkerEnd run_worker(const WorkerConfig& cfg);

}  // namespace nodeprobe::fleet
