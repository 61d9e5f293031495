#include <gtest/gtest.h>

#include "host_checks.h"

namespace nodeprobe::diag {
namespace {

std::vector<Finding> check(const HostObs& h, const std::string& type = "") {
  FindingSet s;
  host_checks(h, type, default_playbook(), s);
  return s.render(default_playbook());
}

const Finding* get(const std::vector<Finding>& v, const std::string& id) {
  for (const auto& f : v)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(HostChecks, NoGpuHardwareIsInfoUnlessTheInstanceTypeHasGpus) {
  HostObs h;
  h.gpus_on_pci = 0;
  auto v = check(h);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].severity, Severity::kInfo);
  v = check(h, "p4d.24xlarge");
  ASSERT_NE(get(v, "gpu.not_found"), nullptr);
  EXPECT_EQ(get(v, "gpu.not_found")->severity, Severity::kError);
}

TEST(HostChecks, DriverNotLoadedAndModuleMissing) {
  HostObs h;
  h.gpus_on_pci = 8;
  h.driver_loaded = false;
  h.module_on_disk = false;
  h.kernel_release = "4.18.0-513.el8.x86_64";
  auto v = check(h);
  EXPECT_EQ(get(v, "gpu.not_found")->facts.value("cause", ""), "driver_not_loaded");
  EXPECT_EQ(get(v, "gpu.driver_kernel_mismatch")->facts.value("cause", ""), "module_missing");
}

TEST(HostChecks, ModuleBuildHeadersForAnotherKernel) {
  HostObs h;
  h.kernel_build_trees = {"3.10.0-1127.18.2.el7.x86_64"};
  EXPECT_TRUE(check(h).empty());  // no running kernel, no kernel listed: nothing to compare
  h.kernel_images = {"3.10.0-957.el7.x86_64", "3.10.0-1127.18.2.el7.x86_64"};
  EXPECT_TRUE(check(h).empty());  // two kernels and no uname -r: which one runs is not known
  h.kernel_images = {"3.10.0-957.el7.x86_64"};
  h.kernel_build_line = "pkgs.txt:4: kernel-devel.x86_64 3.10.0-1127.18.2.el7 @updates";
  auto v = check(h);
  const Finding* f = get(v, "gpu.driver_kernel_mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->facts.value("cause", ""), "headers_missing");
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(f->title.find("3.10.0-957.el7.x86_64"), std::string::npos) << f->title;
  h.gpus_on_pci = 0;  // a PCI scan that found no NVIDIA GPU: no module to build
  EXPECT_EQ(get(check(h), "gpu.driver_kernel_mismatch"), nullptr);
  h.gpus_on_pci = 2;
  EXPECT_NE(get(check(h), "gpu.driver_kernel_mismatch"), nullptr);
  h.kernel_release = "3.10.0-1127.18.2.el7.x86_64";  // the running kernel has its headers
  EXPECT_TRUE(check(h).empty());
}

TEST(HostChecks, VermagicAndLibraryVersions) {
  HostObs h;
  h.gpus_on_pci = 1;
  h.driver_loaded = true;
  h.driver_version = "535.54.03";
  h.nvml_lib_version = "535.54.03";
  h.kernel_release = "4.18.0-513.el8.x86_64";
  h.module_vermagic_kernel = "4.18.0-513.el8.x86_64";
  EXPECT_TRUE(check(h).empty());
  h.nvml_lib_version = "535.104.05";
  h.module_vermagic_kernel = "4.18.0-477.el8.x86_64";
  const auto v = check(h);
  const Finding* f = get(v, "gpu.driver_kernel_mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(f->count, 2);
}

TEST(HostChecks, CudaRuntimeVsDriver) {
  HostObs h;
  h.driver_cuda = "12.2";
  h.cuda_runtime = "12.4";
  auto v = check(h);
  ASSERT_NE(get(v, "gpu.cuda_driver_insufficient"), nullptr);
  EXPECT_EQ(get(v, "gpu.cuda_driver_insufficient")->severity, Severity::kWarn);  // minor-version compatibility
  h.cuda_runtime = "13.0.88";
  v = check(h);
  EXPECT_EQ(get(v, "gpu.cuda_driver_insufficient")->severity, Severity::kError);
  h.cuda_runtime = "12.1";
  EXPECT_TRUE(check(h).empty());
  int ma = 0, mi = 0;
  ASSERT_TRUE(cuda_version("12020", &ma, &mi));
  EXPECT_EQ(ma, 12);
  EXPECT_EQ(mi, 2);
}

TEST(HostChecks, CountModelAndEfaAgainstTheInstanceType) {
  HostObs h;
  h.gpus_on_pci = 8;
  h.driver_loaded = true;
  h.gpus_visible = 7;
  h.gpu_models = {"NVIDIA A100-SXM4-40GB"};
  h.efa_devices = 0;
  const auto v = check(h, "p4d.24xlarge");
  EXPECT_NE(get(v, "gpu.count_mismatch"), nullptr);
  EXPECT_NE(get(v, "efa.missing"), nullptr);
  EXPECT_NE(get(v, "gpu.not_found"), nullptr);  // 8 on the bus, 7 visible
  h.gpus_visible = 8;
  h.efa_devices = 4;
  EXPECT_TRUE(check(h, "p4d.24xlarge").empty());
  h.gpu_models = {"Tesla T4"};
  EXPECT_EQ(get(check(h, "p4d.24xlarge"), "gpu.count_mismatch")->facts.value("cause", ""), "model_mismatch");
}

// PCIe ACS: redirect bits on a switch port above GPUs are a finding; root
// ports, Source Validation alone, and a single GPU are not.
TEST(HostChecks, AcsRedirectOnASwitchPortAboveGpus) {
  HostObs h;
  h.gpus_on_pci = 2;
  h.acs_ports = {{"0000:00:01.0", "0000:03:00.0", 0x001f, false},   // root port: left out
                 {"0000:02:08.0", "0000:03:00.0", 0x0001, true},    // SrcValid only
                 {"0000:02:10.0", "0000:04:00.0", 0x0001, true}};
  EXPECT_EQ(get(check(h), "gpu.pcie_degraded"), nullptr);
  h.acs_ports.push_back({"0000:02:08.0", "0000:05:00.0", 0x001d, true});
  h.acs_ports.push_back({"0000:02:10.0", "0000:04:00.0", 0x000c, true});
  auto v = check(h);
  const Finding* f = get(v, "gpu.pcie_degraded");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->facts.value("cause", ""), "acs_redirect");
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_EQ(f->facts.value("acsctl", ""), "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-");
  EXPECT_EQ(f->facts.value("bridges", ""), "2");
  ASSERT_FALSE(f->evidence.empty());
  EXPECT_NE(f->evidence[0].text.find("switch port 0000:02:08.0"), std::string::npos) << f->evidence[0].text;
  EXPECT_NE(f->title.find("0000:02:08.0"), std::string::npos) << f->title;
  h.gpus_on_pci = 1;
  EXPECT_EQ(get(check(h), "gpu.pcie_degraded"), nullptr);
}

// GPUs in translated IOMMU domains (DMA, DMA-FQ): a warning with two or more;
// passthrough (identity), one GPU, or no IOMMU facts are quiet.
TEST(HostChecks, GpusInTranslatedIommuDomains) {
  HostObs h;
  h.gpus_on_pci = 2;
  h.gpu_iommu = {{"0000:03:00.0", "identity"}, {"0000:04:00.0", "identity"}};
  EXPECT_EQ(get(check(h), "gpu.pcie_degraded"), nullptr);
  h.gpu_iommu = {{"0000:03:00.0", "DMA-FQ"}, {"0000:04:00.0", "DMA-FQ"}};
  const auto v = check(h);
  const Finding* f = get(v, "gpu.pcie_degraded");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->facts.value("cause", ""), "iommu_translation");
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(f->title.find("DMA-FQ"), std::string::npos) << f->title;
  h.gpus_on_pci = 1;
  h.gpu_iommu = {{"0000:03:00.0", "DMA"}};
  EXPECT_EQ(get(check(h), "gpu.pcie_degraded"), nullptr);
}

}  // namespace
}  // namespace nodeprobe::diag
