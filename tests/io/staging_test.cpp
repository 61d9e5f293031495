// Pinned staging through the real CUDA runtime with a fake driver library: a
// CUDA failure reaches the report (and stderr) with the shared explanation,
// the same text nodeprobe-gemm and the nccl backend give.
#include <gtest/gtest.h>

#include "io_test_util.h"

namespace nodeprobe::io::testing {
namespace {

TEST(IoStaging, CudaSystemNotReadyNamesTheFabricManager) {
  if (!NODEPROBE_IO_HAS_CUDA) GTEST_SKIP() << "this build has no CUDA";
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "16", "--size", "4k"});
  const std::vector<std::string> env = {"LD_LIBRARY_PATH=" + std::string(NODEPROBE_FAKE_CUDA_DIR),
                                        "FAKE_CUDA_INIT_RESULT=802"};
  // auto: falls back to mlock, and the note says why in the node's terms.
  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "-w", "1"}, 60, env);
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  const std::string note = r.probe().at("data").at("pin").at("note");
  EXPECT_NE(note.find("cudaGetDeviceCount: cudaErrorSystemNotReady (802)"), std::string::npos) << note;
  EXPECT_NE(note.find("NVIDIA Fabric Manager"), std::string::npos) << note;
  EXPECT_NE(note.find("systemctl status nvidia-fabricmanager"), std::string::npos) << note;
  // --pin cuda demands the GPU: one line on stderr, with the same explanation.
  const IoRun forced = run_io({"read", "--dir", s.sub("ds"), "-w", "1", "--pin", "cuda"}, 60, env);
  EXPECT_EQ(forced.proc.exit_code, 2);
  ASSERT_EQ(forced.stderr_lines().size(), 1u) << forced.proc.err;
  EXPECT_NE(forced.stderr_lines()[0].find("NVIDIA Fabric Manager"), std::string::npos) << forced.proc.err;
  EXPECT_EQ(report_problems(forced.report), "");
}

TEST(IoStaging, NoDriverIsSaidPlainly) {
  if (!NODEPROBE_IO_HAS_CUDA) GTEST_SKIP() << "this build has no CUDA";
  Scratch s(NODEPROBE_IO_SCRATCH);
  prepare(s.sub("ds"), {"--files", "8", "--size", "4k"});
  // An empty library path: no libcuda.so.1 at all (this machine has none either).
  const IoRun r = run_io({"read", "--dir", s.sub("ds"), "-w", "1"}, 60, {"LD_LIBRARY_PATH=/nonexistent"});
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.err;
  const std::string note = r.probe().at("data").at("pin").at("note");
  if (r.probe().at("data").at("pin").at("kind") == "cuda-host") GTEST_SKIP() << "a GPU is usable here";
  EXPECT_NE(note.find("no NVIDIA driver loaded"), std::string::npos) << note;
}

}  // namespace
}  // namespace nodeprobe::io::testing
