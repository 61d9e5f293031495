#pragma once
/// Shared-memory regions a killed rank leaves in /dev/shm. libfabric's shm
/// provider names a region "<pid>:<n>:<n>" unless told otherwise (Open MPI's
/// own libfabric endpoints), ours "nodeprobe-<pid>-<random>"; a SIGKILLed rank
/// removes neither, and a later process that gets the same pid finds a region
/// whose owner seems alive (itself) and waits on it. So: a rank removes the
/// regions that carry its own pid before it creates any (they can only be a
/// dead process's), and the --np launcher removes those of its ranks that died.

#include <sys/types.h>

#include <string>
#include <vector>

namespace nodeprobe::allreduce {

/// Where the launcher asks its ranks to note their pids (an environment variable).
inline constexpr const char* kRankPidDirEnv = "NODEPROBE_ALLREDUCE_RANK_DIR";
/// Where the regions live.
inline constexpr const char* kShmDir = "/dev/shm";

/// Whether a /dev/shm entry is a region of process `pid` ("<pid>:..." or
/// "nodeprobe-<pid, 7 digits>-...").
bool is_pid_segment(const std::string& name, pid_t pid);

/// The name our shm endpoints give their region: the same length in every process.
std::string own_segment_name(const std::string& random);

/// Before MPI_Init: removes this user's regions named with this process's pid
/// (a dead process's), and notes the pid for the launcher when it asked.
/// Never throws; returns the names removed.
std::vector<std::string> prepare_rank_segments();

/// After the ranks ended: removes this user's regions of every pid noted in
/// `dir` whose process is gone. Never throws; returns the names removed.
std::vector<std::string> remove_dead_rank_segments(const std::string& dir);

}  // namespace nodeprobe::allreduce
