#include "nodeprobe/host_facts.h"

#include <gtest/gtest.h>

namespace nodeprobe {
namespace {

std::string fixture(const std::string& name) {
  return std::string(NODEPROBE_FIXTURES) + "/sysroot/" + name;
}

TEST(HostFacts, ReadsFixtureTree) {
  const char* env[] = {"NCCL_DEBUG=INFO", "HOME=/root", "FI_PROVIDER=efa", nullptr};
  const HostInfo h = collect_host_facts(FsRoot(fixture("rhel8-p4d")), env);
  EXPECT_EQ(h.hostname, "ip-10-0-1-23.ec2.internal");
  EXPECT_EQ(h.kernel, "4.18.0-477.27.1.el8_8.x86_64");
  EXPECT_EQ(h.os, "Red Hat Enterprise Linux 8.8 (Ootpa)");
  EXPECT_EQ(h.instance_type, "p4d.24xlarge");
  EXPECT_EQ(h.cpus, 4);
  EXPECT_EQ(h.cpu_model, "Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz");
  EXPECT_EQ(h.memory_bytes, 1176434580LL * 1024);
  EXPECT_EQ(h.driver, "535.104.05");
  EXPECT_EQ(h.env.size(), 2u);
  EXPECT_EQ(h.env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(h.env.count("HOME"), 0u);
}

TEST(HostFacts, InstanceTypeOnlyFromEc2Dmi) {
  // A QEMU guest's product name is not an instance type.
  EXPECT_EQ(dmi_instance_type(FsRoot(fixture("tuned"))), "");
  EXPECT_EQ(dmi_instance_type(FsRoot(fixture("empty"))), "");
  EXPECT_EQ(collect_host_facts(FsRoot(fixture("tuned")), nullptr).os,
            "Rocky Linux 8.9 (Green Obsidian)");
}

TEST(HostFacts, MissingFilesGiveUnknownNotCrash) {
  const HostInfo h = collect_host_facts(FsRoot(fixture("empty")), nullptr);
  EXPECT_EQ(h.os, "unknown");
  EXPECT_EQ(h.driver, "");
  EXPECT_EQ(h.memory_bytes, 0);
}

TEST(HostFacts, NvidiaVersionFormats) {
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"),
            "535.104.05");
  EXPECT_EQ(parse_nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                        "550.54.15  Release Build  (dvs-builder@U16)  Tue Mar  5 2024"),
            "550.54.15");
  EXPECT_EQ(parse_nvidia_driver_version("garbage"), "");
  EXPECT_EQ(parse_nvidia_driver_version(""), "");
}

TEST(HostFacts, EnvAllowlistDropsSecrets) {
  EXPECT_TRUE(env_name_allowed("NCCL_SOCKET_IFNAME"));
  EXPECT_TRUE(env_name_allowed("OMP_NUM_THREADS"));
  EXPECT_TRUE(env_name_allowed("CUDA_VISIBLE_DEVICES"));
  EXPECT_FALSE(env_name_allowed("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(env_name_allowed("PATH"));
  EXPECT_FALSE(env_name_allowed("PMIX_SECURITY_KEY"));
  EXPECT_FALSE(env_name_allowed("NCCL_AUTH_TOKEN"));
  EXPECT_FALSE(env_name_allowed("FI_PASSWORD"));
  EXPECT_FALSE(env_name_allowed("XNCCL_DEBUG"));
  const char* env[] = {"UCX_TLS=rc", "OMPI_MCA_btl=tcp,self", "SSH_AUTH_SOCK=/tmp/x", "NOEQUALS",
                       nullptr};
  const auto m = allowlisted_env(env);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at("OMPI_MCA_btl"), "tcp,self");
}

TEST(FsRoot, ReadHelpers) {
  const FsRoot fs(fixture("rhel8-p4d"));
  EXPECT_EQ(fs.read_int("/proc/sys/vm/max_map_count"), 65530);
  // Larger than LLONG_MAX: saturates rather than failing.
  EXPECT_TRUE(fs.read_int("/proc/sys/kernel/shmmax").has_value());
  EXPECT_FALSE(fs.read_int("/etc/os-release").has_value());
  EXPECT_FALSE(fs.read("/does/not/exist").has_value());
  EXPECT_EQ(fs.read_line("/sys/kernel/mm/transparent_hugepage/enabled"), "always madvise [never]");
  const auto cpus = fs.list_dir("/sys/devices/system/cpu");
  EXPECT_EQ(cpus.front(), "cpu0");
  EXPECT_TRUE(fs.list_dir("/nope").empty());
  EXPECT_EQ(trim("  a b \n"), "a b");
  EXPECT_EQ(split_ws(" a  b\tc ").size(), 3u);
}

TEST(FsRoot, SelectedWordOfASysfsSelector) {
  EXPECT_EQ(selected_word("always madvise [never]"), "never");
  EXPECT_EQ(selected_word("[always] madvise never"), "always");
  EXPECT_EQ(selected_word(" performance \n"), "performance");  // no brackets: the whole value
  EXPECT_EQ(selected_word("broken ] ["), "broken ] [");
}

}  // namespace
}  // namespace nodeprobe
