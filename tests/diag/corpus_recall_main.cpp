// nodeprobe-corpus-recall: runs the diagnosis over the accuracy corpus and
// prints recall per finding class (was the confirmed cause named? with the
// manifest's severity and facts?), false alarms on healthy look-alikes, and
// every sample the rules get wrong with what they said instead. A measurement,
// not a test: it exits 0 whatever the recall (the ctest cases judge samples).
//
//   nodeprobe-corpus-recall [--corpus DIR] [--batch NAME|--first] [--json PATH|-]
#include <cstdio>
#include <iostream>
#include <string>

#include "corpus_eval.h"
#include "nodeprobe/atomic_file.h"

namespace {

int usage(const char* why) {
  if (why) std::fprintf(stderr, "nodeprobe-corpus-recall: %s\n", why);
  std::fprintf(stderr,
               "usage: nodeprobe-corpus-recall [--corpus DIR] [--batch NAME | --first] [--json PATH|-]\n"
               "  --batch NAME  only samples added in that batch (manifest field \"batch\")\n"
               "  --first       only samples without a batch (the corpus the first rules were written from)\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  namespace corpus = nodeprobe::diag::corpus;
  std::string dir = NODEPROBE_DIAG_CORPUS;
  std::string batch, json_out;
  bool first_only = false, batch_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--corpus") {
      const char* v = value();
      if (!v) return usage("--corpus needs a directory");
      dir = v;
    } else if (a == "--batch") {
      const char* v = value();
      if (!v) return usage("--batch needs a name");
      batch = v;
      batch_given = true;
    } else if (a == "--first") {
      first_only = true;
    } else if (a == "--json") {
      const char* v = value();
      if (!v) return usage("--json needs a path or -");
      json_out = v;
    } else if (a == "-h" || a == "--help") {
      usage(nullptr);
      return 0;
    } else {
      return usage(("unknown argument: " + a).c_str());
    }
  }
  if (first_only && batch_given) return usage("--first and --batch exclude each other");

  std::vector<corpus::Sample> samples;
  try {
    samples = corpus::load_manifest(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nodeprobe-corpus-recall: %s\n", e.what());
    return 2;
  }
  std::vector<corpus::SampleResult> results;
  for (const auto& s : samples) {
    const std::string b = s.spec.value("batch", std::string());
    if (batch_given && b != batch) continue;
    if (first_only && !b.empty()) continue;
    results.push_back(corpus::evaluate(dir, s));
  }
  if (results.empty()) {
    std::fprintf(stderr, "nodeprobe-corpus-recall: no sample in %s matches the selection\n", dir.c_str());
    return 2;
  }
  const corpus::Recall r = corpus::tally(results);
  const std::string scope = batch_given ? "batch " + batch : first_only ? "first corpus (no batch)" : "whole corpus";
  const std::string title = "corpus recall: " + scope + ", " + std::to_string(results.size()) + " samples (" + dir + ")";
  const std::string text = corpus::render_recall(r, results, title);
  // With --json - the JSON owns stdout and the table goes to stderr.
  (json_out == "-" ? std::cerr : std::cout) << text;
  if (!json_out.empty()) {
    try {
      nodeprobe::write_file_atomic(json_out, corpus::recall_to_json(r, results).dump(1) + "\n");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nodeprobe-corpus-recall: %s\n", e.what());
      return 2;
    }
  }
  return 0;
}
