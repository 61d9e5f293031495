// The nccl backend's CUDA/NCCL half (NcclRank) against CPU fakes of the CUDA
// runtime and NCCL that keep CUDA's stream-ordering rules (fake_cuda_runtime.h):
// the data check, errors and hangs, device choice, without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "backend.h"
#include "backend_nccl_device.h"
#include "backend_nccl_rank.h"
#include "data.h"
#include "fake_nccl.h"

namespace nodeprobe::allreduce::testing {
namespace {

using nodeprobe::testing::FakeCudaRuntime;

struct Fakes {
  FakeCudaRuntime cuda;
  FakeNccl nccl{cuda};
};

// A rank with its device open and its communicator made.
std::unique_ptr<NcclRank> ready_rank(Fakes& f, std::size_t bytes = 1024) {
  auto gpu = std::make_unique<NcclRank>(f.nccl.api(), 0, 1);
  gpu->open(0, bytes);
  gpu->init(ncclUniqueId{}, "");
  return gpu;
}

// One rank through the whole cycle: fill, allreduce, wait, read, check.
long wrong_after_allreduce(NcclRank& gpu, std::size_t count, bool in_place, int rep) {
  std::vector<unsigned char> host(count * dtype_size(DType::kFloat32));
  fill_input(host.data(), count, DType::kFloat32, RedOp::kSum, 0, rep);
  gpu.fill(host.data(), host.size(), in_place);
  std::fill(host.begin(), host.end(), 0);  // the fill must not depend on the host buffer afterwards
  gpu.launch(count, ncclFloat32, ncclSum, in_place);
  gpu.wait(10);
  gpu.read(host.data(), host.size());
  return count_wrong(host.data(), count, DType::kFloat32, RedOp::kSum, 1, rep);
}

// Issue 15 item 1: fill wrote with a legacy-stream cudaMemcpy/cudaMemset,
// the allreduce ran on a non-blocking stream: the check saw stale data.
TEST(NcclRank, DataCheckSeesWhatWasFilledInStreamOrder) {
  Fakes f;
  const std::size_t count = 1 << 16;
  {
    NcclRank gpu(f.nccl.api(), 0, 1);
    EXPECT_EQ(gpu.visible_devices(), 1);
    gpu.open(0, count * 4);
    ncclUniqueId id{};
    gpu.init(id, "");
    for (int rep = 1; rep <= 3; ++rep) {
      EXPECT_EQ(wrong_after_allreduce(gpu, count, /*in_place=*/false, rep), 0) << "rep " << rep;
      EXPECT_EQ(wrong_after_allreduce(gpu, count, /*in_place=*/true, rep), 0) << "rep " << rep;
    }
    for (const auto& c : f.cuda.calls) EXPECT_EQ(c.find("legacy stream"), std::string::npos) << c;
    // The result really is the allreduce's: corrupting it is seen.
    gpu.corrupt_one();
    std::vector<unsigned char> host(count * 4);
    gpu.read(host.data(), host.size());
    EXPECT_EQ(count_wrong(host.data(), count, DType::kFloat32, RedOp::kSum, 1, 3), 1);
  }
  EXPECT_EQ(f.nccl.destroys, 1);  // a clean run destroys its communicator
  EXPECT_EQ(f.nccl.aborts, 0);
}

TEST(NcclRank, AsyncErrorAbortsAndSaysWhatNcclSaid) {
  Fakes f;
  {
    auto rank = ready_rank(f);
    NcclRank& gpu = *rank;
    f.cuda.hang = true;  // the collective never completes...
    f.nccl.async_error = ncclRemoteError;  // ...because a peer went away
    f.nccl.last_error = "NET/Socket : peer 198.18.1.2<41234> closed the connection";
    gpu.launch(256, ncclFloat32, ncclSum, true);
    try {
      gpu.wait(30);
      FAIL() << "wait returned";
    } catch (const ApiError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.info().api, "nccl");
      EXPECT_EQ(e.info().code_name, "ncclRemoteError");
      EXPECT_NE(what.find("remote process exited or there was a network error"), std::string::npos) << what;
      EXPECT_NE(what.find("NCCL: NET/Socket : peer 198.18.1.2<41234> closed the connection"), std::string::npos);
      EXPECT_NE(what.find("rank 0 on " + process_hostname()), std::string::npos) << what;
      EXPECT_NE(what.find("GPU0 NVIDIA H100 80GB HBM3"), std::string::npos) << what;
      EXPECT_NE(what.find("ncclCommAbort"), std::string::npos);
    }
    EXPECT_TRUE(gpu.aborted());
    EXPECT_EQ(f.nccl.aborts, 1);
  }
  EXPECT_EQ(f.nccl.destroys, 0);  // never ncclCommDestroy after an error
  EXPECT_EQ(f.nccl.aborts, 1);
}

TEST(NcclRank, HangIsAbortedAtTheStallLimit) {
  Fakes f;
  {
    auto rank = ready_rank(f);
    NcclRank& gpu = *rank;
    f.cuda.hang = true;
    gpu.launch(256, ncclFloat32, ncclSum, true);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      gpu.wait(0.2);
      FAIL() << "wait returned";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("NCCL timeout: rank 0 on " + process_hostname()), std::string::npos) << what;
      EXPECT_NE(what.find("no progress for 0.2 s"), std::string::npos) << what;
      EXPECT_NE(what.find("ncclCommAbort"), std::string::npos);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(s, 0.2);
    EXPECT_LT(s, 5.0);
    EXPECT_GT(std::count(f.cuda.calls.begin(), f.cuda.calls.end(), "cudaStreamQuery"), 1);  // polled
  }
  EXPECT_EQ(f.nccl.aborts, 1);
  EXPECT_EQ(f.nccl.destroys, 0);
}

TEST(NcclRank, CudaFaultWhileWaitingAbortsWithTheXidHint) {
  Fakes f;
  {
    auto rank = ready_rank(f);
    NcclRank& gpu = *rank;
    gpu.launch(256, ncclFloat32, ncclSum, true);
    f.cuda.query_error = cudaErrorIllegalAddress;
    try {
      gpu.wait(30);
      FAIL() << "wait returned";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cudaStreamQuery: cudaErrorIllegalAddress (700)"), std::string::npos) << what;
      EXPECT_NE(what.find("Xid"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(f.nccl.aborts, 1);
  EXPECT_EQ(f.nccl.destroys, 0);
}

TEST(NcclRank, FailedInitIsReportedAndNeverDestroyed) {
  Fakes f;
  f.nccl.init_error = ncclSystemError;
  f.nccl.last_error = "Bootstrap : no socket interface found";
  {
    NcclRank gpu(f.nccl.api(), 0, 1);
    gpu.open(0, 1024);
    try {
      gpu.init(ncclUniqueId{}, "");
      FAIL() << "init returned";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.info().code_name, "ncclSystemError");
      EXPECT_NE(std::string(e.what()).find("Bootstrap : no socket interface found"), std::string::npos);
    }
  }
  EXPECT_EQ(f.nccl.destroys, 0);
}

TEST(NcclRank, SystemNotReadyNamesTheFabricManager) {
  Fakes f;
  f.cuda.device_count_error = cudaErrorSystemNotReady;
  NcclRank gpu(f.nccl.api(), 0, 1);
  try {
    gpu.visible_devices();
    FAIL() << "no error";
  } catch (const BackendUnavailable& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorSystemNotReady (802)"), std::string::npos) << what;
    EXPECT_NE(what.find("NVIDIA Fabric Manager"), std::string::npos) << what;
  }
}

TEST(NcclRank, VoltaUnderCuda13IsUnavailable) {
  Fakes f;
  f.cuda.devices[0].major = 7;
  f.cuda.devices[0].minor = 0;
  std::snprintf(f.cuda.devices[0].name, sizeof f.cuda.devices[0].name, "%s", "Tesla V100-SXM2-32GB");
  NcclRank gpu(f.nccl.api(), 0, 1);
  try {
    gpu.open(0, 1024);
    FAIL() << "no error";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("this build does not support Volta; build with CUDA 12.x"),
              std::string::npos) << e.what();
  }
  f.cuda.runtime_version = 12080;
  NcclRank cuda12(f.nccl.api(), 0, 1);
  EXPECT_NO_THROW(cuda12.open(0, 1024));
}

TEST(NcclRank, MissingNcclIsUnavailableAndNamed) {
  FakeCudaRuntime cuda;
  NcclApi api;
  api.rt = &cuda.runtime();
  api.unavailable = "cannot load libnccl.so.2: libnccl.so.2: cannot open shared object file";
  NcclRank gpu(api, 0, 1);
  try {
    gpu.visible_devices();
    FAIL() << "no error";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("libnccl.so.2"), std::string::npos);
  }
}

TEST(NcclRank, OneVisibleGpuPerRankUsesDeviceZero) {
  Fakes f;  // the launcher's CUDA_VISIBLE_DEVICES leaves this rank one GPU
  const NcclDeviceChoice c = choose_nccl_device(static_cast<int>(f.cuda.devices.size()), /*local_rank=*/3, /*local_size=*/8, "h");
  ASSERT_EQ(c.device, 0) << c.error;
  NcclRank gpu(f.nccl.api(), 0, 1);
  EXPECT_EQ(gpu.open(c.device, 1024), "00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(f.cuda.current_device, 0);
}

// Every collective of nccl-tests through NcclRank on 3 and 4 ranks (threads
// of one clique): the buffers' layout per placement (in-place allgather reads
// the rank's block of the result buffer, in-place reducescatter leaves its
// result in the rank's block), the root, and the data check of data.h, which
// must also see a wrong byte.
TEST(NcclRank, EveryCollectiveOnSeveralRanksPassesTheDataCheck) {
  for (int n : {3, 4}) {
    for (Coll coll : {Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kBroadcast, Coll::kReduce,
                      Coll::kAllToAll, Coll::kSendRecv}) {
      for (const bool in_place : {false, true}) {
        if (in_place && !coll_has_in_place(coll)) continue;
        Fakes f;
        f.cuda.record_calls = false;
        f.nccl.corrupt_rank = in_place ? -1 : 1;  // out of place, rank 1's result has one wrong byte
        ncclUniqueId id{};
        ASSERT_EQ(f.nccl.api().nccl->ncclGetUniqueId(&id), ncclSuccess);
        const std::size_t count = 64;
        std::vector<long> wrong(static_cast<std::size_t>(n), -1);
        std::vector<std::string> errors(static_cast<std::size_t>(n));
        std::vector<std::thread> threads;
        for (int r = 0; r < n; ++r) {
          threads.emplace_back([&, r] {
            try {
              NcclRank gpu(f.nccl.api(), r, n);
              gpu.open(0, count * static_cast<std::size_t>(n) * 4);
              gpu.init(id, "");
              CollData d;
              d.coll = coll;
              d.counts = coll_counts_of(coll, count, 4, n);
              d.rank = r;
              d.nranks = n;
              d.root = n - 1;
              std::vector<unsigned char> host(d.counts.send * 4 + d.counts.recv * 4);
              fill_coll_input(host.data(), d, 3);
              gpu.fill_coll(host.data(), d, in_place);
              std::fill(host.begin(), host.end(), 0);
              gpu.launch(count, ncclFloat32, ncclSum, in_place, coll, d.root);
              gpu.wait(20);
              gpu.read_coll(host.data(), d, in_place);
              wrong[static_cast<std::size_t>(r)] = count_coll_wrong(host.data(), d, 3);
            } catch (const std::exception& e) {
              errors[static_cast<std::size_t>(r)] = e.what();
            }
          });
        }
        for (auto& t : threads) t.join();
        for (int r = 0; r < n; ++r) {
          const auto i = static_cast<std::size_t>(r);
          const std::string what = std::string(to_string(coll)) + (in_place ? " in place" : "") + " rank " +
                                   std::to_string(r) + " of " + std::to_string(n);
          EXPECT_EQ(errors[i], "") << what;
          // The reduce's non-root ranks have no result; every other corrupted result is seen.
          const bool sees_corruption = !in_place && r == 1 && (coll != Coll::kReduce || r == n - 1);
          EXPECT_EQ(wrong[i] > 0, sees_corruption) << what << ": " << wrong[i] << " wrong";
          if (!sees_corruption) {
            EXPECT_EQ(wrong[i], 0) << what;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nodeprobe::allreduce::testing
