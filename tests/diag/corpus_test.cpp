// The accuracy corpus (tests/diag/corpus/manifest.json): every failure
// sample raises its findings with the expected severity and facts, never the
// forbidden ones; healthy samples raise nothing above info.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "diagnose.h"
#include "finding_set.h"
#include "nodeprobe/finding_ids.h"

namespace nodeprobe::diag {
namespace {

struct Sample {
  std::string file;
  Json spec;
};

std::vector<Sample> load() {
  std::ifstream in(std::string(NODEPROBE_DIAG_CORPUS) + "/manifest.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const Json m = Json::parse(ss.str());
  std::vector<Sample> out;
  for (const auto& s : m.at("samples")) out.push_back({s.at("file").get<std::string>(), s});
  return out;
}

void PrintTo(const Sample& s, std::ostream* os) { *os << s.file; }

std::string test_name(const ::testing::TestParamInfo<Sample>& info) {
  std::string n = info.param.file;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

bool fact_matches(const Json& have, const std::string& want) {
  if (have.is_string()) return have.get<std::string>() == want;
  if (have.is_array())
    for (const auto& v : have)
      if (v.is_string() && v.get<std::string>() == want) return true;
  return false;
}

class Corpus : public ::testing::TestWithParam<Sample> {};

TEST_P(Corpus, Sample) {
  const Sample& s = GetParam();
  const Json& spec = s.spec;
  ASSERT_TRUE(spec.contains("source") && !spec.at("source").get<std::string>().empty()) << "provenance URL required";
  DiagInputs in;
  in.logs = {std::string(NODEPROBE_DIAG_CORPUS) + "/" + s.file};
  in.expect = spec.value("instance_type", std::string());
  in.now = 1764432000;
  Report rep;
  const DiagOutcome out = diagnose(rep, in);
  ASSERT_TRUE(out.input_errors.empty()) << out.input_errors.front();
  std::string got;
  for (const auto& f : rep.findings) got += f.id + "/" + std::string(to_string(f.severity)) + " ";
  SCOPED_TRACE("findings: " + got);
  if (spec.value("healthy", false)) {
    for (const auto& f : rep.findings) {
      EXPECT_EQ(f.severity, Severity::kInfo) << f.id << ": " << f.title;
    }
  }
  if (spec.contains("expect")) {
    for (const auto& e : spec.at("expect")) {
      const std::string id = e.at("id").get<std::string>();
      bool found = false;
      for (const auto& f : rep.findings) {
        if (f.id != id) continue;
        if (e.contains("severity") && std::string(to_string(f.severity)) != e.at("severity").get<std::string>()) continue;
        bool facts = true;
        if (e.contains("facts"))
          for (const auto& kv : e.at("facts").items())
            facts &= f.facts.contains(kv.key()) && fact_matches(f.facts.at(kv.key()), kv.value().get<std::string>());
        if (!facts) continue;
        if (e.contains("title_contains") &&
            f.title.find(e.at("title_contains").get<std::string>()) == std::string::npos)
          continue;
        found = true;
        EXPECT_FALSE(f.remedy.empty()) << id;
        EXPECT_FALSE(f.evidence.empty()) << id;
      }
      EXPECT_TRUE(found) << "expected " << e.dump();
    }
  }
  if (spec.contains("forbid")) {
    for (const auto& id : spec.at("forbid")) {
      for (const auto& f : rep.findings) EXPECT_NE(f.id, id.get<std::string>()) << f.title;
    }
  }
  if (spec.contains("max_severity")) {
    const Severity max = severity_from_string(spec.at("max_severity").get<std::string>());
    for (const auto& f : rep.findings) EXPECT_LE(severity_rank(f.severity), severity_rank(max)) << f.id;
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, Corpus, ::testing::ValuesIn(load()), test_name);

TEST(CorpusCoverage, AtLeastSixtyFailureSamplesCoveringEveryIdAndHealthyLogs) {
  int failures = 0, healthy = 0;
  std::set<std::string> ids;
  std::set<std::string> healthy_kinds;
  for (const auto& s : load()) {
    if (s.spec.value("healthy", false)) {
      ++healthy;
      continue;
    }
    ++failures;
    if (s.spec.contains("expect"))
      for (const auto& e : s.spec.at("expect")) ids.insert(e.at("id").get<std::string>());
  }
  EXPECT_GE(failures, 60);
  EXPECT_GE(healthy, 6);
  for (const auto& k : finding_vocabulary()) EXPECT_TRUE(ids.count(std::string(k.id))) << "no sample for " << k.id;
}

}  // namespace
}  // namespace nodeprobe::diag
