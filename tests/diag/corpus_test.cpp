// The accuracy corpus (tests/diag/corpus/manifest.json): every failure
// sample raises its findings with the expected severity and facts, never the
// forbidden ones; healthy samples raise nothing above info. A sample marked
// "known_miss" (a real log the current rules get wrong, kept as their input)
// is reported as skipped with what the rules said, and fails once it passes so
// the stale mark is removed. nodeprobe-corpus-recall prints recall per class
// from the same evaluation (corpus_eval.h).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "corpus_eval.h"
#include "nodeprobe/finding_ids.h"

namespace nodeprobe::diag::corpus {

// Found by gtest through argument-dependent lookup: names a failing case by its file.
void PrintTo(const Sample& s, std::ostream* os) { *os << s.file; }

namespace {

std::vector<Sample> samples() { return load_manifest(NODEPROBE_DIAG_CORPUS); }

SampleResult result_for(std::string file) {
  SampleResult r;
  r.file = std::move(file);
  return r;
}

std::string test_name(const ::testing::TestParamInfo<Sample>& info) {
  std::string n = info.param.file;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

class Corpus : public ::testing::TestWithParam<Sample> {};

// Judges one sample of the corpus at `dir` (also diag/bench/source_messages).
void judge(const std::string& dir, const Sample& s) {
  ASSERT_TRUE(s.spec.contains("source") && !s.spec.at("source").get<std::string>().empty())
      << "provenance URL required";
  const SampleResult r = evaluate(dir, s);
  ASSERT_TRUE(r.input_errors.empty()) << r.input_errors.front();
  if (!r.known_miss.empty()) {
    ASSERT_FALSE(r.passed()) << "marked known_miss but the rules now get it right: remove the mark";
    GTEST_SKIP() << "known miss (" << r.known_miss << "); rules said: " << r.got_text();
  }
  SCOPED_TRACE("findings: " + r.got_text());
  for (const auto& a : r.false_alarms) ADD_FAILURE() << "healthy sample raised " << a;
  for (const auto& e : r.expects)
    EXPECT_TRUE(e.exact) << "expected " << e.want << (e.named ? " (id raised, severity/facts/evidence differ)" : "");
  for (const auto& f : r.forbidden_raised) ADD_FAILURE() << "forbidden finding raised: " << f;
  for (const auto& f : r.over_max) ADD_FAILURE() << "above max_severity: " << f;
}

TEST_P(Corpus, Sample) { judge(NODEPROBE_DIAG_CORPUS, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Samples, Corpus, ::testing::ValuesIn(samples()), test_name);

// Failure messages as their source code emits them (diag/bench/source_messages,
// read from public source by collectors blind to the rules): each line gives
// its finding, each look-alike stays quiet, or the line is a known_miss with
// its reason.
class SourceMessages : public ::testing::TestWithParam<Sample> {};

TEST_P(SourceMessages, Line) { judge(NODEPROBE_SOURCE_MESSAGES, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Emitted, SourceMessages, ::testing::ValuesIn(load_manifest(NODEPROBE_SOURCE_MESSAGES)),
                         test_name);

TEST(CorpusCoverage, AtLeastSixtyFailureSamplesCoveringEveryIdAndHealthyLogs) {
  int failures = 0, healthy = 0;
  std::set<std::string> ids;
  for (const auto& s : samples()) {
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
  // fleet.outlier is a judgement across the nodes of a fleet (nodeprobe fleet), never read from one log;
  // job.unexplained_failure is never a sample's expected cause: it is what a log shows when no node-level
  // cause is in it (healthy samples of failed jobs raise it;
  // DiagCli.AFailedJobWithNoNodeCauseIsNamedAndExplainedOnesAreNot checks it on a real one).
  const std::set<std::string> not_from_logs = {"fleet.outlier", "job.unexplained_failure"};
  for (const auto& k : finding_vocabulary())
    if (!not_from_logs.count(std::string(k.id))) {
      EXPECT_TRUE(ids.count(std::string(k.id))) << "no sample for " << k.id;
    }
}

// Issue 13's unseen-log batch: at least 100 samples, at least 20 of them
// healthy look-alikes, each from a thread no earlier sample used, each with a
// known_miss reason that says something when it is marked.
TEST(CorpusCoverage, UnseenBatchIsLargeAndUsesNewSources) {
  std::map<std::string, std::string> earlier;  // source -> file, for samples outside the batch
  int batch = 0, healthy = 0;
  for (const auto& s : samples())
    if (s.spec.value("batch", std::string()) != "issue13") earlier[s.spec.at("source").get<std::string>()] = s.file;
  std::set<std::string> seen;
  for (const auto& s : samples()) {
    if (s.spec.value("batch", std::string()) != "issue13") continue;
    ++batch;
    healthy += s.spec.value("healthy", false) ? 1 : 0;
    const std::string src = s.spec.at("source").get<std::string>();
    EXPECT_EQ(earlier.count(src), 0u) << s.file << " reuses the source of " << earlier[src];
    EXPECT_TRUE(seen.insert(src).second) << s.file << ": two samples of the batch from one thread";
    if (s.spec.contains("known_miss")) {
      EXPECT_GE(s.spec.at("known_miss").get<std::string>().size(), 10u) << s.file;
    }
  }
  EXPECT_GE(batch, 100);
  EXPECT_GE(healthy, 20);
}

// The held-out sets of issue 13 (batches "heldout-A" to the newest), each
// collected blind and measured once, unseen, before any tuning (docs/diag.md,
// "Accuracy"): the manifest's `batches` table lists every one with the size it
// had when measured, so no batch loses samples, and every thread a held-out
// sample uses is used by that sample only, so the numbers measured on them were
// measured on logs nothing else in the corpus came from.
TEST(CorpusCoverage, HeldOutSetsKeepTheirSizeAndUseThreadsNoOtherSampleUses) {
  const Json manifest = load_manifest_json(NODEPROBE_DIAG_CORPUS);
  ASSERT_TRUE(manifest.contains("batches") && manifest.at("batches").is_object());
  const Json& batches = manifest.at("batches");
  const Json& all = manifest.at("samples");
  std::map<std::string, int> uses;  // source -> samples citing it
  std::map<std::string, int> size, healthy;
  for (const auto& s : all) {
    ++uses[s.at("source").get<std::string>()];
    const std::string batch = s.value("batch", std::string());
    if (batch.rfind("heldout-", 0) != 0) continue;
    EXPECT_TRUE(batches.contains(batch)) << s.at("file") << ": batch " << batch << " is not in the manifest's batches";
    ++size[batch];
    healthy[batch] += s.value("healthy", false) ? 1 : 0;
  }
  for (const auto& s : all) {
    if (s.value("batch", std::string()).rfind("heldout-", 0) != 0) continue;
    EXPECT_EQ(uses[s.at("source").get<std::string>()], 1) << s.at("file") << ": its thread is cited elsewhere too";
    if (s.contains("known_miss")) {
      EXPECT_GE(s.at("known_miss").get<std::string>().size(), 10u) << s.at("file");
    }
  }
  EXPECT_GE(batches.size(), 56u);  // A to BD when the table moved into the manifest
  for (const auto& [batch, want] : batches.items()) {
    EXPECT_GE(size[batch], want.at("samples_at_least").get<int>()) << batch;
    EXPECT_GE(healthy[batch], want.value("healthy_at_least", 0)) << batch;
  }
}

ExpectResult expect(const std::string& id, const std::string& want, bool named, bool exact,
                    const std::string& cause = "", bool cause_named = false) {
  ExpectResult e;
  e.id = id;
  e.want = want;
  e.named = named;
  e.exact = exact;
  e.cause = cause;
  e.cause_named = cause_named;
  return e;
}

// The recall tally itself, on hand-made results: named vs exact, healthy
// false alarms, stale known_miss marks.
TEST(CorpusRecall, TalliesNamedExactFalseAlarmsAndStaleMarks) {
  SampleResult hit = result_for("a.log");
  hit.expects = {expect("nccl.timeout", "nccl.timeout/error", true, true)};
  SampleResult wrong_sev = result_for("b.log");
  wrong_sev.expects = {expect("nccl.timeout", "nccl.timeout/error", true, false)};
  SampleResult missed = result_for("c.log");
  missed.expects = {expect("gpu.xid", "gpu.xid/error", false, false)};
  missed.known_miss = "Xid wording X";
  SampleResult stale = result_for("d.log");
  stale.expects = {expect("gpu.xid", "gpu.xid/*", true, true)};
  stale.known_miss = "was missed once";
  SampleResult quiet = result_for("e.log");
  quiet.healthy = true;
  SampleResult noisy = result_for("f.log");
  noisy.healthy = true;
  noisy.false_alarms = {"selinux.avc/warn"};
  const Recall r = tally({hit, wrong_sev, missed, stale, quiet, noisy});
  ASSERT_EQ(r.classes.size(), 2u);
  EXPECT_EQ(r.classes[0].id, "gpu.xid");
  EXPECT_EQ(r.classes[0].expected, 2);
  EXPECT_EQ(r.classes[0].named, 1);
  EXPECT_EQ(r.classes[1].id, "nccl.timeout");
  EXPECT_EQ(r.classes[1].named, 2);
  EXPECT_EQ(r.classes[1].exact, 1);
  EXPECT_EQ(r.total.expected, 4);
  EXPECT_EQ(r.failure_samples, 4);
  EXPECT_EQ(r.failure_samples_named, 3);
  EXPECT_EQ(r.healthy_samples, 2);
  EXPECT_EQ(r.healthy_false_alarms, 1);
  EXPECT_EQ(r.known_miss_marked, 2);
  EXPECT_EQ(r.stale_marks, 1);
  const std::string text = render_recall(r, {hit, wrong_sev, missed, stale, quiet, noisy}, "t");
  EXPECT_NE(text.find("c.log"), std::string::npos);
  EXPECT_NE(text.find("known_miss: Xid wording X"), std::string::npos);
  EXPECT_NE(text.find("f.log"), std::string::npos);
  EXPECT_EQ(text.find("a.log"), std::string::npos) << "a passing sample is not listed";
  EXPECT_EQ(recall_to_json(r, {hit}).at("schema"), "nodeprobe.corpus-recall/1");
  EXPECT_EQ(text.find("excerpt shows the cause"), std::string::npos) << "no stratum without cause_in_log";
  EXPECT_EQ(text.find("named with the cause"), std::string::npos) << "no cause line where no manifest cause was named";
  // Causes: counted over the expectations named by id that give one.
  SampleResult agreed = result_for("g.log");
  agreed.expects = {expect("gpu.oom", "gpu.oom/*", true, true, "pinned_host", true)};
  SampleResult other_cause = result_for("h.log");
  other_cause.expects = {expect("net.unreachable", "net.unreachable/*", true, true, "dns", false)};
  SampleResult unnamed = result_for("i.log");
  unnamed.expects = {expect("host.oom", "host.oom/*", false, false, "killed_signal", false)};
  const Recall c = tally({agreed, other_cause, unnamed, hit});
  EXPECT_EQ(c.causes_given_named, 2);
  EXPECT_EQ(c.causes_agreed, 1);
  EXPECT_NE(render_recall(c, {agreed, other_cause, unnamed, hit}, "t").find("named with the cause the manifest gives: 1 of 2"),
            std::string::npos);
  EXPECT_EQ(recall_to_json(c, {agreed}).at("causes_agreed"), 1);
}

// The collectors' cause_in_log judgement splits the failures: recall where the
// excerpt shows the cause, and where only the thread names it.
TEST(CorpusRecall, SplitsRecallByWhetherTheExcerptShowsTheCause) {
  SampleResult shown_hit = result_for("a.log");
  shown_hit.expects = {expect("gpu.oom", "gpu.oom/*", true, true)};
  shown_hit.cause_in_log = SampleResult::CauseInLog::kShown;
  SampleResult shown_miss = result_for("b.log");
  shown_miss.expects = {expect("gpu.oom", "gpu.oom/*", false, false)};
  shown_miss.cause_in_log = SampleResult::CauseInLog::kShown;
  SampleResult thread_miss = result_for("c.log");
  thread_miss.expects = {expect("host.oom", "host.oom/*", false, false)};
  thread_miss.cause_in_log = SampleResult::CauseInLog::kOnlyInThread;
  SampleResult unjudged = result_for("d.log");
  unjudged.expects = {expect("host.oom", "host.oom/*", true, true)};
  const std::vector<SampleResult> all = {shown_hit, shown_miss, thread_miss, unjudged};
  const Recall r = tally(all);
  EXPECT_EQ(r.shown_samples, 2);
  EXPECT_EQ(r.shown_named, 1);
  EXPECT_EQ(r.thread_only_samples, 1);
  EXPECT_EQ(r.thread_only_named, 0);
  EXPECT_EQ(r.failure_samples, 4);
  EXPECT_NE(render_recall(r, all, "t").find("excerpt shows the cause: 1 of 2 (50%); only in the thread: 0 of 1 (0%)"),
            std::string::npos);
  EXPECT_EQ(recall_to_json(r, all).at("cause_shown_samples"), 2);
}

}  // namespace
}  // namespace nodeprobe::diag::corpus
