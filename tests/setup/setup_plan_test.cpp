// scripts/setup.sh --dry-run on each supported system: the plan is a function
// of /etc/os-release (the real file of each system, tests/fixtures/os-release),
// the repositories the node offers (`dnf repolist --all` output,
// tests/fixtures/repolist) and the CUDA release; nothing is run.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <fstream>
#include <sstream>

#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::TempDir;

const std::string kSrc = NODEPROBE_SOURCE_DIR;

struct Plan {
  SpawnResult r;
  std::vector<std::string> lines;
  bool has(const std::string& line) const {
    for (const auto& l : lines)
      if (l == line) return true;
    return false;
  }
  // Lines that start with `prefix`.
  std::vector<std::string> starting(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& l : lines)
      if (l.rfind(prefix, 0) == 0) out.push_back(l);
    return out;
  }
  bool mentions(const std::string& word) const { return r.out.find(word) != std::string::npos; }
  std::string text() const { return r.out + r.err; }
};

Plan dry_run(const std::string& os, const std::string& cuda, const std::string& repolist = "",
             std::vector<std::string> extra = {}) {
  TempDir build;
  std::vector<std::string> argv = {"bash", kSrc + "/scripts/setup.sh", "--dry-run", "--build-dir", build.path(),
                                   "--os-release", kSrc + "/tests/fixtures/os-release/" + os, "--cuda", cuda};
  if (!repolist.empty()) argv.insert(argv.end(), {"--repolist", kSrc + "/tests/fixtures/repolist/" + repolist});
  argv.insert(argv.end(), extra.begin(), extra.end());
  Plan p;
  p.r = testing::run(argv, 60);
  std::istringstream in(p.r.out);
  for (std::string l; std::getline(in, l);) p.lines.push_back(l);
  return p;
}

std::string machine() {
  struct utsname u {};
  ::uname(&u);
  return u.machine;
}

const char* kToolset12 = "-DCMAKE_CXX_COMPILER=/opt/rh/gcc-toolset-12/root/usr/bin/g++";

TEST(SetupPlan, Rhel8OnAwsEnablesCodeReadyBuilderThroughRhui) {
  const Plan p = dry_run("rhel-8.10", "12.2", "rhel-8-aws-rhui");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_TRUE(p.has("try: dnf config-manager --set-enabled codeready-builder-for-rhel-8-rhui-rpms")) << p.r.out;
  EXPECT_FALSE(p.mentions("subscription-manager")) << "RHUI nodes have no working subscription-manager";
  EXPECT_TRUE(p.has("try: dnf install -y https://dl.fedoraproject.org/pub/epel/epel-release-latest-8.noarch.rpm"));
  // CUDA 12.2 rejects GCC 13: toolset 12, for the host compiler too.
  EXPECT_TRUE(p.has("must: dnf install -y gcc-toolset-12-gcc-c++")) << p.r.out;
  const auto cmake = p.starting("run: cmake -S");
  ASSERT_EQ(cmake.size(), 1u);
  EXPECT_NE(cmake[0].find(kToolset12), std::string::npos) << cmake[0];
  EXPECT_NE(cmake[0].find("-DCMAKE_CUDA_HOST_COMPILER=/opt/rh/gcc-toolset-12/root/usr/bin/g++"), std::string::npos);
  // make is required (configure fails with neither ninja nor make).
  const auto req = p.starting("must: dnf install -y make cmake");
  ASSERT_EQ(req.size(), 1u) << p.r.out;
  // RHEL 8's GoogleTest 1.8 and nlohmann-json 3.6 are not installed: the pinned releases are built.
  EXPECT_FALSE(p.mentions("gtest-devel"));
  EXPECT_FALSE(p.mentions("json-devel"));
  EXPECT_TRUE(p.mentions("openmpi-devel"));
  EXPECT_TRUE(p.mentions("/usr/lib64/openmpi"));
}

TEST(SetupPlan, Rhel8WithASubscriptionUsesSubscriptionManager) {
  const Plan p = dry_run("rhel-8.10", "none", "rhel-8-subscription");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_TRUE(p.has("try: subscription-manager repos --enable codeready-builder-for-rhel-8-" + machine() + "-rpms"))
      << p.r.out;
  EXPECT_FALSE(p.mentions("config-manager --set-enabled"));
  EXPECT_TRUE(p.has("must: dnf install -y gcc-toolset-13-gcc-c++"));  // no CUDA: 13
  EXPECT_FALSE(p.mentions("CMAKE_CUDA_HOST_COMPILER"));
}

TEST(SetupPlan, Rhel9OnAwsAndAzureRhui) {
  Plan p = dry_run("rhel-9.4", "12.4", "rhel-9-aws-rhui");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_TRUE(p.has("try: dnf config-manager --set-enabled codeready-builder-for-rhel-9-rhui-rpms")) << p.r.out;
  EXPECT_TRUE(p.has("must: dnf install -y gcc-toolset-13-gcc-c++"));  // CUDA 12.4 takes GCC 13
  EXPECT_TRUE(p.mentions("gtest-devel"));  // CRB 9 has GoogleTest 1.11+
  EXPECT_TRUE(p.has("try: dnf install -y https://dl.fedoraproject.org/pub/epel/epel-release-latest-9.noarch.rpm"));
  p = dry_run("rhel-9.4", "12.4", "rhel-9-azure-rhui");
  EXPECT_TRUE(p.has("try: dnf config-manager --set-enabled codeready-builder-for-rhel-9-x86_64-rhui-rpms")) << p.r.out;
}

TEST(SetupPlan, RockyAndAlmaEnablePowertoolsOrCrbAndEpelRelease) {
  Plan p = dry_run("rocky-8.9", "11.8", "rocky-8");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_TRUE(p.has("try: dnf config-manager --set-enabled powertools")) << p.r.out;
  EXPECT_TRUE(p.has("try: dnf install -y epel-release"));
  EXPECT_TRUE(p.has("must: dnf install -y gcc-toolset-11-gcc-c++"));  // CUDA 11.8: GCC <= 11
  EXPECT_FALSE(p.mentions("subscription-manager"));
  p = dry_run("almalinux-8.9", "12.2");
  EXPECT_TRUE(p.has("try: dnf config-manager --set-enabled powertools")) << p.r.out;
  p = dry_run("almalinux-9.3", "12.2");
  EXPECT_TRUE(p.has("try: dnf config-manager --set-enabled crb")) << p.r.out;
  EXPECT_TRUE(p.has("must: dnf install -y gcc-toolset-12-gcc-c++"));
}

TEST(SetupPlan, AmazonLinux2023HasNoEpelAndNoToolset) {
  const Plan p = dry_run("amzn-2023", "12.4");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_NE(p.r.out.find("family al2023"), std::string::npos) << p.r.out;  // not the EL8 way (ID_LIKE=fedora)
  EXPECT_FALSE(p.mentions("epel"));
  EXPECT_FALSE(p.mentions("gcc-toolset"));
  EXPECT_FALSE(p.mentions("config-manager"));
  EXPECT_FALSE(p.mentions("CMAKE_CXX_COMPILER"));  // the system GCC 11
  EXPECT_EQ(p.starting("must: dnf install -y gcc-c++ make cmake").size(), 1u) << p.r.out;
  EXPECT_TRUE(p.mentions("openmpi-devel"));
  EXPECT_TRUE(p.mentions("gtest-devel"));  // checked by version at configure time
}

TEST(SetupPlan, AmazonLinux2UsesYumGcc10AndCmakeFromPypi) {
  const Plan p = dry_run("amzn-2", "none");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_FALSE(p.mentions("epel"));
  EXPECT_EQ(p.starting("must: yum install -y gcc10-c++ make").size(), 1u) << p.r.out;
  EXPECT_TRUE(p.mentions("-DCMAKE_CXX_COMPILER=/usr/bin/gcc10-g++"));
  EXPECT_EQ(p.starting("run: python3 -m venv").size(), 1u) << p.r.out;
}

TEST(SetupPlan, UbuntuAndDebianUseApt) {
  Plan p = dry_run("ubuntu-22.04", "12.2");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_TRUE(p.has("must: apt-get update -q"));
  const auto req = p.starting("must: apt-get install -y -q --no-install-recommends build-essential");
  ASSERT_EQ(req.size(), 1u) << p.r.out;
  EXPECT_NE(req[0].find(" libgtest-dev libgmock-dev "), std::string::npos);
  EXPECT_FALSE(p.mentions("chromium"));  // Ubuntu's is a snap wrapper
  EXPECT_FALSE(p.mentions("CMAKE_CXX_COMPILER"));  // GCC 11 suits CUDA 12.2
  // Ubuntu 24.04's GCC 13 is too new for CUDA 12.2: g++-12 is installed and used.
  p = dry_run("ubuntu-24.04", "12.2");
  EXPECT_NE(p.starting("must: apt-get install")[0].find(" g++-12"), std::string::npos) << p.r.out;
  EXPECT_TRUE(p.mentions("-DCMAKE_CXX_COMPILER=/usr/bin/g++-12"));
  p = dry_run("ubuntu-24.04", "12.4");
  EXPECT_FALSE(p.mentions("g++-12"));
  p = dry_run("debian-12", "none");
  EXPECT_TRUE(p.mentions("supported: yes"));
  EXPECT_TRUE(p.mentions("chromium"));
}

TEST(SetupPlan, TheHostCompilerFollowsTheCudaRelease) {
  // crt/host_config.h of each release: the newest GCC it accepts.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"11.0", ""}, {"11.2", ""}, {"11.4", "11"}, {"11.8", "11"}, {"12.0", "12"},
      {"12.3", "12"}, {"12.4", "13"}, {"12.6", "13"}, {"12.8", "14"}, {"13.0", "14"}};
  for (const auto& [cuda, toolset] : cases) {
    const Plan p = dry_run("rocky-8.9", cuda, "rocky-8");
    if (toolset.empty()) {
      EXPECT_NE(p.r.exit_code, 0) << cuda;  // no toolset is that old
      EXPECT_NE(p.r.err.find("no gcc-toolset is that old"), std::string::npos) << cuda << p.r.err;
    } else {
      EXPECT_TRUE(p.has("must: dnf install -y gcc-toolset-" + toolset + "-gcc-c++")) << cuda << "\n" << p.r.out;
    }
  }
}

TEST(SetupPlan, OfflineAddsNothingFromTheInternet) {
  const Plan p = dry_run("rhel-8.10", "12.2", "rhel-8-aws-rhui", {"--deps", "/srv/nodeprobe-deps"});
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_FALSE(p.mentions("https://"));
  EXPECT_TRUE(p.mentions("-DNODEPROBE_DEPS_DIR=/srv/nodeprobe-deps"));
}

TEST(SetupPlan, AnUnknownSystemInstallsNothing) {
  const Plan p = dry_run("opensuse-leap-15.5", "none");
  ASSERT_EQ(p.r.exit_code, 0) << p.text();
  EXPECT_TRUE(p.starting("must:").empty());
  EXPECT_TRUE(p.starting("try:").empty());
  EXPECT_NE(p.r.err.find("install the packages named in scripts/setup.sh by hand"), std::string::npos);
}

TEST(SetupPlan, ADryRunRunsNoPackageManager) {
  // Package managers on PATH that record being called: a dry run calls none.
  TempDir bin;
  const std::string log = bin.file("calls");
  for (const char* tool : {"dnf", "yum", "apt-get", "rpm", "dpkg-query", "subscription-manager", "sudo", "pip"}) {
    testing::write_file(bin.file(tool), "#!/bin/sh\necho \"$0 $*\" >> " + log + "\n");
    ASSERT_EQ(::chmod(bin.file(tool).c_str(), 0755), 0);
  }
  TempDir build;
  const auto r = testing::run({"bash", kSrc + "/scripts/setup.sh", "--dry-run", "--build-dir", build.path(),
                               "--os-release", kSrc + "/tests/fixtures/os-release/rhel-8.10", "--cuda", "none"},
                              60, {"PATH=" + bin.path() + ":/usr/bin:/bin"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::ifstream(log).good()) << testing::read_file(log);
}

TEST(SetupPlan, BadArgumentsAreUsageErrors) {
  auto r = testing::run({"bash", kSrc + "/scripts/setup.sh", "--dry-run", "--cuda", "twelve"}, 30);
  EXPECT_EQ(r.exit_code, 64);
  r = testing::run({"bash", kSrc + "/scripts/setup.sh", "--bogus"}, 30);
  EXPECT_EQ(r.exit_code, 64);
  r = testing::run({"bash", kSrc + "/scripts/setup.sh", "--dry-run", "--os-release", "/nonexistent/os-release"}, 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/os-release"), std::string::npos);
}

TEST(SetupPlan, TheExampleInDevelopingMdIsWhatTheScriptPrints) {
  const std::string doc = testing::read_file(kSrc + "/docs/DEVELOPING.md");
  const std::string cmd = "$ scripts/setup.sh --dry-run --os-release tests/fixtures/os-release/rhel-8.10";
  const auto at = doc.find(cmd);
  ASSERT_NE(at, std::string::npos) << "DEVELOPING.md no longer shows the dry run";
  const auto body = doc.find("\n", doc.find("--no-run", at)) + 1;
  const std::string shown = doc.substr(body, doc.find("```", body) - body);
  TempDir build;
  const auto r = testing::run({"bash", kSrc + "/scripts/setup.sh", "--dry-run", "--os-release",
                               kSrc + "/tests/fixtures/os-release/rhel-8.10", "--repolist",
                               kSrc + "/tests/fixtures/repolist/rhel-8-aws-rhui", "--cuda", "12.2", "--no-run",
                               "--build-dir", build.path()},
                              60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string printed = r.out;
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t p = 0; (p = printed.find(from, p)) != std::string::npos; p += to.size()) printed.replace(p, from.size(), to);
  };
  replace_all(build.path(), "/src/nodeprobe/build");  // the doc shows the default build directory
  replace_all(kSrc, "/src/nodeprobe");
  EXPECT_EQ(shown, printed);
}

// The real run (not --dry-run) with package managers that record their calls:
// the same commands, in order, and the fallbacks when a repository lacks a
// package (a toolset, an optional package).
struct FakeTools {
  TempDir bin;
  std::string log = bin.file("calls");
  explicit FakeTools(const std::string& dnf_fails_on, const std::string& apt_fails_on) {
    auto tool = [&](const std::string& name, const std::string& body) {
      testing::write_file(bin.file(name), "#!/bin/sh\n" + body);
      EXPECT_EQ(::chmod(bin.file(name).c_str(), 0755), 0);
    };
    const std::string record = "echo \"$(basename \"$0\") $*\" >> " + log + "\n";
    tool("dnf", record + "case \"$*\" in *" + dnf_fails_on + "*) exit 1 ;; esac\nexit 0\n");
    tool("apt-get", record + "case \"$*\" in *" + apt_fails_on + "*) exit 100 ;; esac\nexit 0\n");
    tool("subscription-manager", record);
    tool("crb", record);  // epel-release's helper
    tool("rpm", "exit 1\n");                     // nothing is installed
    tool("dpkg-query", "exit 1\n");
    tool("sudo", "[ \"$1\" = -n ] && shift\nexec \"$@\"\n");
  }
  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    std::istringstream in(testing::read_file(log));
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
  SpawnResult setup(const std::string& os, std::vector<std::string> extra) const {
    std::vector<std::string> argv = {"bash", kSrc + "/scripts/setup.sh", "--deps-only", "--os-release",
                                     kSrc + "/tests/fixtures/os-release/" + os};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::run(argv, 60, {"PATH=" + bin.path() + ":/usr/bin:/bin"});
  }
};

TEST(SetupRun, RhelRunsThePlanAndFallsBackToAnOlderToolset) {
  const FakeTools fake("gcc-toolset-12", "never");
  const auto r = fake.setup("rhel-8.10", {"--repolist", kSrc + "/tests/fixtures/repolist/rhel-8-aws-rhui", "--cuda", "12.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = fake.calls();
  ASSERT_EQ(calls.size(), 7u) << r.err;
  EXPECT_EQ(calls[0], "dnf install -y dnf-plugins-core");
  EXPECT_EQ(calls[1], "dnf config-manager --set-enabled codeready-builder-for-rhel-8-rhui-rpms");
  EXPECT_EQ(calls[2], "dnf install -y https://dl.fedoraproject.org/pub/epel/epel-release-latest-8.noarch.rpm");
  EXPECT_EQ(calls[3], "dnf install -y gcc-toolset-12-gcc-c++");  // not in this repository
  EXPECT_EQ(calls[4], "dnf install -y gcc-toolset-11-gcc-c++");
  EXPECT_EQ(calls[5].rfind("dnf install -y make cmake git", 0), 0u) << calls[5];
  EXPECT_EQ(calls[6].rfind("dnf install -y --skip-broken ninja-build", 0), 0u) << calls[6];
  EXPECT_NE(r.err.find("compiler: gcc-toolset-11 (CUDA 12.2 accepts GCC <= 12)"), std::string::npos) << r.err;
}

TEST(SetupRun, WhenTheRepositoryIdFailsEpelsCrbHelperIsTried) {
  const FakeTools fake("config-manager", "never");
  const auto r = fake.setup("rocky-8.9", {"--repolist", kSrc + "/tests/fixtures/repolist/rocky-8", "--cuda", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = fake.calls();
  ASSERT_GE(calls.size(), 4u) << r.err;
  EXPECT_EQ(calls[1], "dnf config-manager --set-enabled powertools");
  EXPECT_EQ(calls[2], "dnf install -y epel-release");
  EXPECT_EQ(calls[3], "crb enable");
}

TEST(SetupRun, AptInstallsOptionalPackagesOneByOneWhenOneIsMissing) {
  const FakeTools fake("never", "libvalijson-dev");
  const auto r = fake.setup("debian-12", {"--cuda", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = fake.calls();
  ASSERT_GE(calls.size(), 4u) << r.err;
  EXPECT_EQ(calls[0], "apt-get update -q");
  EXPECT_EQ(calls[1].rfind("apt-get install -y -q --no-install-recommends build-essential", 0), 0u);
  EXPECT_NE(calls[2].find(" libopenmpi-dev "), std::string::npos);  // all optional ones at once: fails
  int one_by_one = 0;
  for (std::size_t i = 3; i < calls.size(); ++i) one_by_one += calls[i].find("apt-get install") == 0;
  EXPECT_EQ(one_by_one, static_cast<int>(calls.size()) - 3);
  EXPECT_NE(r.err.find("optional package libvalijson-dev is not available"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nodeprobe
