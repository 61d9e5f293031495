// The DataLoader model with known costs: ceilings, the binding bound, the
// defaults' shape, the CPU burn, and the peer's settings.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "loader_model.h"
#include "recommend.h"
#include "torch_peer.h"

namespace nodeprobe::io {
namespace {

LoaderCpu costs(double sample_us, double batch_us, double step_us = 0) {
  LoaderCpu c;
  c.sample_cpu_s = sample_us * 1e-6;
  c.batch_cpu_s = batch_us * 1e-6;
  c.step_cpu_s = step_us * 1e-6;
  return c;
}

BoundReport judge(double storage, const LoaderCpu& c, std::size_t workers, double cores, double step_s, double au,
                  bool files = true, double measured_loader = -1) {
  BoundInputs in;
  in.storage_sps = storage;
  in.loader_sps = measured_loader;
  in.cpu = c;
  in.workers = workers;
  in.batch = 32;
  in.cores = cores;
  in.step_s = step_s;
  in.predicted_au = au;
  in.target_au = 0.9;
  in.files_layout = files;
  return judge_bound(in);
}

TEST(IoLoaderModel, CpuCeilingIsTheTightestOfWorkersMainAndCores) {
  // 500 us per sample: one worker gives 2000/s; main 3.2 ms per batch of 32: 10000/s.
  const LoaderCpu c = costs(500, 3200);
  EXPECT_NEAR(cpu_ceiling(c, 0, 1, 32, 8), 2000, 1e-6);
  EXPECT_NEAR(cpu_ceiling(c, 0, 2, 32, 8), 4000, 1e-6);
  // 2 cores shared by the workers and the main process: 2 / (500 us + 3.2 ms / 32) = 3333/s.
  EXPECT_NEAR(cpu_ceiling(c, 0, 2, 32, 2), 2 / 600e-6, 1e-6);
  EXPECT_NEAR(cpu_ceiling(c, 0, 4, 32, 2), 2 / 600e-6, 1e-6);  // workers beyond the cores share them
  // Many workers on many cores: the main process (one thread) binds.
  EXPECT_NEAR(cpu_ceiling(c, 0, 64, 32, 64), 10000, 1e-6);
  // The native read costing more than the model: a worker spends the larger.
  EXPECT_NEAR(cpu_ceiling(c, 1000e-6, 1, 32, 8), 1000, 1e-6);
  // The training process's CPU per batch takes its share of the cores.
  EXPECT_NEAR(cpu_ceiling(costs(500, 3200, 3200), 0, 2, 32, 2), 2 / 700e-6, 1e-6);
  // No costs: no CPU ceiling.
  EXPECT_TRUE(std::isinf(cpu_ceiling(costs(0, 0), 0, 2, 32, 2)));
}

TEST(IoLoaderModel, LoopCeilingPaysTheReceiveInline) {
  EXPECT_NEAR(loop_ceiling(costs(0, 2000), 32, 0.006), 32 / 0.008, 1e-9);
  EXPECT_NEAR(demand(32, 0.006), 32 / 0.006, 1e-9);
  // pin_memory's thread receives beside the step: the longer of the two paces the loop.
  LoaderCpu threaded = costs(0, 2000);
  threaded.receive_thread = true;
  EXPECT_NEAR(loop_ceiling(threaded, 32, 0.006), 32 / 0.006, 1e-9);
  EXPECT_NEAR(loop_ceiling(threaded, 32, 0.001), 32 / 0.002, 1e-9);
  EXPECT_TRUE(std::isinf(demand(32, 0)));
}

TEST(IoLoaderModel, TheBoundThatBindsIsNamed) {
  // Reached: the consumer decides.
  BoundReport b = judge(20000, costs(100, 500), 2, 2, 0.024, 0.97);
  EXPECT_EQ(b.bound, Bound::kConsumer);
  EXPECT_EQ(b.advice.rfind("fine", 0), 0u) << b.advice;
  // Slow storage, cheap CPU: storage-bound; files are told to pack.
  b = judge(1500, costs(100, 500), 2, 2, 0.006, 0.3);
  EXPECT_EQ(b.bound, Bound::kStorage);
  EXPECT_NE(b.advice.find("pack into shards"), std::string::npos) << b.advice;
  b = judge(1500, costs(100, 500), 2, 2, 0.006, 0.3, false);
  EXPECT_EQ(b.advice.find("pack into shards"), std::string::npos) << b.advice;
  // Fast storage, expensive workers: CPU-bound, with the ceiling and the cores.
  b = judge(20000, costs(1000, 500), 2, 4, 0.006, 0.4);
  EXPECT_EQ(b.bound, Bound::kCpu);
  EXPECT_NEAR(b.loader_sps, 2000, 1e-6);
  EXPECT_NE(b.advice.find("cannot exceed ~2000 samples/s"), std::string::npos) << b.advice;
  EXPECT_NE(b.advice.find("4 cores"), std::string::npos) << b.advice;
  // The main process's receive inline with a short step: CPU-bound in the main process.
  b = judge(20000, costs(50, 4000), 8, 16, 0.006, 0.6);
  EXPECT_EQ(b.bound, Bound::kCpu);
  EXPECT_NE(b.advice.find("main process"), std::string::npos) << b.advice;
  EXPECT_NE(b.advice.find("~60 %"), std::string::npos) << b.advice;  // 6 / (6 + 4)
  // The measured ceiling (the modelled loader without IO, under the node's real
  // scheduling) wins over the arithmetic: here other tenants leave it 800/s.
  b = judge(1500, costs(100, 500), 2, 2, 0.006, 0.2, true, 800);
  EXPECT_EQ(b.bound, Bound::kCpu);
  EXPECT_NEAR(b.loader_sps, 800, 1e-9);
  EXPECT_GT(b.loader_cpu_sps, 1500);
  EXPECT_NE(b.advice.find("cannot exceed ~800 samples/s"), std::string::npos) << b.advice;
}

TEST(IoLoaderModel, DefaultsGrowWithSizeAndTensors) {
  const PipelinePreset* raw = find_preset("raw");
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->collate, Collate::kList);
  EXPECT_EQ(find_preset("nope"), nullptr);
  EXPECT_NE(preset_names().find("jpeg-224"), std::string::npos);
  EXPECT_GT(python_read_us(110e3, Collate::kList, 32), 0);
  EXPECT_GT(python_read_us(1e6, Collate::kList, 32), python_read_us(110e3, Collate::kList, 32));
  EXPECT_GE(python_read_us(110e3, Collate::kList, 32), python_read_us(110e3, Collate::kStack, 32));
  EXPECT_GT(main_batch_us(110e3, Collate::kList, 32), main_batch_us(110e3, Collate::kStack, 32));
  EXPECT_GT(main_batch_us(1e6, Collate::kStack, 32), main_batch_us(110e3, Collate::kStack, 32));
  const LoaderCpu d = loader_cpu(*raw, Collate::kList, 110e3, 32, -1, -1, 0.5, 0.010);
  EXPECT_NEAR(d.sample_cpu_s, python_read_us(110e3, Collate::kList, 32) * 1e-6, 1e-12);
  EXPECT_NEAR(d.batch_cpu_s, main_batch_us(110e3, Collate::kList, 32) * 1e-6, 1e-12);
  EXPECT_NEAR(d.step_cpu_s, 0.005, 1e-12);
  EXPECT_NE(d.sample_from.find("measured default for raw"), std::string::npos) << d.sample_from;
  // Flags win.
  const LoaderCpu f = loader_cpu(*raw, Collate::kList, 110e3, 32, 700, 1200, 0, 0.010);
  EXPECT_NEAR(f.sample_cpu_s, 700e-6, 1e-12);
  EXPECT_NEAR(f.batch_cpu_s, 1200e-6, 1e-12);
  EXPECT_EQ(f.sample_from, "--sample-cpu-us");
  // A transform preset costs more per sample than the plain read.
  const PipelinePreset* jpeg = find_preset("jpeg-224");
  ASSERT_NE(jpeg, nullptr);
  EXPECT_GT(loader_cpu(*jpeg, jpeg->collate, 110e3, 32, -1, -1, 0, 0.01).sample_cpu_s, d.sample_cpu_s);
}

TEST(IoLoaderModel, BurnSpendsCpuNotWallTime) {
  const double c0 = thread_cpu_s();
  burn_cpu_until(c0 + 0.005);
  const double spent = thread_cpu_s() - c0;
  EXPECT_GE(spent, 0.005);
  EXPECT_LT(spent, 0.5);  // it stops (a bound for correctness, not a speed claim)
  burn_cpu_until(0);       // a target in the past returns at once
  EXPECT_GE(available_cores(), 1u);
  EXPECT_NE(restrict_cores(100000), "");  // more cores than there are: refused with the reason
}

TEST(IoLoaderModel, ApplyBoundRewritesTheUnreachedAdvice) {
  auto pt = [](const char* layout, std::size_t w, std::size_t p, double au) {
    return SweepPoint{layout, w, p, au, 1 - au, 1000, true};
  };
  Recommendation rec = recommend({pt("files", 1, 2, 0.6), pt("files", 2, 2, 0.65)}, 0.9, 32, 2, false);
  ASSERT_FALSE(rec.reached);
  ASSERT_TRUE(rec.pack_shards);  // the storage-only judgement
  BoundReport cpu = judge(20000, costs(1000, 500), 2, 2, 0.006, rec.best.au);
  apply_bound(rec, cpu, 0.9);
  EXPECT_EQ(rec.bound, "cpu");
  EXPECT_FALSE(rec.pack_shards) << "packing does not make a CPU-bound loader faster";
  EXPECT_NE(rec.notes.front().find("no configuration reaches AU 90 % (best 65.0 %): CPU-bound"), std::string::npos)
      << rec.notes.front();
  EXPECT_EQ(rec.batch, 32u);

  Recommendation st = recommend({pt("files", 2, 2, 0.5)}, 0.9, 32, 2, false);
  apply_bound(st, judge(900, costs(100, 500), 2, 2, 0.006, 0.5), 0.9);
  EXPECT_EQ(st.bound, "storage");
  EXPECT_TRUE(st.pack_shards);

  Recommendation ok = recommend({pt("files", 1, 2, 0.95)}, 0.9, 32, 2, false);
  apply_bound(ok, judge(20000, costs(100, 500), 2, 2, 0.024, 0.95), 0.9);
  EXPECT_EQ(ok.bound, "consumer");
  EXPECT_TRUE(ok.reached);
}

TEST(IoTorchPeer, RecommendedSettingThenItsNeighbours) {
  using V = std::vector<std::pair<std::size_t, std::size_t>>;
  EXPECT_EQ(peer_settings(2, 2, {1, 2, 4}, {1, 2, 4}), (V{{2, 2}, {1, 2}, {4, 2}, {2, 1}, {2, 4}}));
  EXPECT_EQ(peer_settings(1, 1, {1, 2}, {1, 2, 4}), (V{{1, 1}, {2, 1}, {1, 2}}));
  EXPECT_EQ(peer_settings(4, 4, {4, 1, 2}, {4}), (V{{4, 4}, {2, 4}}));
  // A recommended value missing from a list still gets the values around it.
  EXPECT_EQ(peer_settings(3, 2, {2, 4}, {2}), (V{{3, 2}, {2, 2}, {4, 2}}));
}

}  // namespace
}  // namespace nodeprobe::io
