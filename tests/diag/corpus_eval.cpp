#include "corpus_eval.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "diagnose.h"
#include "finding_set.h"
#include "playbook.h"
#include "rule_engine.h"

namespace nodeprobe::diag::corpus {
namespace {

// The corpus is judged at a fixed instant so `--since`-style windows and
// "seen" times never depend on the day the tests run.
constexpr double kCorpusNow = 1764432000;

bool fact_matches(const Json& have, const std::string& want) {
  if (have.is_string()) return have.get<std::string>() == want;
  if (have.is_array())
    for (const auto& v : have)
      if (v.is_string() && v.get<std::string>() == want) return true;
  return false;
}

std::string id_sev(const Finding& f) { return f.id + "/" + std::string(to_string(f.severity)); }

ExpectResult judge(const Json& e, const Report& rep) {
  ExpectResult r;
  r.id = e.at("id").get<std::string>();
  r.want = r.id + "/" + e.value("severity", std::string("*"));
  if (e.contains("cause") && e.at("cause").is_string()) r.cause = e.at("cause").get<std::string>();
  for (const auto& f : rep.findings) {
    if (f.id != r.id) continue;
    r.named = true;
    if (!r.cause.empty() && f.facts.is_object() && f.facts.contains("cause") && fact_matches(f.facts.at("cause"), r.cause))
      r.cause_named = true;
    if (e.contains("severity") && std::string(to_string(f.severity)) != e.at("severity").get<std::string>()) continue;
    bool facts = true;
    if (e.contains("facts"))
      for (const auto& kv : e.at("facts").items())
        facts &= f.facts.contains(kv.key()) && fact_matches(f.facts.at(kv.key()), kv.value().get<std::string>());
    if (!facts) continue;
    if (e.contains("title_contains") && f.title.find(e.at("title_contains").get<std::string>()) == std::string::npos)
      continue;
    if (f.remedy.empty() || f.evidence.empty()) continue;  // a cause without evidence or a fix is not an answer
    r.exact = true;
  }
  return r;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::string percent(int part, int whole) {
  if (whole == 0) return "-";
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(0);
  os << 100.0 * part / whole << "%";
  return os.str();
}

}  // namespace

Json load_manifest_json(const std::string& corpus_dir) {
  const std::string path = corpus_dir + "/manifest.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  Json m;
  try {
    m = Json::parse(ss.str());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
  if (m.value("schema", std::string()) != "nodeprobe.corpus/1" || !m.contains("samples") || !m.at("samples").is_array())
    throw std::runtime_error(path + ": not a nodeprobe.corpus/1 manifest");
  return m;
}

std::vector<Sample> load_manifest(const std::string& corpus_dir) {
  const Json m = load_manifest_json(corpus_dir);  // named: a range over a temporary's member would dangle
  std::vector<Sample> out;
  for (const auto& s : m.at("samples")) out.push_back({s.at("file").get<std::string>(), s});
  return out;
}

bool SampleResult::passed() const {
  if (!input_errors.empty() || !forbidden_raised.empty() || !over_max.empty() || !false_alarms.empty()) return false;
  return std::all_of(expects.begin(), expects.end(), [](const ExpectResult& e) { return e.exact; });
}

std::string SampleResult::got_text() const { return got.empty() ? "(nothing)" : join(got); }

namespace {
// One compilation of the built-in rules for every sample: diagnose() would
// otherwise compile them per log (most of the time of judging a sample).
RuleEngine& shared_engine() {
  static RuleEngine e(default_playbook());
  return e;
}
}  // namespace

SampleResult evaluate(const std::string& corpus_dir, const Sample& s) {
  const Json& spec = s.spec;
  SampleResult r;
  r.file = s.file;
  r.healthy = spec.value("healthy", false);
  r.batch = spec.value("batch", std::string());
  r.known_miss = spec.value("known_miss", std::string());
  if (spec.contains("cause_in_log")) {
    const Json& c = spec.at("cause_in_log");
    r.cause_in_log = c.is_string() && !c.get<std::string>().empty() ? SampleResult::CauseInLog::kShown
                                                                     : SampleResult::CauseInLog::kOnlyInThread;
  }

  DiagInputs in;
  in.logs = {corpus_dir + "/" + s.file};
  in.expect = spec.value("instance_type", std::string());
  in.now = kCorpusNow;
  in.engine = &shared_engine();
  Report rep;
  const DiagOutcome out = diagnose(rep, in);
  r.input_errors = out.input_errors;

  for (const auto& f : rep.findings) {
    r.got.push_back(id_sev(f));
    if (r.healthy && f.severity != Severity::kInfo) r.false_alarms.push_back(id_sev(f));
  }
  if (spec.contains("expect"))
    for (const auto& e : spec.at("expect")) r.expects.push_back(judge(e, rep));
  if (spec.contains("forbid"))
    for (const auto& id : spec.at("forbid"))
      for (const auto& f : rep.findings)
        if (f.id == id.get<std::string>()) r.forbidden_raised.push_back(id_sev(f));
  if (spec.contains("max_severity")) {
    const int max = severity_rank(severity_from_string(spec.at("max_severity").get<std::string>()));
    for (const auto& f : rep.findings)
      if (severity_rank(f.severity) > max) r.over_max.push_back(id_sev(f));
  }
  return r;
}

Recall tally(const std::vector<SampleResult>& results) {
  Recall r;
  r.total.id = "total";
  std::map<std::string, ClassTally> by_id;
  for (const auto& s : results) {
    if (!s.known_miss.empty()) {
      ++r.known_miss_marked;
      if (s.passed()) ++r.stale_marks;
    }
    if (!s.forbidden_raised.empty()) ++r.forbidden_raised;
    if (s.healthy) {
      ++r.healthy_samples;
      if (!s.false_alarms.empty()) ++r.healthy_false_alarms;
      continue;
    }
    if (s.expects.empty()) continue;  // a failure-folder negative (only `forbid`): no class to recall
    ++r.failure_samples;
    bool all_named = true;
    for (const auto& e : s.expects) {
      ClassTally& t = by_id[e.id];
      t.id = e.id;
      ++t.expected;
      ++r.total.expected;
      if (e.named) ++t.named, ++r.total.named;
      if (e.exact) ++t.exact, ++r.total.exact;
      if (e.named && !e.cause.empty()) ++r.causes_given_named, r.causes_agreed += e.cause_named;
      all_named &= e.named;
    }
    if (all_named) ++r.failure_samples_named;
    if (s.cause_in_log == SampleResult::CauseInLog::kShown) ++r.shown_samples, r.shown_named += all_named;
    if (s.cause_in_log == SampleResult::CauseInLog::kOnlyInThread)
      ++r.thread_only_samples, r.thread_only_named += all_named;
  }
  for (auto& [id, t] : by_id) r.classes.push_back(t);
  return r;
}

std::string render_recall(const Recall& r, const std::vector<SampleResult>& results, const std::string& title) {
  std::ostringstream os;
  os << title << "\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-30s %8s %6s %6s %8s %8s\n", "class", "expected", "named", "exact", "recall",
                "exact%");
  os << line;
  auto row = [&](const ClassTally& t) {
    std::snprintf(line, sizeof line, "%-30s %8d %6d %6d %8s %8s\n", t.id.c_str(), t.expected, t.named, t.exact,
                  percent(t.named, t.expected).c_str(), percent(t.exact, t.expected).c_str());
    os << line;
  };
  for (const auto& t : r.classes) row(t);
  row(r.total);
  os << "failure samples: " << r.failure_samples << ", every expected cause named in " << r.failure_samples_named
     << " (" << percent(r.failure_samples_named, r.failure_samples) << ")\n";
  if (r.shown_samples + r.thread_only_samples > 0)
    os << "  where the collector judged the excerpt shows the cause: " << r.shown_named << " of " << r.shown_samples
       << " (" << percent(r.shown_named, r.shown_samples) << "); only in the thread: " << r.thread_only_named << " of "
       << r.thread_only_samples << " (" << percent(r.thread_only_named, r.thread_only_samples) << ")\n";
  if (r.causes_given_named > 0)
    os << "  named with the cause the manifest gives: " << r.causes_agreed << " of " << r.causes_given_named << " ("
       << percent(r.causes_agreed, r.causes_given_named) << ")\n";
  os << "healthy samples: " << r.healthy_samples << ", false alarms (warn/error): " << r.healthy_false_alarms << "\n";
  os << "samples raising a forbidden id: " << r.forbidden_raised << "\n";
  os << "marked known_miss: " << r.known_miss_marked << ", stale marks (now passing): " << r.stale_marks << "\n";

  bool header = false;
  for (const auto& s : results) {
    if (s.passed()) continue;
    if (!header) os << "not as the manifest says:\n", header = true;
    std::string want;
    for (const auto& e : s.expects)
      if (!e.exact) want += (want.empty() ? "" : " ") + e.want + (e.named ? "(named, not exact)" : "");
    if (!s.false_alarms.empty()) want += (want.empty() ? "" : " ") + std::string("healthy");
    if (!s.forbidden_raised.empty()) want += (want.empty() ? "" : " ") + ("forbid:" + join(s.forbidden_raised));
    if (!s.over_max.empty()) want += (want.empty() ? "" : " ") + ("over max_severity:" + join(s.over_max));
    if (!s.input_errors.empty()) want += (want.empty() ? "" : " ") + ("input error:" + s.input_errors.front());
    os << "  " << s.file << "\n    wanted: " << want << "\n    got:    " << s.got_text() << "\n";
    if (!s.known_miss.empty()) os << "    known_miss: " << s.known_miss << "\n";
  }
  return os.str();
}

Json recall_to_json(const Recall& r, const std::vector<SampleResult>& results) {
  Json j;
  j["schema"] = "nodeprobe.corpus-recall/1";
  auto tally_json = [](const ClassTally& t) {
    return Json{{"id", t.id}, {"expected", t.expected}, {"named", t.named}, {"exact", t.exact}};
  };
  j["classes"] = Json::array();
  for (const auto& t : r.classes) j["classes"].push_back(tally_json(t));
  j["total"] = tally_json(r.total);
  j["failure_samples"] = r.failure_samples;
  j["failure_samples_named"] = r.failure_samples_named;
  j["cause_shown_samples"] = r.shown_samples;
  j["cause_shown_named"] = r.shown_named;
  j["cause_thread_only_samples"] = r.thread_only_samples;
  j["cause_thread_only_named"] = r.thread_only_named;
  j["causes_given_named"] = r.causes_given_named;
  j["causes_agreed"] = r.causes_agreed;
  j["healthy_samples"] = r.healthy_samples;
  j["healthy_false_alarms"] = r.healthy_false_alarms;
  j["forbidden_raised"] = r.forbidden_raised;
  j["known_miss_marked"] = r.known_miss_marked;
  j["stale_marks"] = r.stale_marks;
  j["samples"] = Json::array();
  for (const auto& s : results) {
    Json e{{"file", s.file}, {"passed", s.passed()}, {"got", s.got}};
    e["expect"] = Json::array();
    for (const auto& x : s.expects) {
      Json w{{"want", x.want}, {"named", x.named}, {"exact", x.exact}};
      if (!x.cause.empty()) w["cause"] = x.cause, w["cause_named"] = x.cause_named;
      e["expect"].push_back(std::move(w));
    }
    if (!s.known_miss.empty()) e["known_miss"] = s.known_miss;
    if (!s.false_alarms.empty()) e["false_alarms"] = s.false_alarms;
    if (!s.forbidden_raised.empty()) e["forbidden_raised"] = s.forbidden_raised;
    j["samples"].push_back(std::move(e));
  }
  return j;
}

}  // namespace nodeprobe::diag::corpus
