// The one instance table (nodeprobe/instance_table.h): parsing, the answer
// for known, GPU-less and unknown types, and the data file the build ships.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "nodeprobe/instance_table.h"

namespace nodeprobe {
namespace {

const char* kDoc = R"({"schema": "nodeprobe.instance_types/1",
  "instance_types": {
    "p4d.24xlarge": {"gpu_count": 8, "gpu_model": "A100", "efa_devices": 4, "nvswitch": true, "min": {}},
    "g6.xlarge": {"gpu_count": 1, "gpu_model": "L4", "efa": false},
    "g6.12xlarge": {"gpu_count": 4, "gpu_model": "L4", "efa": true}},
  "gpu_less_families": ["c5", "m5"]})";

TEST(InstanceTable, AnswersKnownGpuLessAndUnknownTypes) {
  const InstanceTable t = parse_instance_table(kDoc, "doc");
  ASSERT_NE(t.find("p4d.24xlarge"), nullptr);
  EXPECT_EQ(t.find("p4d.24xlarge")->gpu_count, 8);
  EXPECT_TRUE(t.find("p4d.24xlarge")->efa);  // efa_devices > 0 implies it
  EXPECT_TRUE(t.find("p4d.24xlarge")->nvswitch);
  EXPECT_FALSE(t.find("g6.xlarge")->efa);
  EXPECT_TRUE(t.find("g6.12xlarge")->efa);
  EXPECT_TRUE(t.known("c5.xlarge"));
  EXPECT_TRUE(t.gpu_less("m5.large"));
  EXPECT_FALSE(t.known("c5"));
  EXPECT_FALSE(t.known("g9.bogus"));
  EXPECT_EQ(t.unknown_reason(""), "");
  EXPECT_EQ(t.unknown_reason("c5.xlarge"), "");
  EXPECT_EQ(t.unknown_reason("g9.bogus"),
            "unknown instance type 'g9.bogus' (known: g6.12xlarge, g6.xlarge, p4d.24xlarge; families without GPUs: c5, m5)");
  EXPECT_EQ(t.list_lines(),
            "g6.12xlarge\tinstance type (--expect): 4 x L4, EFA\n"
            "g6.xlarge\tinstance type (--expect): 1 x L4\n"
            "p4d.24xlarge\tinstance type (--expect): 8 x A100, EFA, NVSwitch\n"
            "c5.*\tinstance type (--expect): no GPU\n"
            "m5.*\tinstance type (--expect): no GPU\n");
}

TEST(InstanceTable, BadDocumentsAreOneLineErrors) {
  for (const char* bad : {
           "not json",
           R"({"schema": "nodeprobe.instances/1", "instance_types": {}})",
           R"({"schema": "nodeprobe.instance_types/1"})",
           R"({"schema": "nodeprobe.instance_types/1", "instance_types": {}, "colour": 1})",
           R"({"schema": "nodeprobe.instance_types/1", "instance_types": {"p9.huge": {"gpu_count": -1}}})",
           R"({"schema": "nodeprobe.instance_types/1", "instance_types": {"p9.huge": {"gpus": 8}}})",
           R"({"schema": "nodeprobe.instance_types/1", "instance_types": {"p9": {}}})",
           R"({"schema": "nodeprobe.instance_types/1", "instance_types": {"p9.huge": {"efa": "yes"}}})",
           R"({"schema": "nodeprobe.instance_types/1", "instance_types": {}, "gpu_less_families": "c5"})",
       }) {
    try {
      parse_instance_table(bad, "doc");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InstanceTableError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("doc", 0), 0u) << e.what();
    }
  }
}

TEST(InstanceTable, TheShippedTableIsTheSourceFileAndParses) {
  std::ifstream in(std::string(NODEPROBE_SOURCE_DIR) + "/diag/data/instance_types.json");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(instance_table_text(), ss.str());
  const InstanceTable& t = instance_table();
  // The types gemm, accept and diag once disagreed on are in the one table.
  for (const char* type : {"g6.xlarge", "g6e.12xlarge", "p5.4xlarge", "p4d.24xlarge", "g4dn.xlarge", "p5en.48xlarge"})
    EXPECT_NE(t.find(type), nullptr) << type;
  EXPECT_TRUE(t.known("c5.xlarge"));
  for (const auto& [type, spec] : t.types) {
    EXPECT_TRUE(spec.gpu_count.has_value()) << type;
    EXPECT_FALSE(spec.gpu_model.empty()) << type;
  }
}

}  // namespace
}  // namespace nodeprobe
