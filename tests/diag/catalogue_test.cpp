// The message catalogue (tests/diag/catalogue.json): one line per message
// family as its source emits it must give its finding id (and cause); every
// rule's look-alikes must not fire it; the built-in rules load and validate.
// Prints the coverage per finding id (catalogue lines, rules, patterns).
#include <gtest/gtest.h>

#include <chrono>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
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

// Every analysis here runs at one fixed time (2025-11-29), so that dated
// lines are judged the same on any day.
constexpr double kNow = 1764432000;  // epoch seconds, as TimeContext::now

SourceResult run(const std::string& text) {
  AnalysisOptions opt;
  opt.time.now = kNow;
  const std::string doc = text + "\n";  // the reader views it: it must outlive the analysis
  LineBlockReader reader(doc, "catalogue");
  return engine().analyze(reader, "catalogue", opt);
}

// Analyses documents with a rule set of its own (the built-in rules and a
// site's), at the same fixed time as run().
class SetAnalyser {
 public:
  explicit SetAnalyser(const RuleSet& set) : engine_(default_playbook(), set) { opt_.time.now = kNow; }
  SourceResult operator()(const std::string& doc) {
    LineBlockReader reader(doc, "t");  // views doc: the caller's string outlives the analysis
    return engine_.analyze(reader, "t", opt_);
  }

 private:
  RuleEngine engine_;
  AnalysisOptions opt_;
};

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

// ---- issue 13 item 2: every wrapper a line arrives in ------------------------------------------
//
// The engine strips a line's wrappers once (normalise.cpp) and then matches
// the rules, so a message must give the same finding bare or wrapped. Each
// wrapper below is applied to every line of every catalogue entry; the test
// prints how many entries survive each wrapper and names the ones that do not.
// Only wrappers seen documented or in real logs are listed; the source of each
// format is cited next to it.

// A JSON string literal of `s` (quotes included), as a JSON logger writes it.
std::string json_str(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

// The text as a web page shows it in its HTML source (a bug tracker or forum
// page saved or copied as source): & < > " ' as entities.
std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

constexpr const char* kHardWrap = "terminal hard wrap at 80 columns";

// A terminal's hard wrap: the line cut into pieces of `width` bytes.
std::string hard_wrap(const std::string& l, std::size_t width) {
  std::string o;
  for (std::size_t i = 0; i < l.size(); i += width) o += (i ? "\n" : "") + l.substr(i, width);
  return o;
}

struct Wrapper {
  std::string name;
  std::function<std::string(const std::string&)> line;    // wraps one line
  std::function<std::string(const std::string&)> whole;   // then the whole text (or empty)
};

Wrapper prefixed(const std::string& name, const std::string& prefix) {
  return {name, [prefix](const std::string& l) { return prefix + l; }, nullptr};
}

std::vector<Wrapper> wrappers() {
  std::vector<Wrapper> w = {
      // The wrappers of Normalise.TheSameXidInEveryWrapperGivesTheSameFinding (normalise_test.cpp).
      prefixed("dmesg", "[ 1936.510073] "),
      prefixed("dmesg -T", "[Fri Aug 30 11:11:22 2024] "),
      prefixed("dmesg -x", "kern  :err   : [ 1936.510073] "),
      prefixed("/dev/kmsg", "<3>[ 1936.510073] "),
      prefixed("syslog", "Aug 30 11:11:22 gpu-node-7 kernel: "),
      prefixed("syslog + dmesg stamp", "Aug 30 11:11:22 gpu-node-7 kernel: [ 1936.510073] "),
      prefixed("journalctl -o short-iso-precise", "2024-08-30T11:11:22.123456+0000 gpu-node-7 kernel: "),
      prefixed("rsyslog RFC 3339", "2024-08-30T11:11:22+00:00 gpu-node-7 kernel: "),
      {"journalctl -o json",
       [](const std::string& l) {
         return R"({"__REALTIME_TIMESTAMP":"1725016282123456","_HOSTNAME":"gpu-node-7","MESSAGE":)" + json_str(l) + "}";
       },
       nullptr},
      {"docker json-file",
       [](const std::string& l) {
         return R"({"log":)" + json_str(l + "\n") + R"(,"stream":"stderr","time":"2024-08-30T11:11:22.1Z"})";
       },
       nullptr},
      prefixed("containerd CRI", "2024-08-30T11:11:22.123456789Z stderr F "),
      prefixed("kubectl logs --prefix", "[pod/trainer-0/pytorch] "),
      prefixed("docker compose", "trainer-1  | "),
      prefixed("srun --label", "3: "),
      prefixed("torchrun", "[rank3]: "),
      prefixed("torchrun --tee", "[default3]:"),
      prefixed("mpirun --tag-output", "[1,3]<stderr>:"),
      {"colour codes", [](const std::string& l) { return "\x1b[31m" + l + "\x1b[0m"; }, nullptr},
      prefixed("CloudWatch console table", "  | 2024-08-30T11:11:22.123-07:00 | "),
      // GitHub Actions job logs (downloaded or "view raw"): RFC 3339 with 7
      // fractional digits, e.g. "2025-08-27T10:15:58.1609151Z ##[group]Run actions/checkout@v4".
      prefixed("GitHub Actions", "2024-01-01T00:00:00.1234567Z "),
      // Jenkins Pipeline with the Timestamper plugin: GlobalDecorator writes
      // '[' yyyy-MM-dd'T'HH:mm:ss.SSS'Z' "] " before every line
      // (jenkinsci/timestamper-plugin src/main/java/hudson/plugins/timestamper/pipeline/GlobalDecorator.java).
      prefixed("Jenkins timestamper", "[2024-01-01T00:00:00.000Z] "),
      // Ray forwards worker output to the driver as "(name pid=N, ip=IP) "
      // and "(pid=N) " (docs.ray.io ray-logging: "(pid=45601) task"; ray-project/ray#26490:
      // "(BaseWorkerMixin pid=46213) 2022-07-13 00:08:14,055 INFO torch.py:346 -- ...").
      prefixed("Ray worker (actor, remote)", "(RayTrainWorker pid=1234, ip=10.0.0.1) "),
      prefixed("Ray worker (task)", "(pid=1234) "),
      // Open MPI --tag-output as SageMaker's MPI launcher runs it (huggingface/transformers
      // issue logs: "[1,mpirank:0,algo-1]<stderr>:INFO:root:Reducer buckets ...").
      prefixed("SageMaker mpirun --tag-output", "[1,mpirank:0,algo-1]<stderr>:"),
      // mpirun --timestamp-output --tag-output / horovodrun: ctime then the tag
      // (sgl-project/sglang and horovod issue logs: "Thu Jan 23 11:55:50 2025[1,1]<stderr>:").
      prefixed("mpirun --timestamp-output", "Thu Jan 23 11:55:50 2025[1,1]<stderr>:"),
      // pdsh, which DeepSpeed's multi-node launcher runs: "host: " before each
      // line (dshbak(1): "the leading \"node:\" is stripped").
      prefixed("pdsh / DeepSpeed launcher", "worker-1: "),
      // Python logging: the cookbook's "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
      // and basicConfig's default BASIC_FORMAT "%(levelname)s:%(name)s:%(message)s" (CPython Lib/logging/__init__.py).
      prefixed("Python logging asctime - name - level", "2024-01-01 00:00:00,123 - root - ERROR - "),
      prefixed("Python logging BASIC_FORMAT", "ERROR:root:"),
      // klog / glog: "Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg" (kubernetes/klog klog.go header comment).
      prefixed("klog", "I0101 00:00:00.000000       1 file.go:123] "),
      // A log quoted in a GitHub issue or e-mail reply (Markdown / RFC 3676 quoting).
      prefixed("markdown quote", "> "),
      // Text copied from a web page's HTML source: entities for & < > " '.
      {"HTML entities", html_escape, nullptr},
      // A log saved on Windows: CRLF line ends.
      {"CRLF", [](const std::string& l) { return l + "\r"; }, nullptr},
      // A file saved by a Windows editor: a UTF-8 byte order mark at its start.
      {"UTF-8 BOM", nullptr, [](const std::string& t) { return "\xEF\xBB\xBF" + t; }},
      // An indented paste (a code block in an issue, a Python traceback's body).
      prefixed("tab indent", "\t"),
      // journalctl -o verbose prints each field indented by four spaces:
      // "    MESSAGE=be2net 0000:06:00.0 eno49: Link is Down" (systemd journalctl(1)).
      prefixed("journalctl -o verbose", "    MESSAGE="),
      // kubectl logs --timestamps: RFC 3339 with nanoseconds before each line.
      prefixed("kubectl logs --timestamps", "2024-01-01T00:00:00.123456789Z "),
      // aws logs tail (default --format detailed): "%s %s %s" of the event's
      // isoformat(timespec='microseconds'), the log stream, the message
      // (aws/aws-cli awscli/customizations/logs/tail.py DetailedLogEventsFormatter).
      prefixed("aws logs tail", "2024-01-01T00:00:00.123000+00:00 algo-1-1704067200 "),
      // Fluent Bit's stdout output with format json_lines (docs.fluentbit.io,
      // outputs/standard-output) of a tailed container log, read back with
      // kubectl logs --timestamps: a JSON record inside another prefix.
      // Text copied from a rendered web page (a forum post or chat message
      // not in a code block): runs of spaces and tabs shown as one space.
      {"collapsed whitespace (rendered page)",
       [](const std::string& l) {
         std::string o;
         for (char c : l) {
           if ((c == ' ' || c == '\t') && (o.empty() || o.back() == ' ')) continue;
           o += (c == '\t' ? ' ' : c);
         }
         return o;
       },
       nullptr},
      // A forum editor, word processor or chat client's "smart quotes":
      // U+2019 for ', U+201C/U+201D for " (a corpus sample has "couldn't"
      // written with U+2018).
      {"typographic quotes",
       [](const std::string& l) {
         std::string o;
         bool open = true;
         for (char c : l) {
           if (c == '\'') {
             o += "\xE2\x80\x99";
           } else if (c == '"') {
             o += open ? "\xE2\x80\x9C" : "\xE2\x80\x9D";
             open = !open;
           } else {
             o += c;
           }
         }
         return o;
       },
       nullptr},
      // Copied from a page that wrote its spaces as &nbsp;: U+00A0 for every space.
      {"no-break spaces",
       [](const std::string& l) {
         std::string o;
         for (char c : l) o += c == ' ' ? std::string("\xC2\xA0") : std::string(1, c);
         return o;
       },
       nullptr},
      // A terminal's hard wrap at 80 columns, as copied from a console that
      // breaks long lines (the whole paste has them: two wrapped lines before).
      {kHardWrap,
       [](const std::string& l) { return hard_wrap(l, 80); },
       [](const std::string& t) {
         return hard_wrap("ip-10-0-1-23:41234:41290 [3] NCCL INFO comm 0x7f3c4c000dc0 rank 3 nranks 16 cudaDev 3 "
                          "busId 201c0 - Init COMPLETE", 80) + "\n" +
                hard_wrap("2024-05-01T12:00:01.123Z INFO trainer step=1200 loss=1.9876 lr=0.0003 tokens/s=125000 "
                          "grad_norm=0.87 epoch=3 samples=1228800", 80) + "\n" + t;
       }},
      {"fluent-bit json_lines in kubectl logs --timestamps",
       [](const std::string& l) {
         return R"(2024-01-01T00:00:00.123456789Z {"date":1704067200.123456,"log":)" + json_str(l + "\n") +
                R"(,"stream":"stderr","time":"2024-01-01T00:00:00.123456789Z"})";
       },
       nullptr},
  };
  return w;
}

std::string wrap_entry(const Wrapper& w, const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    out += w.line ? w.line(line) : line;
    if (nl == std::string::npos) break;
    out += '\n';
    pos = nl + 1;
  }
  return w.whole ? w.whole(out) : out;
}

// Known gaps, named so that any other loss fails. The entries these ids
// stand for here are command outputs and tables read by the structured
// parsers (nccl-tests' #wrong table, `ulimit -a`, /proc/PID/limits, `cat
// scaling_governor` and its value) and a message broken over two lines
// (sentence_runs); they span lines, and
//  - behind a prefix that may also be the message's own first words (pdsh's
//    "host: ", Python's "LEVEL:logger:", aws logs tail's stream name) the
//    prefix is tried away only for the rule patterns anchored at the message
//    start, not for the table parsers, which would lose "provider: efa" and
//    the like, nor for the sentence join;
//  - in a JSON record per line (journald, docker, fluent-bit) the tables and
//    follow lines are read from the records' messages, but the sentence join
//    reads the physical lines;
//  - cut at a terminal's width: a JSON record in two pieces is no record,
//    a table's header in pieces is no header, and a rule that fired on the
//    first piece keeps what that piece says (an AVC's permissive=1 is on the
//    next one).
bool known_gap(const std::string& wrapper, const Entry& e) {
  // A shell's job notice ("Killed" padded to a column, then the command):
  // the padding is what tells it from a sentence that starts with the word.
  if (wrapper.rfind("collapsed whitespace", 0) == 0 && e.line.rfind("Killed  ", 0) == 0) return true;
  if (wrapper == kHardWrap)
    return e.line.rfind('{', 0) == 0 || e.id == "gpu.compute_wrong" ||
           (e.id == "selinux.avc" && e.cause == "permissive");
  const std::string& id = e.id;
  static const std::set<std::string> ambiguous = {"pdsh / DeepSpeed launcher", "Python logging BASIC_FORMAT",
                                                  "aws logs tail"};
  static const std::set<std::string> json = {"journalctl -o json", "docker json-file",
                                             "fluent-bit json_lines in kubectl logs --timestamps"};
  static const std::set<std::string> spanning = {"gpu.compute_wrong", "limits.memlock", "limits.nofile",
                                                 "cpu.governor", "limits.somaxconn"};
  return (ambiguous.count(wrapper) && spanning.count(id)) || (json.count(wrapper) && id == "limits.somaxconn");
}

bool gives(const Entry& e, const SourceResult& r) {
  for (const auto& [k, a] : r.findings.all())
    if (k.id == e.id && (e.cause.empty() || k.cause == e.cause)) return true;
  return false;
}

// The wrapper matrix (some 120000 analyses of lines never seen before; about
// 12 s in all since a line naming a few patterns skips the scanner's set) in
// shards, so that ctest runs them side by side: wrappers k, k + kShards, ...
// in shard k.
constexpr std::size_t kShards = 6;

class CatalogueWrappers : public ::testing::TestWithParam<std::size_t> {};

TEST_P(CatalogueWrappers, EveryEntryInEveryWrapperGivesItsFinding) {
  const std::vector<Entry> entries = catalogue();
  // An entry the bare catalogue test already fails (EveryMessageFamilyGivesItsFinding)
  // is not counted against a wrapper; asked only where a wrapped entry fails.
  std::vector<int> bare(entries.size(), -1);
  const auto bare_ok = [&](std::size_t i) {
    if (bare[i] < 0) bare[i] = gives(entries[i], run(entries[i].line)) ? 1 : 0;
    return bare[i] == 1;
  };
  const std::vector<Wrapper> all = wrappers();
  int total = 0, survived = 0, gaps = 0;
  std::cout << "wrapper matrix, shard " << GetParam() << " of " << kShards << ": " << entries.size()
            << " catalogue entries x " << all.size() << " wrappers\n";
  for (std::size_t wi = GetParam(); wi < all.size(); wi += kShards) {
    const Wrapper& w = all[wi];
    const auto t0 = std::chrono::steady_clock::now();
    int ok = 0, n = 0, gap = 0;
    std::vector<std::string> lost;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      const SourceResult r = run(wrap_entry(w, e.line));
      if (gives(e, r)) {
        ++n;
        ++ok;
        continue;
      }
      if (!bare_ok(i)) continue;
      ++n;
      std::string got;
      for (const auto& [k, a] : r.findings.all()) got += k.id + "/" + k.cause + " ";
      std::string shown = e.line.substr(0, 160);
      std::replace(shown.begin(), shown.end(), '\n', '|');  // one report line per entry
      lost.push_back(e.id + (e.cause.empty() ? "" : "/" + e.cause) + " (got: " + got + ") " + shown);
      if (known_gap(w.name, e)) {
        ++gap;
        std::cout << "    known gap [" << w.name << "] " << lost.back().substr(0, 120) << "\n";
      } else {
        ADD_FAILURE() << "[" << w.name << "] lost " << lost.back();
      }
    }
    total += n;
    survived += ok;
    gaps += gap;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "  " << w.name << ": " << ok << "/" << n << (gap ? " (" + std::to_string(gap) + " known gaps)" : "")
              << " [" << static_cast<long>(ms) << " ms]\n";
  }
  EXPECT_GT(total, 0) << "shard " << GetParam() << " has no wrapper";
  std::cout << "  shard: " << survived << "/" << total << " entry-wrapper pairs survive, " << gaps << " known gaps\n";
}

INSTANTIATE_TEST_SUITE_P(Shard, CatalogueWrappers, ::testing::Range<std::size_t>(0, kShards));

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

// The one-line reason RuleSet::parse gives for a document, or "" when it is valid.
std::string parse_error(const std::string& doc, const Playbook& pb) {
  try {
    RuleSet::parse(doc, "site.json", pb);
  } catch (const RulesError& e) {
    return e.what();
  }
  return {};
}

std::string one_rule(const std::string& body) {
  return R"J({"schema": "nodeprobe.rules/1", "rules": [)J" + body + "]}";
}

// Rules that explain each other away in a ring, none with a fallback, would
// all stay silent on a log with them all: refused at load, a site's rules
// added to the built-in ones too.
TEST(RulesData, RulesThatExplainEachOtherAwayInARingAreRefused) {
  const Playbook& pb = default_playbook();
  // A chain is no ring.
  EXPECT_EQ(parse_error(one_rule(
                R"J({"key": "a.cut", "finding": "job.unexplained_failure", "cause": "traceback", "explained_by": ["site.mine"], "patterns": [{"re": "CUT TRACE", "src": "s"}]},
                    {"key": "site.mine", "finding": "job.unexplained_failure", "explained_by": ["a.crash"], "patterns": [{"re": "MYAPP_FATAL", "src": "s"}]},
                    {"key": "a.crash", "finding": "job.unexplained_failure", "cause": "crash", "patterns": [{"re": "CRASHED HERE", "src": "s"}]})J"),
                pb),
            "");
  const std::string two = parse_error(one_rule(
      R"J({"key": "a.cut", "finding": "job.unexplained_failure", "cause": "traceback", "explained_by": ["site.mine"], "patterns": [{"re": "CUT TRACE", "src": "s"}]},
          {"key": "site.mine", "finding": "job.unexplained_failure", "explained_by": ["a.cut"], "patterns": [{"re": "MYAPP_FATAL", "src": "s"}]})J"),
      pb);
  EXPECT_NE(two.find("ring with no fallback"), std::string::npos) << two;
  EXPECT_NE(two.find("site.mine"), std::string::npos) << two;
  // A ring of three is refused the same way.
  const std::string ring = one_rule(
      R"J({"key": "r.a", "finding": "gpu.oom", "explained_by": ["r.b"], "patterns": [{"re": "ALPHA_FAIL", "src": "s"}]},
          {"key": "r.b", "finding": "gpu.oom", "explained_by": ["r.c"], "patterns": [{"re": "BETA_FAIL", "src": "s"}]},
          {"key": "r.c", "finding": "gpu.oom", "explained_by": ["r.a"], "patterns": [{"re": "GAMMA_FAIL", "src": "s"}]})J");
  EXPECT_NE(parse_error(ring, pb).find("r.a -> r.b -> r.c -> r.a"), std::string::npos) << parse_error(ring, pb);
  // With a fallback on one of them the ring speaks: accepted.
  const std::string fallback = one_rule(
      R"J({"key": "r.a", "finding": "gpu.oom", "explained_by": ["r.b"], "otherwise_severity": "info", "patterns": [{"re": "ALPHA_FAIL", "src": "s"}]},
          {"key": "r.b", "finding": "gpu.oom", "explained_by": ["r.a"], "patterns": [{"re": "BETA_FAIL", "src": "s"}]})J");
  EXPECT_EQ(parse_error(fallback, pb), "");
}

TEST(RulesData, ValidationNamesTheRuleAndTheProblem) {
  const Playbook& pb = default_playbook();
  auto err = [&](const std::string& doc) { return parse_error(doc, pb); };
  const std::string ok = R"J({"key": "site.x", "finding": "gpu.xid", "patterns": [{"re": "MY DRIVER DIED", "src": "our wrapper"}]})J";
  EXPECT_EQ(err(one_rule(ok)), "");
  EXPECT_NE(err("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(err(R"J({"schema": "x", "rules": []})J").find("schema"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.nope", "patterns": [{"re": "x", "src": "s"}]})J")).find("unknown finding id 'gpu.nope'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "cause": "nope", "patterns": [{"re": "xyz", "src": "s"}]})J")).find("no cause 'nope'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "x[0-9]+\\d", "src": "s"}]})J")).find("\\d"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "(?:ab)c", "src": "s"}]})J")).find("(?"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "abc"}]})J")).find("lacks 'src'"), std::string::npos);
  // unless expressions are held to the same dialect as the patterns: a
  // mid-expression flag group or a lazy quantifier is refused there too.
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "unless": ["ok (?i)benign"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("rule a.b.unless: pattern 'ok (?i)benign' uses (?"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "unless": ["ok.*?benign"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("lazy quantifier"), std::string::npos);
  EXPECT_EQ(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "unless": ["(?i)benign"], "patterns": [{"re": "abc", "src": "s"}]})J")), "");
  // A ^ that anchors one alternative is the engine's to split (see
  // AnAnchoredAlternativeIsMatchedBehindTheWrappers), not an error.
  EXPECT_EQ(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "abc|^Killed$", "src": "s"}]})J")), "");
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "patterns": [{"re": "a(bc", "src": "s"}]})J")).find("does not compile"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "extract": ["(x)"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("no named group"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "colour": "red", "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "suppressed_by": ["z.z"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown rule 'z.z'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "judge": "magic", "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown judge"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "yields_to": ["gpu.nope"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown finding id 'gpu.nope'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "yields_to": ["*", "gpu.oom"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("stands alone"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "explained_by": ["z.z"], "patterns": [{"re": "abc", "src": "s"}]})J")).find("explained_by names unknown rule 'z.z'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "otherwise_cause": "other", "patterns": [{"re": "abc", "src": "s"}]})J")).find("otherwise_cause/otherwise_severity without needs or explained_by"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "escalate": {"when": ["z.z"], "severity": "warn"}, "patterns": [{"re": "abc", "src": "s"}]})J")).find("escalate names unknown rule 'z.z'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "escalate": {"when": ["a.b"]}, "patterns": [{"re": "abc", "src": "s"}]})J")).find("needs when (rule keys) and a severity"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "finding": "gpu.xid", "escalate": {"when": ["a.b"], "severity": "warn", "if": ["x"]}, "patterns": [{"re": "abc", "src": "s"}]})J")).find("unknown key 'if'"), std::string::npos);
  EXPECT_NE(err(one_rule(R"J({"key": "a.b", "escalate": {"when": ["a.b"], "severity": "warn"}, "patterns": [{"re": "abc", "src": "s"}]})J")).find("a signal has no severity to raise"), std::string::npos);
  EXPECT_NE(err(one_rule(ok + "," + ok)).find("duplicate rule key"), std::string::npos);
  // Folds: finding references, a cause for `into`, the reasoning, unique keys.
  auto one_fold = [&](const std::string& body) {
    return R"J({"schema": "nodeprobe.rules/1", "rules": [], "folds": [)J" + body + "]}";
  };
  const std::string fold_ok = R"J({"key": "site.f", "finding": "gpu.oom", "when": ["host.oom"], "why": "ours"})J";
  EXPECT_EQ(err(one_fold(fold_ok)), "");
  EXPECT_NE(err(one_fold(fold_ok + "," + fold_ok)).find("duplicate fold key 'site.f'"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.nope", "when": ["host.oom"], "why": "w"})J")).find("fold site.f.finding: unknown finding id 'gpu.nope'"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when": ["host.oom/nope"], "why": "w"})J")).find("no cause 'nope' for host.oom"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when": [], "why": "w"})J")).find("'when' must name at least one finding"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when": ["host.oom"], "into": "host.oom", "why": "w"})J")).find("must name a cause"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "host.oom/", "when": ["gpu.oom"], "into": "host.oom/", "why": "w"})J")).find("'into' is the finding itself"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when": ["host.oom"]})J")).find("'why' is required"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when": ["host.oom"], "why": "w", "then": "x"})J")).find("unknown key 'then' in fold site.f"), std::string::npos);
  // A run-level fold: a severity instead of `when`, and it only drops.
  EXPECT_EQ(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when_severity": "error", "why": "w"})J")), "");
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when_severity": "loud", "why": "w"})J")).find("when_severity must be info, warn or error"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when_severity": "warn", "when": ["host.oom"], "why": "w"})J")).find("no 'when', no 'into'"), std::string::npos);
  EXPECT_NE(err(one_fold(R"J({"key": "site.f", "finding": "gpu.oom", "when_severity": "warn", "into": "host.oom/", "why": "w"})J")).find("no 'when', no 'into'"), std::string::npos);
}

TEST(RulesData, DefinesAreFilledInWhereUsedAndValidated) {
  const Playbook& pb = default_playbook();
  auto doc = [](const std::string& defines, const std::string& re) {
    return R"J({"schema": "nodeprobe.rules/1", "defines": [)J" + defines +
           R"J(], "rules": [{"key": "site.x", "finding": "gpu.xid", "patterns": [{"re": ")J" + re +
           R"J(", "src": "s"}], "unless": ["{{word}} ok"]}]})J";
  };
  const std::string defs =
      R"J({"key": "err_no", "re": "(error|code)[=:] ?{arg}\\b", "arg": "the number", "src": "our wrapper"},
          {"key": "word", "re": "(benign|harmless)", "src": "ours"})J";
  const RuleSet set = RuleSet::parse(doc(defs, "(?i)GPU {{err_no:700|719}} here"), "site.json", pb);
  const Rule& r = set.rules().front();
  EXPECT_EQ(r.patterns.front().re, "(?i)GPU (error|code)[=:] ?(700|719)\\b here");
  EXPECT_EQ(r.unless.front(), "(benign|harmless) ok");
  auto err = [&](const std::string& d) { return parse_error(d, pb); };
  EXPECT_NE(err(doc(defs, "{{nope}}")).find("rule site.x: unknown define 'nope'"), std::string::npos);
  EXPECT_NE(err(doc(defs, "{{err_no}}")).find("define 'err_no' needs an argument"), std::string::npos);
  EXPECT_NE(err(doc(defs, "{{word:1}} {{err_no:1}}")).find("define 'word' takes no argument"), std::string::npos);
  EXPECT_NE(err(doc(defs, "{{err_no:1")).find("'{{' without '}}'"), std::string::npos);
  EXPECT_NE(err(doc(defs, "plain text")).find("define 'err_no' is not used"), std::string::npos);
  EXPECT_NE(err(doc(R"J({"key": "w", "re": "a\\d", "src": "s"}, {"key": "word", "re": "x", "src": "s"})J", "{{w}}")).find("define w: pattern"), std::string::npos);
  EXPECT_NE(err(doc(R"J({"key": "w", "re": "ab{arg}", "src": "s"}, {"key": "word", "re": "x", "src": "s"})J", "{{w:1}}")).find("'arg' describes the {arg}"), std::string::npos);
  EXPECT_NE(err(doc(R"J({"key": "word", "re": "x", "src": "s"}, {"key": "word", "re": "y", "src": "s"})J", "a")).find("duplicate define key 'word'"), std::string::npos);
  // Named parameters: every one given once, each filled in as a group.
  const std::string named =
      R"J({"key": "sig", "re": "(line [0-9]+: {text}\\b|signal={name}\\b|x{2,3})", "args": {"text": "t", "name": "n"}, "src": "s"},
          {"key": "word", "re": "(benign|harmless)", "src": "ours"})J";
  const RuleSet ns = RuleSet::parse(doc(named, "{{sig:text=Bus error;name=BUS}}"), "site.json", pb);
  EXPECT_EQ(ns.rules().front().patterns.front().re, "(line [0-9]+: (Bus error)\\b|signal=(BUS)\\b|x{2,3})");
  EXPECT_NE(err(doc(named, "{{sig:text=Bus error}}")).find("define 'sig' needs its parameter 'name'"), std::string::npos);
  EXPECT_NE(err(doc(named, "{{sig:Bus error}}")).find("takes NAME=VALUE;... for its parameters, not 'Bus error'"), std::string::npos);
  EXPECT_NE(err(doc(named, "{{sig:text=a;name=b;text=c}}")).find("is given 'text' twice"), std::string::npos);
  EXPECT_NE(err(doc(named, "{{sig:text=a;name=b;more=c}}")).find("not 'more=c'"), std::string::npos);
  EXPECT_NE(err(doc(named, "{{sig}}")).find("define 'sig' needs its parameters"), std::string::npos);
  const std::string word = R"J(, {"key": "word", "re": "x", "src": "s"})J";
  EXPECT_NE(err(doc(R"J({"key": "w", "re": "a{text}", "args": {"text": "t", "name": "n"}, "src": "s"})J" + word, "{{w:text=1;name=2}}"))
                .find("parameter 'name' is not used as {name} in its re"), std::string::npos);
  EXPECT_NE(err(doc(R"J({"key": "w", "re": "a{text}{other}", "args": {"text": "t"}, "src": "s"})J" + word, "{{w:text=1}}"))
                .find("{other} in its re is not a parameter 'args' declares"), std::string::npos);
  EXPECT_NE(err(doc(R"J({"key": "w", "re": "a{arg}{other}", "arg": "t", "src": "s"})J" + word, "{{w:1}}"))
                .find("{other} in its re needs 'args' to declare it"), std::string::npos);
  EXPECT_NE(err(doc(R"J({"key": "w", "re": "a{arg}", "arg": "t", "args": {"arg": "t"}, "src": "s"})J" + word, "{{w:1}}"))
                .find("'arg' or 'args', not both"), std::string::npos);
  // The built-in grammar of CUDA error numbers, as the rules use it.
  const auto* busy = default_rules().find("cuda.busy");
  ASSERT_NE(busy, nullptr);
  bool by_number = false;
  for (const auto& p : busy->patterns) {
    EXPECT_EQ(p.re.find("{{"), std::string::npos) << p.re;
    by_number = by_number || p.re.find("error code ?:? ?(46)|") != std::string::npos;
  }
  EXPECT_TRUE(by_number);
}

TEST(RulesData, FoldsFoldAFindingIntoTheRootCauseTheSameLogShowsSiteOnesIncluded) {
  const std::string log =
      "Nov 29 10:00:01 node kernel: Out of memory: Killed process 4242 (python) total-vm:9000000kB, anon-rss:8000000kB\n"
      "torchrun: Signal 9 (SIGKILL) received by PID 4242\n"
      "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)\n";
  auto analyze = [&](const RuleSet& set) { return SetAnalyser(set)(log); };
  // Built in: the SIGKILL is the kernel OOM killer's, named once.
  const SourceResult built_in = analyze(default_rules());
  EXPECT_TRUE(built_in.findings.has("host.oom", ""));
  EXPECT_FALSE(built_in.findings.has("host.oom", "killed_signal"));
  EXPECT_TRUE(built_in.findings.has("gpu.oom"));
  // A site that reads a GPU OOM beside the host's as the host's.
  RuleSet set = default_rules();
  const std::string site = R"J({"schema": "nodeprobe.rules/1", "rules": [], "folds": [
      {"key": "site.gpu_oom_is_host", "finding": "gpu.oom", "when": ["host.oom/"], "into": "host.oom/host_memory",
       "why": "our jobs stage through pinned host memory"}]})J";
  set.add(RuleSet::parse(site, "site.json", default_playbook()));
  EXPECT_THROW(set.add(RuleSet::parse(site, "again.json", default_playbook())), RulesError);  // same fold key twice
  const SourceResult folded = analyze(set);
  EXPECT_FALSE(folded.findings.has("gpu.oom"));
  EXPECT_TRUE(folded.findings.has("host.oom", "host_memory"));
  EXPECT_TRUE(folded.findings.has("host.oom", ""));
}

TEST(RulesData, AYieldingRuleGivesWayToTheNonYieldingRulesOfItsFindingsSiteOnesIncluded) {
  const auto* generic = default_rules().find("generic.cuda_lib_load");
  ASSERT_NE(generic, nullptr);
  const auto& sup = generic->suppressed_by;
  EXPECT_NE(std::find(sup.begin(), sup.end(), "framework.cuda_libraries"), sup.end());
  EXPECT_EQ(std::find(sup.begin(), sup.end(), "generic.driver_lib_load"), sup.end()) << "yielding rules do not yield to each other";
  RuleSet set = default_rules();
  set.add(RuleSet::parse(one_rule(R"J({"key": "site.gpu_oom", "finding": "gpu.oom", "patterns": [{"re": "OUR POOL IS FULL", "src": "our allocator"}]})J"),
                         "site.json", default_playbook()));
  const auto& after = set.find("generic.gpu_oom")->suppressed_by;
  EXPECT_NE(std::find(after.begin(), after.end(), "site.gpu_oom"), after.end());
  // A rule that needs context and has no fallback may name nothing: it does
  // not silence the yielding rules, so a line it takes without its context
  // still gets the generic tier's finding (and with it, its own).
  RuleSet ctx = default_rules();
  ctx.add(RuleSet::parse(one_rule(R"J({"key": "site.pool_busy", "finding": "gpu.not_found", "cause": "devices_busy",
      "patterns": [{"re": "OUR POOL", "src": "our allocator"}], "needs": ["site.pool_listing"]},
      {"key": "site.pool_listing", "patterns": [{"re": "POOL LISTING", "src": "our allocator"}]})J"),
                         "site.json", default_playbook()));
  const auto& yielding = ctx.find("generic.no_gpu")->suppressed_by;
  EXPECT_EQ(std::find(yielding.begin(), yielding.end(), "site.pool_busy"), yielding.end());
  SetAnalyser analyse(ctx);
  const std::string line = "worker 3: no GPU found in OUR POOL\n";
  const SourceResult alone = analyse(line);
  EXPECT_TRUE(alone.findings.has("gpu.not_found", "no_gpu_found"));
  EXPECT_FALSE(alone.findings.has("gpu.not_found", "devices_busy"));
  const SourceResult with = analyse("POOL LISTING: 4 GPUs\n" + line);
  EXPECT_TRUE(with.findings.has("gpu.not_found", "devices_busy"));
}

TEST(RulesData, AnchoredAlternativesAreTheTopLevelOnesThatStartWithACaret) {
  using V = std::vector<std::string>;
  EXPECT_EQ(anchored_alternatives("^abc|def"), V{"^abc|def"}) << "a pattern that starts with ^ stays whole";
  EXPECT_EQ(anchored_alternatives("(?i)^abc"), V{"(?i)^abc"});
  EXPECT_EQ(anchored_alternatives("abc|^Killed$|^x(y|z)"), (V{"^Killed$", "^x(y|z)"}));
  EXPECT_EQ(anchored_alternatives("(?i)abc|^killed$"), V{"(?i)^killed$"}) << "the case folding is carried over";
  EXPECT_EQ(anchored_alternatives("a(b|^c)|[|^]x|\\|^y"), V{}) << "in a group, a bracket expression or escaped";
  EXPECT_EQ(anchored_alternatives("[]|]x|^y"), V{"^y"}) << "a ] first in a bracket expression is literal";
  EXPECT_EQ(anchored_alternatives("[^]|]x|^y"), V{"^y"});
  EXPECT_EQ(anchored_alternatives("(^|[^A-Za-z])Xid"), V{});
}

TEST(RulesData, AnAnchoredAlternativeIsMatchedBehindTheWrappers) {
  // Only the second alternative is anchored: behind a syslog or kubectl
  // prefix it must still see the message's start, as a pattern of its own would.
  RuleSet set = default_rules();
  set.add(RuleSet::parse(one_rule(R"J({"key": "site.pool_down", "finding": "gpu.not_found",
      "patterns": [{"re": "OUR POOL IS GONE|^POOL DOWN: [0-9]+ GPUs", "src": "our allocator"}]})J"),
                         "site.json", default_playbook()));
  SetAnalyser analyse(set);
  EXPECT_TRUE(analyse("POOL DOWN: 4 GPUs\n").findings.has("gpu.not_found"));
  EXPECT_TRUE(analyse("May  1 10:00:00 node1 pool-agent[77]: POOL DOWN: 4 GPUs\n").findings.has("gpu.not_found"));
  EXPECT_TRUE(analyse("2024-05-01T10:00:00.000000001Z POOL DOWN: 4 GPUs\n").findings.has("gpu.not_found"));
  EXPECT_TRUE(analyse("[pod/trainer-0/main] POOL DOWN: 4 GPUs\n").findings.has("gpu.not_found"));
  EXPECT_FALSE(analyse("the old agent said POOL DOWN: 4 GPUs\n").findings.has("gpu.not_found"))
      << "anchored: not in the middle of another message";
}

TEST(RulesData, SiteRulesAddToTheBuiltInOnesAndFire) {
  RuleSet set = default_rules();
  const std::string site = one_rule(
      R"J({"key": "site.scheduler_preempt", "finding": "nccl.timeout", "patterns": [{"re": "SPOT PREEMPTION NOTICE", "src": "our scheduler"}],
          "extract": ["rank=(?P<rank>[0-9]+)"]})J");
  set.add(RuleSet::parse(site, "site.json", default_playbook()));
  EXPECT_THROW(set.add(RuleSet::parse(site, "again.json", default_playbook())), RulesError);  // same key twice
  const SourceResult r = SetAnalyser(set)("x SPOT PREEMPTION NOTICE rank=7\n");
  ASSERT_TRUE(r.findings.has("nccl.timeout"));
  EXPECT_EQ(r.findings.all().begin()->second.facts.value("rank", std::string()), "7");
}

}  // namespace
}  // namespace nodeprobe::diag
