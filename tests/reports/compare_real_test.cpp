// compare on reports the real probes write on this machine: the same run
// twice (A/A) is never "worse", and a real setting change (io workers 2 -> 1)
// pairs metric by metric, is worse, names the setting and exits 1.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "nodeprobe/host_activity.h"
#include "nodeprobe/report_json.h"
#include "test_support.h"

namespace nodeprobe {
namespace {

using testing::TempDir;

std::string bin(const std::string& name) { return std::string(NODEPROBE_BIN_DIR) + "/" + name; }

SpawnResult run(std::vector<std::string> argv, double timeout_s = 120) {
  return testing::run(std::move(argv), timeout_s, {"NODEPROBE_NO_IMDS=1"});
}

/// `nodeprobe compare --format json` plus its exit code.
struct Cmp {
  int exit_code = -1;
  Json j;
  std::string text;  // the text rendering of the same pair
};

Cmp compare(const std::string& a, const std::string& b) {
  Cmp c;
  const auto r = run({bin("nodeprobe"), "compare", "--format", "json", a, b});
  c.exit_code = r.exit_code;
  c.j = Json::parse(r.out);
  c.text = run({bin("nodeprobe"), "compare", a, b}).out;
  return c;
}

std::string worse_list(const Cmp& c) {
  std::string out;
  for (const auto& m : c.j["metrics"])
    if (m["verdict"] == "worse") out += m["probe"].get<std::string>() + "/" + m["name"].get<std::string>() + " " +
                                        m["labels"].dump() + ": " + m["reason"].get<std::string>() + "\n";
  return out;
}

// The warn and error findings of one report, one line each: what a changed
// finding count was about.
std::string findings_of(const std::string& report) {
  std::string out;
  try {
    const Json j = Json::parse(testing::read_file(report));
    for (const auto& f : j.value("findings", Json::array()))
      if (f.value("severity", "") != "info")
        out += "  " + f.value("severity", "") + " " + f.value("id", "") + ": " + f.value("title", "") + "\n";
  } catch (const std::exception& e) {
    out += std::string("  (") + e.what() + ")\n";
  }
  return out;
}

const Json* verdict_of(const Cmp& c, const std::string& name) {
  for (const auto& m : c.j["metrics"])
    if (m["name"] == name) return &m;
  return nullptr;
}

/// "" on an idle machine, else why this one is not: A/A without a worse is
/// claimed for an idle node; a run-queue longer than the CPUs (other builds,
/// other tests) slows one run and not the other by far more than any sample
/// spread covers, which compare then rightly calls worse. Judged from the
/// CPUs' use over the last second (the load average lags a minute behind a
/// machine that has just gone quiet, and runs ahead of one just got busy).
std::string busy_reason() {
  const auto a = read_proc_stat();
  if (!a) return {};
  ::usleep(1000 * 1000);
  const auto b = read_proc_stat();
  if (!b || b->total <= a->total) return {};
  const double used = (b->busy - a->busy) / (b->total - a->total);
  if (used > 0.25)
    return "the machine is busy (" + std::to_string(static_cast<int>(used * 100)) +
           " % of its CPUs in use over the last second): an A/A comparison is judged on an idle one";
  return {};
}

class RealIo : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = run({bin("nodeprobe-io"), "prepare", "--dir", tmp.file("ds"), "--files", "1500", "--size", "110kB",
                        "--quiet", "--json", tmp.file("prep.json")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override { run({bin("nodeprobe-io"), "clean", "--dir", tmp.file("ds"), "--quiet"}); }
  /// nodeprobe-io read with the consumer at 1 ms per batch of 32: two workers keep it fed, one does not.
  std::string read(const std::string& name, const std::string& workers, const std::string& prefetch) {
    const auto r = run({bin("nodeprobe-io"), "read", "--dir", tmp.file("ds"), "-w", workers, "-p", prefetch,
                        "--step-ms", "1", "--epochs", "3", "--quiet", "--json", tmp.file(name)});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.describe() << r.err;
    return tmp.file(name);
  }
  TempDir tmp;
};

TEST_F(RealIo, TheSameReadTwiceIsNeverWorse) {
  if (const std::string why = busy_reason(); !why.empty()) GTEST_SKIP() << why;
  // Once in a full CI pass (2026-12-03) a neighbour and the hypervisor took
  // 0.9 and 0.7 of the 2 CPUs during the second read only, and every
  // throughput metric halved (compare named the busy host as the cause). A
  // second pair is read then; an unchanged read called worse twice fails.
  Cmp c;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string a = read("a.json", "2", "2"), b = read("b.json", "2", "2");
    c = compare(a, b);
    if (c.exit_code == 0) break;
    std::cerr << "attempt " << attempt + 1 << " called an unchanged read worse:\n" << worse_list(c);
  }
  EXPECT_EQ(c.exit_code, 0) << worse_list(c) << c.text;
  EXPECT_EQ(c.j["summary"]["worse"], 0);
  EXPECT_GE(c.j["metrics"].size(), 8u) << "every metric pairs with itself";
  EXPECT_EQ(c.j["summary"]["only_before"], 0);
  EXPECT_EQ(c.j["summary"]["only_after"], 0);
  EXPECT_TRUE(c.j["environment"].empty()) << c.j["environment"].dump();
}

TEST_F(RealIo, FewerWorkersPairsIsWorseAndNamesTheSetting) {
  const std::string a = read("w2.json", "2", "2"), b = read("w1.json", "1", "1");
  Cmp c = compare(a, b);
  // A baseline starved in a few windows by other processes can cover the
  // change (ambiguous, rightly: AU 65.7..100 against 53.4..68.9 once, with
  // another metric still worse): transient, so the pair is measured once more.
  const auto settled = [](const Cmp& r) {
    const Json* v = verdict_of(r, "au");
    return r.exit_code == 1 && v && (*v)["verdict"] == "worse";
  };
  if (!settled(c)) c = compare(read("w2.json", "2", "2"), read("w1.json", "1", "1"));
  EXPECT_EQ(c.exit_code, 1) << c.text;
  // Paired metric by metric although the settings differ: they are config, not identity.
  for (const char* n : {"samples_per_s", "throughput", "au", "data_wait_fraction", "cpu_per_sample"})
    EXPECT_NE(verdict_of(c, n), nullptr) << n << " did not pair";
  const Json* au = verdict_of(c, "au");
  ASSERT_NE(au, nullptr);
  EXPECT_EQ((*au)["verdict"], "worse") << au->dump();
  // The setting that changed is shown as the cause, next to what moved.
  EXPECT_NE(c.text.find("io: prefetch 2 -> 1, workers 2 -> 1"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("AU -"), std::string::npos) << c.text;
  ASSERT_EQ(c.j["causes"].size(), 1u);
  EXPECT_EQ(c.j["causes"][0]["probe"], "io");
}

bool have_mpirun() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const auto end = dirs.find(':', start);
    const std::string d = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!d.empty() && ::access((d + "/mpirun").c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

TEST(RealAllreduce, TheSameRunTwiceIsNeverWorse) {
  // With one launch of 20 back-to-back iterations an unchanged MPI allreduce
  // at 256 KiB ran 63 % slower in its second run in CI (2026-12-02), both
  // attempts, p5..p95 apart: a launch's samples share its CPU placement. The
  // run accept makes (three launches, iterations paced) is what is judged.
  if (!have_mpirun()) GTEST_SKIP() << "no mpirun in PATH";
  if (const std::string why = busy_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir tmp;
  // Between two runs on a shared 2-core VM a neighbour's burst can slow every
  // size of the second run at once (seen once in a full CI pass: -40 %, the
  // intervals apart). A second pair is measured then; a compare that calls an
  // unchanged node worse twice in a row still fails.
  Cmp c;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<std::string> files;
    for (const char* name : {"a.json", "b.json"}) {
      const auto r = run({bin("nodeprobe-allreduce"), "--np", "2", "--backend", "mpi,fabric:tcp", "-b", "256K", "-e",
                          "1M", "-f", "4", "-n", "4", "--launches", "3", "--spread", "50", "--quiet", "--json",
                          tmp.file(name)},
                         180);
      ASSERT_EQ(r.exit_code, 0) << r.describe() << r.err;
      files.push_back(tmp.file(name));
    }
    c = compare(files[0], files[1]);
    if (c.exit_code == 0) break;
    std::cerr << "attempt " << attempt + 1 << " called an unchanged run worse:\n" << worse_list(c);
  }
  EXPECT_EQ(c.exit_code, 0) << worse_list(c) << c.text;
  EXPECT_EQ(c.j["summary"]["only_before"], 0);
  // busbw, algbw and time of one measurement never disagree.
  std::map<std::string, std::string> bus, alg;
  for (const auto& m : c.j["metrics"]) {
    Json axes = m["labels"];
    if (m["name"] == "busbw") bus[axes.dump()] = m["verdict"];
    if (m["name"] == "algbw") alg[axes.dump()] = m["verdict"];
  }
  EXPECT_FALSE(bus.empty());
  EXPECT_EQ(bus, alg);
}

TEST(RealAccept, AAComparisonHasNoWorseTwiceInARow) {
  // Three unchanged runs, each compared with the next: no pair may have a
  // worse metric. A run-level state of the host the runs' samples did not
  // see (bench/compare/aa_compare.sh measures how often: 8 of 8 pairs clean
  // on an idle machine once allreduce pooled 3 launches) gets one more
  // attempt of three runs; an unchanged node called worse in both fails.
  if (const std::string why = busy_reason(); !why.empty()) GTEST_SKIP() << why;
  // scripts/dirty-host.sh lowers this process's limits (nofile 1024, memlock
  // 64 KiB) and fakes the logs: a node in that state is not the healthy idle
  // node an A/A pair is judged on (there, once, a second run's diag found one
  // more error and io's file writes ran 7x slower).
  if (std::getenv("NODEPROBE_DIRTY_HOST_INSIDE"))
    GTEST_SKIP() << "the dirty-host pass: limits lowered and logs faked, not an idle healthy node";
  TempDir tmp;
  std::string failures;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    std::vector<std::string> files;
    for (const char* name : {"a.json", "b.json", "c.json"}) {
      const auto r = run({bin("nodeprobe"), "accept", "--quiet", "--no-imds", "--json", tmp.file(name)}, 120);
      ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << r.describe() << r.err;
      files.push_back(tmp.file(name));
    }
    std::string worse;
    for (std::size_t i = 0; i + 1 < files.size(); ++i) {
      const Cmp c = compare(files[i], files[i + 1]);
      if (c.exit_code != 0 || c.j["summary"]["worse"] != 0)
        worse += "attempt " + std::to_string(attempt) + ", pair " + std::to_string(i) + ":\n" + worse_list(c) +
                 " findings before:\n" + findings_of(files[i]) + " findings after:\n" + findings_of(files[i + 1]);
      // Nothing run-specific (temporary directories, deadlines, labels) shows up as a change.
      for (const auto& f : c.j["environment"])
        ADD_FAILURE() << "environment differs: " << f.dump();
    }
    if (worse.empty()) return;
    std::cerr << worse;
    failures += worse;
  }
  ADD_FAILURE() << "an unchanged node was called worse in both attempts:\n" << failures;
}

}  // namespace
}  // namespace nodeprobe

namespace nodeprobe {
namespace {

/// Digits (and decimal points between them) folded to '#': numbers differ run
/// to run, the shape of a line does not.
std::string shape(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      while (i + 1 < line.size() &&
             (std::isdigit(static_cast<unsigned char>(line[i + 1])) || line[i + 1] == '.'))
        ++i;
      out += '#';
    } else {
      out += line[i];
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

/// The lines of docs/compare.md's sample that do not depend on the noise of
/// one run or machine: commands, headers, causes, settings, results (not the
/// metric rows, whose verdicts between `ambiguous` and `worse` may differ from
/// run to run, nor the before/after lines with this machine's hostname).
bool stable(const std::string& line) {
  for (const char* p : {"worse ", "better ", "ambiguous ", "same ", "n/a ", "verdict ", "           ", "    moved:",
                        "only in", "  io/", "status changes", "  io: pass", "  io io.", "before: ", "after: "})
    if (line.rfind(p, 0) == 0) return false;
  return !line.empty();
}

TEST(Docs, CompareWalkThroughPrintsWhatDocsCompareMdShows) {
  TempDir tmp;
  const std::string path = std::string(NODEPROBE_BIN_DIR) + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "");
  const auto walk = [&] {
    return testing::run({std::string(NODEPROBE_SOURCE_DIR) + "/docs/examples/tuning.sh", tmp.path()}, 180,
                        {"PATH=" + path});
  };
  const std::regex worse_exit_1("result: [0-9]+ metric\\(s\\) worse\n\\$ echo \\$\\?\n1\n");
  const auto as_the_page_says = [&](const std::string& out) {
    return out.find("result: no metric worse\n$ echo $?\n0\n") != std::string::npos &&
           std::regex_search(out, worse_exit_1);
  };
  // Real runs on a shared machine: a baseline starved in a few windows by
  // other processes has an interval wide enough to cover the change, and
  // compare then rightly says ambiguous. That noise is transient: one more
  // walk-through tells it from a compare that cannot see the change (which
  // fails both).
  auto r = walk();
  if (r.exit_code == 0 && !as_the_page_says(r.out)) r = walk();
  ASSERT_EQ(r.exit_code, 0) << r.describe() << r.err;
  std::set<std::string> got;
  std::istringstream out(r.out);
  for (std::string l; std::getline(out, l);) got.insert(shape(l));
  const std::string doc = testing::read_file(std::string(NODEPROBE_SOURCE_DIR) + "/docs/compare.md");
  const auto marker = doc.find("<!-- docs/examples/tuning.sh");
  ASSERT_NE(marker, std::string::npos) << "docs/compare.md lost its sample";
  const auto begin = doc.find("```\n", marker) + 4;
  std::istringstream sample(doc.substr(begin, doc.find("```", begin) - begin));
  std::size_t checked = 0;
  for (std::string l; std::getline(sample, l);) {
    if (!stable(l)) continue;
    EXPECT_TRUE(got.count(shape(l))) << "docs/compare.md shows a line the walk-through no longer prints:\n  " << l
                                     << "\nit printed:\n" << r.out;
    ++checked;
  }
  EXPECT_GT(checked, 12u);
  // The A/A pair exits 0, the workers 2 -> 1 pair 1, as the page says.
  EXPECT_NE(r.out.find("result: no metric worse\n$ echo $?\n0\n"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, worse_exit_1)) << r.out;
}

}  // namespace
}  // namespace nodeprobe
