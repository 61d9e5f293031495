#include <gtest/gtest.h>
#include <dlfcn.h>

#include <cstdlib>

#include "busy_window.h"
#include "nvml.h"

namespace nodeprobe::gemm {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// The real default lookup on a machine without the NVIDIA driver.
TEST(Nvml, AbsentDriverLibrary) {
  if (void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(h);
    GTEST_SKIP() << "this machine has libnvidia-ml.so.1";
  }
  ::unsetenv("NODEPROBE_NVML_LIBRARY");
  const Nvml nvml;
  EXPECT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.inventory().init_rc, -1);
  EXPECT_EQ(nvml.inventory().library, "libnvidia-ml.so.1");
  EXPECT_NE(nvml.inventory().error.find("cannot load libnvidia-ml.so.1"), std::string::npos);
  EXPECT_TRUE(nvml.inventory().gpus.empty());
  EXPECT_EQ(nvml.sample(0).pcie_gen, -1);
  EXPECT_EQ(nvml.index_of_uuid("GPU-x"), -1);
}

TEST(Nvml, MissingPathAndWrongLibrary) {
  const Nvml missing("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.inventory().error.find("No such file"), std::string::npos);
  // A real library that is not NVML.
  const Nvml libc("libc.so.6");
  EXPECT_FALSE(libc.ok());
  EXPECT_NE(libc.inventory().error.find("lacks nvmlInit_v2"), std::string::npos);
}

TEST(Nvml, EnvironmentOverride) {
  ScopedEnv lib("NODEPROBE_NVML_LIBRARY", NODEPROBE_FAKE_NVML);
  const Nvml nvml;
  EXPECT_TRUE(nvml.ok()) << nvml.inventory().error;
  EXPECT_EQ(nvml.inventory().library, NODEPROBE_FAKE_NVML);
}

TEST(Nvml, InventoryFromFakeDriver) {
  ScopedEnv gpus("FAKE_NVML_GPUS", "2");
  ScopedEnv pcie("FAKE_NVML_PCIE", "1,16,4,16");
  const Nvml nvml(NODEPROBE_FAKE_NVML);
  ASSERT_TRUE(nvml.ok()) << nvml.inventory().error;
  const NvmlInventory& inv = nvml.inventory();
  EXPECT_EQ(inv.driver_version, "550.54.15");
  EXPECT_EQ(inv.cuda_driver_version, 12040);
  ASSERT_EQ(inv.gpus.size(), 2u);
  const NvmlGpu& g = inv.gpus[1];
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(g.uuid, "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(g.pci_bus_id, "00000000:11:00.0");
  EXPECT_EQ(g.cc_major, 8);
  EXPECT_EQ(g.memory_total, 40LL << 30);
  EXPECT_EQ(g.persistence_mode, 1);
  EXPECT_EQ(g.ecc_uncorrected_volatile, 0);
  EXPECT_EQ(g.ecc_corrected_volatile, 3);
  EXPECT_EQ(g.retired_pages_sbe, -1);  // NOT_SUPPORTED stays unknown
  EXPECT_EQ(g.remap_failure, 0);
  EXPECT_EQ(g.pcie_gen, 1);
  EXPECT_EQ(g.pcie_gen_max, 4);
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.nvlink_links, 12);
  EXPECT_EQ(g.nvlink_active, 12);
  EXPECT_DOUBLE_EQ(g.power_limit_w, 400);
  EXPECT_EQ(g.throttle_reasons, 1);
  EXPECT_EQ(nvml.index_of_uuid("GPU-00000000-0000-0000-0000-000000000001"), 1);
  const NvmlSample s = nvml.sample(0);
  EXPECT_EQ(s.sm_clock_mhz, 1410);
  EXPECT_EQ(s.temperature_c, 33);
  const Json j = to_json(g);
  EXPECT_EQ(j["throttle_reasons"], "GpuIdle");
  EXPECT_EQ(j["ecc_enabled"], true);
  EXPECT_FALSE(j.contains("retired_pages_single_bit"));
  EXPECT_EQ(j["compute_capability"], "8.0");
}

TEST(Nvml, InitFailureIsReported) {
  ScopedEnv rc("FAKE_NVML_INIT_RESULT", "18");
  const Nvml nvml(NODEPROBE_FAKE_NVML);
  EXPECT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.inventory().init_rc, 18);
  EXPECT_NE(nvml.inventory().error.find("version mismatch"), std::string::npos);
}

TEST(Nvml, ThrottleReasons) {
  EXPECT_EQ(describe_throttle_reasons(0), "none");
  EXPECT_EQ(describe_throttle_reasons(-1), "unknown");
  EXPECT_EQ(describe_throttle_reasons(0x4 | 0x40), "SwPowerCap, HwThermalSlowdown");
  EXPECT_EQ(describe_throttle_reasons(0x10000), "other");
}

}  // namespace
}  // namespace nodeprobe::gemm

namespace nodeprobe::gemm {
namespace {

TEST(BusyWindow, PowerFromTheEnergyCounterClocksAndThrottling) {
  BusyWindow w;
  EXPECT_EQ(w.describe(), "no NVML samples");
  NvmlSample s;
  s.sm_clock_mhz = 1980;
  s.energy_mj = 1'000'000;
  s.power_instant_w = 650;
  s.power_draw_w = 90;  // the 1 s average still holds the idle second before
  s.throttle_reasons = 0x1;  // GpuIdle: the first sample can precede the work
  w.add(s, 10.0);
  s.sm_clock_mhz = 1410;
  s.energy_mj = 1'000'000 + 350'000;  // 350 J in 0.5 s: 700 W
  s.power_instant_w = 690;
  s.throttle_reasons = 0x4;  // SwPowerCap
  w.add(s, 10.5);
  EXPECT_EQ(w.count(), 2);
  EXPECT_DOUBLE_EQ(w.energy_power_w(), 700);
  EXPECT_EQ(w.sm_clock_min(), 1410);
  EXPECT_EQ(w.sm_clock_max(), 1980);
  EXPECT_EQ(w.throttle_reasons(), 0x4);
  EXPECT_EQ(abnormal_throttle(w.throttle_reasons()), 0);  // a power cap is by design
  EXPECT_EQ(abnormal_throttle(0x40 | 0x4), 0x40);          // thermal slowdown is not
  EXPECT_DOUBLE_EQ(w.power_instant_max_w(), 690);
  EXPECT_DOUBLE_EQ(w.seconds(), 0.5);
  // No counter movement: the instantaneous field; neither: the 1 s average, flagged.
  BusyWindow flat;
  NvmlSample f;
  f.power_draw_w = 90;
  flat.add(f, 1);
  flat.add(f, 1.3);
  EXPECT_EQ(flat.energy_power_w(), -1);
  EXPECT_NE(flat.describe().find("1 s average: may include idle time"), std::string::npos) << flat.describe();
}

// What an H200 showed: over a 30 ms BF16 burst the energy counter's step gave
// 1040 W on a 700 W card, and the instantaneous field 125 W at full clocks.
// A window that short reads no power, and says so.
TEST(BusyWindow, TooShortAWindowReadsNoPower) {
  BusyWindow w;
  NvmlSample s;
  s.sm_clock_mhz = 1980;
  s.energy_mj = 5'000'000;
  s.power_instant_w = 125;
  s.power_draw_w = 120;
  w.add(s, 2.0);
  s.energy_mj = 5'000'000 + 31'200;  // 31.2 J in 0.03 s
  w.add(s, 2.03);
  EXPECT_EQ(w.energy_power_w(), -1);
  EXPECT_EQ(w.power_instant_max_w(), -1);
  const std::string d = w.describe();
  EXPECT_NE(d.find("power not read (a 0.03 s window"), std::string::npos) << d;
  EXPECT_EQ(d.find(" W "), std::string::npos) << d;
  EXPECT_FALSE(w.to_json().contains("power_energy_counter_w"));
  EXPECT_TRUE(w.to_json().contains("power_not_read"));
}

}  // namespace
}  // namespace nodeprobe::gemm
