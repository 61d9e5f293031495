// The message catalogue (tests/diag/catalogue.json): one line per message
// family as its source emits it must give its finding id (and cause); every
// rule's look-alikes must not fire it; the built-in rules load and validate.
// Prints the coverage per finding id (catalogue lines, rules, patterns).
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "nodeprobe/finding_ids.h"
#include "playbook.h"
#include "rule_engine.h"
#include "rules.h"

namespace nodeprobe::diag {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Entry {
  std::string id, cause, line, src;
};

std::vector<Entry> catalogue() {
  const Json j = Json::parse(slurp(std::string(NODEPROBE_DIAG_CATALOGUE)));
  std::vector<Entry> out;
  for (const auto& e : j.at("entries"))
    out.push_back({e.at("id").get<std::string>(), e.value("cause", std::string()), e.at("line").get<std::string>(),
                   e.at("src").get<std::string>()});
  return out;
}

RuleEngine& engine() {
  static RuleEngine e(default_playbook());
  return e;
}

SourceResult run(const std::string& text) {
  AnalysisOptions opt;
  opt.time.now = 1764432000;
  const std::string doc = text + "\n";  // the reader views it: it must outlive the analysis
  LineBlockReader reader(doc, "catalogue");
  return engine().analyze(reader, "catalogue", opt);
}

TEST(Catalogue, EveryMessageFamilyGivesItsFinding) {
  std::map<std::string, int> lines_per_id;
  for (const auto& e : catalogue()) {
    SCOPED_TRACE(e.src + ": " + e.line);
    ASSERT_NE(find_finding_kind(e.id), nullptr) << e.id;
    const SourceResult r = run(e.line);
    bool found = false;
    std::string got;
    for (const auto& [k, a] : r.findings.all()) {
      got += k.id + "/" + k.cause + " ";
      if (k.id == e.id && (e.cause.empty() || k.cause == e.cause)) found = true;
    }
    EXPECT_TRUE(found) << "expected " << e.id << (e.cause.empty() ? "" : "/" + e.cause) << ", got: " << got;
    ++lines_per_id[e.id];
  }
  // Coverage per id: what the catalogue exercises and what the rules hold.
  std::map<std::string, std::pair<int, int>> rules_per_id;  // rules, patterns
  for (const auto& r : default_rules().rules())
    if (!r.finding.empty()) {
      ++rules_per_id[r.finding].first;
      rules_per_id[r.finding].second += static_cast<int>(r.patterns.size());
    }
  std::cout << "catalogue coverage (id: catalogue lines, rules, patterns)\n";
  for (const auto& k : finding_vocabulary()) {
    const std::string id(k.id);
    std::cout << "  " << id << ": " << lines_per_id[id] << ", " << rules_per_id[id].first << ", "
              << rules_per_id[id].second << (rules_per_id[id].first ? "" : "  (structured outputs / probes only)") << "\n";
  }
}

TEST(Catalogue, LookAlikesDoNotFireTheirRule) {
  int n = 0;
  for (const auto& rule : default_rules().rules()) {
    for (const auto& l : rule.lookalikes) {
      ++n;
      const SourceResult r = run(l);
      EXPECT_EQ(r.fired.count(rule.key), 0u) << rule.key << " fired on its look-alike: " << l;
    }
  }
  EXPECT_GE(n, 10);
}

TEST(Catalogue, EveryPatternCitesItsSourceAndEveryRuleIsReachable) {
  std::set<std::string> cited;
  for (const auto& rule : default_rules().rules()) {
    for (const auto& p : rule.patterns) EXPECT_FALSE(p.src.empty()) << rule.key << ": " << p.re;
  }
  // Every finding id a rule raises has at least one catalogue line.
  std::set<std::string> in_catalogue;
  for (const auto& e : catalogue()) in_catalogue.insert(e.id);
  for (const auto& rule : default_rules().rules())
    if (!rule.finding.empty()) {
      EXPECT_TRUE(in_catalogue.count(rule.finding)) << rule.key << " -> " << rule.finding;
    }
}

TEST(Catalogue, ScannerHasAnAtomForEveryPattern) {
  // A pattern without a literal atom is screened on every block: slow. None may exist.
  EXPECT_TRUE(engine().scanner()->unfiltered().empty());
}

}  // namespace
}  // namespace nodeprobe::diag

namespace nodeprobe::diag {
namespace {

std::string rules_file() { return slurp(std::string(NODEPROBE_PLAYBOOK_DIR) + "/rules.json"); }

TEST(RulesData, EmbeddedCopyIsTheSourceFileAndValid) {
  EXPECT_EQ(std::string(embedded_rules_json()), rules_file());
  EXPECT_NO_THROW(RuleSet::parse(rules_file(), "rules.json", default_playbook()));
  EXPECT_GE(default_rules().rules().size(), 90u);
}

std::string one_rule(const std::string& body) {
  return R"J({"schema": "nodeprobe.rules/1", "rules": [)J" + body + "]}";
}

TEST(RulesData, ValidationNamesTheRuleAndTheProblem) {
  const Playbook& pb = default_playbook();
  auto err = [&](const std::string& doc) {
    try {
      RuleSet::parse(doc, "site.json", pb);
    } catch (const RulesError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string ok = R"J({"key": "site.x", "finding": "gpu.xid", "patterns": [{"re": "MY DRIVER DIED", "src": "our wrapper"}]})J";
  EXPECT_EQ(err(one_rule(ok)), "");
  EXPECT_NE(err("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(err(R"J({"schema": "x", "rules": []})J").find("schema"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.nope", "patterns": [{"re": "x", "src": "s"}]})J")).find("unknown finding id 'gpu.nope'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "cause": "nope", "patterns": [{"re": "xyz", "src": "s"}]})J")).find("no cause 'nope'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "x[0-9]+\\d", "src": "s"}]})J")).find("\\d"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "(?:ab)c", "src": "s"}]})J")).find("(?"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "abc"}]})J")).find("lacks 'src'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "a(bc", "src": "s"}]})J")).find("does not compile"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "extract": ["(x)"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("no named group"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "colour": "red", "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "suppressed_by": ["z.z"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown rule 'z.z'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "judge": "magic", "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown judge"), std::string::npos);
  EXPECT_NE(err(one_rule(ok + "," + ok)).find("duplicate rule key"), std::string::npos);
}

TEST(RulesData, SiteRulesAddToTheBuiltInOnesAndFire) {
  RuleSet set = default_rules();
  const std::string site = one_rule(
      R"J({"key": "site.scheduler_preempt", "finding": "nccl.timeout", "patterns": [{"re": "SPOT PREEMPTION NOTICE", "src": "our scheduler"}],
          "extract": ["rank=(?P<rank>[0-9]+)"]})J");
  set.add(RuleSet::parse(site, "site.json", default_playbook()));
  EXPECT_THROW(set.add(RuleSet::parse(site, "again.json", default_playbook())), RulesError);  // same key twice
  RuleEngine e(default_playbook(), set);
  AnalysisOptions opt;
  opt.time.now = 1764432000;
  const std::string doc = "x SPOT PREEMPTION NOTICE rank=7\n";
  LineBlockReader reader(doc, "t");
  const SourceResult r = e.analyze(reader, "t", opt);
  ASSERT_TRUE(r.findings.has("nccl.timeout"));
  EXPECT_EQ(r.findings.all().begin()->second.facts.value("rank", std::string()), "7");
}

}  // namespace
}  // namespace nodeprobe::diag
