// The JSON Schema, checked by an independent validator (valijson) against
// documents our code emits; the negative cases prove the check can fail.
#include <gtest/gtest.h>

#include "nodeprobe/report_json.h"
#include "sample_report.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

std::string errors(const Json& j) {
  bool available = false;
  auto e = testing::schema_errors(nlohmann::json::parse(j.dump()), &available);
  if (!available) return "SKIP";
  return e;
}

#define SKIP_WITHOUT_VALIDATOR(x) \
  if ((x) == "SKIP") GTEST_SKIP() << "valijson not available"

TEST(Schema, FullSampleIsValid) {
  const Json j = testing::full_sample_report();
  const auto e = errors(j);
  SKIP_WITHOUT_VALIDATOR(e);
  EXPECT_EQ(e, "");
}

TEST(Schema, MinimalEmittedReportIsValid) {
  Report r;
  r.tool = {"nodeprobe-limits", "0.1.0", "unknown"};
  r.run.id = "x";
  r.run.started = "2026-11-29T00:00:00.000Z";
  const auto e = errors(Json(r));
  SKIP_WITHOUT_VALIDATOR(e);
  EXPECT_EQ(e, "");
}

TEST(Schema, RejectsContractViolations) {
  const Json good = testing::full_sample_report();
  SKIP_WITHOUT_VALIDATOR(errors(good));
  auto broken = [&](auto mutate) {
    Json j = good;
    mutate(j);
    return errors(j);
  };
  EXPECT_NE(broken([](Json& j) { j.erase("verdict"); }), "");
  EXPECT_NE(broken([](Json& j) { j["verdict"] = "meh"; }), "");
  EXPECT_NE(broken([](Json& j) { j["schema"] = "nodeprobe.report/1"; }), "") << "the schema file describes /2";
  EXPECT_NE(broken([](Json& j) { j["probes"][0].erase("descriptors"); }), "");
  EXPECT_NE(broken([](Json& j) { j["probes"][0]["descriptors"][0]["kind"] = "guessed"; }), "");
  EXPECT_NE(broken([](Json& j) { j["probes"][0]["descriptors"][0]["display"] = Json{{"scale", 0}}; }), "");
  EXPECT_NE(broken([](Json& j) { j["probes"][0]["environment"]["x"] = 1; }), "");
  EXPECT_NE(broken([](Json& j) { j["probes"][0]["metrics"][0]["better"] = "unknown"; }), "");
  EXPECT_NE(broken([](Json& j) { j["probes"][0]["metrics"][0]["name"] = "busbw_64MB"; }), "")
      << "upper case / unit-like names are rejected";
  EXPECT_NE(broken([](Json& j) { j["probes"][1]["reason"] = ""; }), "")
      << "a skip needs a reason";
  EXPECT_NE(broken([](Json& j) { j["host"]["env"]["AWS_SECRET_ACCESS_KEY"] = "x"; }), "");
  EXPECT_NE(broken([](Json& j) { j["findings"][0]["id"] = "NotAnId"; }), "");
  EXPECT_NE(broken([](Json& j) { j["run"]["started"] = "yesterday"; }), "");
  EXPECT_NE(broken([](Json& j) { j["surprise"] = 1; }), "");
  EXPECT_NE(broken([](Json& j) { j["probes"][0]["metrics"][0]["labels"]["size"] = 64; }), "");
}

}  // namespace
}  // namespace nodeprobe
