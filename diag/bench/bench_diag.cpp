// nodeprobe-bench-diag: helper of diag/bench/bench_scan.sh (a benchmark, not
// a test). Modes:
//   gen --bytes N --out FILE   write a mixed training-node log (deterministic)
//   scan FILE                  stream FILE through the multi-pattern scanner
//   patterns                   the rule patterns as POSIX ERE, for grep -E -f
//   atoms FILE                 every prefilter atom with the number of FILE's
//                              lines holding it, most first (what sends healthy
//                              lines to the DFA)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "line_reader.h"
#include "rules.h"
#include "scanner.h"

namespace {

using namespace nodeprobe::diag;

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<std::string> patterns() {
  std::vector<std::string> p;
  for (const auto& r : default_rules().rules())
    for (const auto& x : r.patterns) p.push_back(x.re);
  return p;
}

// Ordinary lines of a multi-node training job's logs: NCCL INFO, kernel,
// systemd, training progress, audit syscalls, Python warnings.
const char* kBenign[] = {
    "ip-10-0-1-23:41234:41290 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/IPC/read",
    "ip-10-0-1-23:41234:41290 [3] NCCL INFO Connected all rings",
    "ip-10-0-1-23:41234:41290 [3] NCCL INFO comm 0x7f3c4c000dc0 rank 3 nranks 16 cudaDev 3 busId 201c0 - Init COMPLETE",
    "Nov 29 16:39:36 ip-10-0-1-23 systemd[1]: Started Session 42 of user ec2-user.",
    "Nov 29 16:39:37 ip-10-0-1-23 kernel: IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready",
    "Nov 29 16:39:38 ip-10-0-1-23 chronyd[812]: Selected source 169.254.169.123",
    "Epoch 3:  45%|####5     | 4521/10000 [12:03<14:36,  6.25it/s, loss=2.31, v_num=7]",
    "2024-05-01T12:00:01.123Z INFO trainer step=1200 loss=1.9876 lr=0.0003 tokens/s=125000 grad_norm=0.87",
    "type=SYSCALL msg=audit(1714564800.123:456): arch=c000003e syscall=59 success=yes exit=0 a0=55d0 items=2 ppid=1 pid=4242",
    "[  123.456789] ena 0000:00:05.0 eth0: Elastic Network Adapter (ENA) found at mem febf4000, mac addr 02:5a:1b",
    "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py:1501: UserWarning: the default behaviour changed",
    "[rank3]:[I1129 16:39:40.123456 ProcessGroupNCCL.cpp:1234] [PG 0 Rank 3] ProcessGroupNCCL initialization options",
};

// Real failure lines (from the accuracy corpus), one per ~1000 lines.
const char* kFailures[] = {
    "Nov 29 16:40:01 ip-10-0-1-23 kernel: NVRM: Xid (PCI:0000:10:1c): 79, pid=1896, GPU has fallen off the bus.",
    "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
    "type=AVC msg=audit(1730072197.188:289): avc:  denied  { getattr } for  pid=2287 comm=\"python\" path=\"/dev/nvidia0\" "
    "scontext=system_u:system_r:container_t:s0 tcontext=system_u:object_r:device_t:s0 tclass=chr_file permissive=0",
    "OSError: [Errno 24] Too many open files",
    "ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)",
    "gpu-server320 [5] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to send to 10.44.137.149<52905> failed : Connection reset by peer",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity of 23.65 GiB",
    "[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244kB, anon-rss:31451456kB",
};

int gen(std::uint64_t bytes, const std::string& out, unsigned seed) {
  std::ofstream f(out, std::ios::binary);
  if (!f) {
    std::cerr << "cannot write " << out << "\n";
    return 2;
  }
  std::uint64_t x = seed ? seed : 88172645463325252ULL, written = 0, n = 0;
  std::string buf;
  buf.reserve(1 << 20);
  while (written < bytes) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const bool fail = x % 1000 == 0;
    const std::string line = fail ? kFailures[(x >> 20) % (sizeof kFailures / sizeof *kFailures)]
                                  : kBenign[(x >> 20) % (sizeof kBenign / sizeof *kBenign)];
    buf += line;
    buf += " seq=" + std::to_string(n++) + "\n";
    if (buf.size() >= (1u << 20)) {
      f.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      written += buf.size();
      buf.clear();
    }
  }
  f.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  return f ? 0 : 2;
}

int scan(const std::string& path) {
  MultiPatternScanner scanner(patterns());
  LineBlockReader reader(path);
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = cpu_s();
  std::uint64_t lines = 0;
  std::string_view block;
  while (reader.next(&block))
    scanner.scan(block, [&](std::size_t, std::string_view, const std::vector<int>&) { ++lines; });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double cpu = cpu_s() - c0;
  if (!reader.error().empty()) {
    std::cerr << reader.error() << "\n";
    return 2;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double mb = static_cast<double>(reader.bytes()) / 1e6;
  std::printf("scanner bytes=%llu matched_lines=%llu candidate_lines=%llu few_pattern_lines=%llu wall_s=%.3f "
              "cpu_s=%.3f MBps_wall=%.1f MBps_cpu=%.1f peak_rss_kb=%ld\n",
              static_cast<unsigned long long>(reader.bytes()), static_cast<unsigned long long>(lines),
              static_cast<unsigned long long>(scanner.stats().candidate_lines),
              static_cast<unsigned long long>(scanner.stats().few_pattern_lines), wall, cpu, mb / wall, mb / cpu,
              ru.ru_maxrss);
  // The prefilter's shape: how many literal atoms, how short the shortest
  // (it bounds the skip distance), and patterns screened block by block.
  std::size_t shortest = 0;
  for (const auto& a : scanner.atoms()) shortest = shortest == 0 ? a.size() : std::min(shortest, a.size());
  std::printf("prefilter atoms=%zu shortest_atom=%zu unfiltered_patterns=%zu patterns=%zu\n", scanner.atoms().size(),
              shortest, scanner.unfiltered().size(), scanner.size());
  return 0;
}

// For each prefilter atom, the lines of FILE (case-folded) that hold it:
// an atom common in healthy logs makes those lines candidates for the DFA.
int atoms(const std::string& path) {
  MultiPatternScanner scanner(patterns());
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 2;
  }
  std::vector<std::pair<std::uint64_t, std::string>> counts;
  for (const auto& a : scanner.atoms()) counts.emplace_back(0, a);
  std::string line;
  std::uint64_t lines = 0, candidates = 0;
  while (std::getline(in, line)) {
    ++lines;
    for (char& c : line) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    bool any = false;
    for (auto& [n, a] : counts)
      if (line.find(a) != std::string::npos) ++n, any = true;
    candidates += any ? 1 : 0;
  }
  std::sort(counts.begin(), counts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::printf("lines=%llu candidate_lines=%llu atoms=%zu\n", static_cast<unsigned long long>(lines),
              static_cast<unsigned long long>(candidates), counts.size());
  for (const auto& [n, a] : counts)
    std::printf("%10llu  %s\n", static_cast<unsigned long long>(n), a.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "patterns") {
    for (const auto& p : patterns()) std::cout << to_posix_ere(p) << "\n";
    return 0;
  }
  if (mode == "scan" && argc == 3) return scan(argv[2]);
  if (mode == "atoms" && argc == 3) return atoms(argv[2]);
  if (mode == "gen") {
    std::uint64_t bytes = 0;
    std::string out;
    unsigned seed = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string k = argv[i];
      if (k == "--bytes") bytes = std::strtoull(argv[i + 1], nullptr, 10);
      else if (k == "--out") out = argv[i + 1];
      else if (k == "--seed") seed = static_cast<unsigned>(std::strtoul(argv[i + 1], nullptr, 10));
    }
    if (bytes > 0 && !out.empty()) return gen(bytes, out, seed);
  }
  std::cerr << "usage: nodeprobe-bench-diag gen --bytes N --out FILE [--seed S] | scan FILE | atoms FILE | patterns\n";
  return 64;
}
