#pragma once
/// The accuracy corpus (tests/diag/corpus/manifest.json), judged one way for
/// both the ctest cases (corpus_test.cpp) and the recall measurement
/// (nodeprobe-corpus-recall): load the manifest, diagnose one sample, compare
/// the findings with what its thread confirmed, and tally recall per class.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::diag::corpus {

/// One manifest entry: the file (relative to the corpus directory) and its spec.
struct Sample {
  std::string file;
  Json spec;
};

/// Loads `<corpus_dir>/manifest.json`; throws std::runtime_error with a
/// one-line reason when it is missing or not the nodeprobe.corpus/1 schema.
std::vector<Sample> load_manifest(const std::string& corpus_dir);

/// The same manifest whole (its `batches` table and `samples`), with the same checks.
Json load_manifest_json(const std::string& corpus_dir);

/// One `expect` entry of a sample against the findings.
struct ExpectResult {
  std::string id;
  std::string want;       ///< "id/severity" as the manifest asks ("id/*" without a severity)
  bool named = false;     ///< a finding with this id was raised (any severity): the cause was named
  bool exact = false;     ///< one also matched severity, facts and title, with evidence and a remedy
  std::string cause;      ///< the manifest's cause ("" where it names none)
  bool cause_named = false;  ///< a finding with this id also had this cause
};

/// One sample diagnosed.
struct SampleResult {
  std::string file;
  bool healthy = false;
  std::string batch;                         ///< "" for the samples written with the first rules
  std::string known_miss;                    ///< the manifest's reason; "" when not marked
  /// The collector's judgement, made before the sample was measured, of
  /// whether the excerpt itself shows the cause (manifest `cause_in_log`:
  /// the quoted lines, or null): kUnknown where the manifest does not say.
  enum class CauseInLog { kUnknown, kShown, kOnlyInThread } cause_in_log = CauseInLog::kUnknown;
  std::vector<std::string> got;              ///< every finding as "id/severity"
  std::vector<ExpectResult> expects;
  std::vector<std::string> forbidden_raised; ///< `forbid` ids that were raised anyway
  std::vector<std::string> over_max;         ///< "id/severity" above `max_severity`
  std::vector<std::string> false_alarms;     ///< healthy samples: findings of warn or error
  std::vector<std::string> input_errors;
  bool passed() const;                       ///< everything the manifest asks for holds
  std::string got_text() const;              ///< "id/sev id/sev" or "(nothing)"
};

/// Diagnoses one sample exactly as the ctest case does (fixed clock, the
/// sample's instance_type as --expect) and judges it.
SampleResult evaluate(const std::string& corpus_dir, const Sample& s);

/// Per finding class: how many expectations, how many named, how many exact.
struct ClassTally {
  std::string id;
  int expected = 0;
  int named = 0;
  int exact = 0;
};

/// Recall over a set of results: per class, totals, healthy false alarms.
struct Recall {
  std::vector<ClassTally> classes;   ///< sorted by id
  ClassTally total;                  ///< id "total"
  int failure_samples = 0;
  int failure_samples_named = 0;     ///< every expected class named
  int healthy_samples = 0;
  int healthy_false_alarms = 0;      ///< healthy samples with at least one warn/error finding
  int forbidden_raised = 0;          ///< samples that raised a forbidden id
  int shown_samples = 0;             ///< failures whose excerpt shows the cause (cause_in_log quoted)
  int shown_named = 0;
  int thread_only_samples = 0;       ///< failures whose cause only the thread names (cause_in_log null)
  int thread_only_named = 0;
  int known_miss_marked = 0;
  int stale_marks = 0;               ///< marked known_miss but now passing
  /// Of the expectations named by id whose manifest entry gives a cause,
  /// how many were named with that cause (recall itself counts the id: a
  /// collector's cause is a finer label than the finding).
  int causes_given_named = 0;
  int causes_agreed = 0;
};

Recall tally(const std::vector<SampleResult>& results);

/// The text report nodeprobe-corpus-recall prints: the per-class table, the
/// healthy line, then one line per miss (file, expected, what the tool said,
/// the known_miss reason).
std::string render_recall(const Recall& r, const std::vector<SampleResult>& results, const std::string& title);

/// The same as JSON (schema nodeprobe.corpus-recall/1).
Json recall_to_json(const Recall& r, const std::vector<SampleResult>& results);

}  // namespace nodeprobe::diag::corpus
