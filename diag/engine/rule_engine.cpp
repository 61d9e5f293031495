#include "rule_engine.h"

#include <algorithm>
#include <cstring>

#include "log_rules.h"
#include "text_util.h"

#if NODEPROBE_HAVE_RE2
#include <re2/re2.h>
#endif

namespace nodeprobe::diag {

#if NODEPROBE_HAVE_RE2
namespace {

// Length of evidence text kept per line.
constexpr std::size_t kEvidenceBytes = 400;

std::string_view next_lines(std::string_view block, std::size_t from, int n) {
  std::size_t end = from;
  for (int i = 0; i < n && end < block.size(); ++i) {
    const void* nl = std::memchr(block.data() + end, '\n', block.size() - end);
    end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - block.data()) + 1 : block.size();
  }
  return block.substr(from, end - from);
}

}  // namespace

struct RuleEngine::Compiled {
  struct Extractor {
    std::unique_ptr<RE2> re;
    std::vector<std::pair<std::string, int>> groups;  // name -> capture index
  };
  std::vector<std::vector<Extractor>> extract;  // per rule
  std::vector<std::vector<std::size_t>> suppressors;  // per rule: rule indices
};

RuleEngine::RuleEngine(const Playbook& pb) : pb_(pb), compiled_(std::make_unique<Compiled>()) {
  const auto& rules = log_rules();
  std::vector<std::string> patterns;
  for (std::size_t i = 0; i < rules.size(); ++i)
    for (const auto& p : rules[i].patterns) {
      patterns.push_back(p);
      pattern_rule_.push_back(i);
    }
  scanner_ = std::make_unique<MultiPatternScanner>(patterns);
  RE2::Options o;
  o.set_log_errors(false);
  compiled_->extract.resize(rules.size());
  compiled_->suppressors.resize(rules.size());
  for (std::size_t i = 0; i < rules.size(); ++i) {
    for (const auto& x : rules[i].extract) {
      Compiled::Extractor ex;
      ex.re = std::make_unique<RE2>(x, o);
      if (!ex.re->ok()) throw std::invalid_argument("rule " + rules[i].key + ": extract '" + x + "': " + ex.re->error());
      for (const auto& [name, idx] : ex.re->NamedCapturingGroups()) ex.groups.emplace_back(name, idx);
      compiled_->extract[i].push_back(std::move(ex));
    }
    for (const auto& s : rules[i].suppressed_by) {
      auto it = std::find_if(rules.begin(), rules.end(), [&](const LogRule& r) { return r.key == s; });
      if (it == rules.end()) throw std::invalid_argument("rule " + rules[i].key + ": unknown suppressor " + s);
      compiled_->suppressors[i].push_back(static_cast<std::size_t>(it - rules.begin()));
    }
  }
}

void RuleEngine::on_match(std::string_view block, std::size_t offset, std::string_view line, long line_no,
                          const std::vector<int>& pattern_ids, const AnalysisOptions& opt,
                          SourceResult& r) {
  const auto& rules = log_rules();
  // Rules that matched this line, each once.
  std::vector<std::size_t> matched;
  for (int id : pattern_ids) {
    const std::size_t ri = pattern_rule_[static_cast<std::size_t>(id)];
    if (std::find(matched.begin(), matched.end(), ri) == matched.end()) matched.push_back(ri);
  }
  std::optional<double> time;
  bool time_parsed = false;
  for (std::size_t ri : matched) {
    const LogRule& rule = rules[ri];
    bool suppressed = false;
    for (std::size_t s : compiled_->suppressors[ri])
      if (std::find(matched.begin(), matched.end(), s) != matched.end()) suppressed = true;
    if (suppressed) continue;
    // Facts from the line (and the lines after it for multi-line messages).
    std::string text(line);
    if (rule.follow_lines > 0) {
      const std::size_t after = offset + line.size() + 1;
      if (after < block.size()) {
        std::string more(next_lines(block, after, rule.follow_lines));
        std::replace(more.begin(), more.end(), '\n', ' ');
        text += " " + more;
      }
    }
    Json facts = Json::object();
    for (const auto& ex : compiled_->extract[ri]) {
      std::vector<re2::StringPiece> sub(static_cast<std::size_t>(ex.re->NumberOfCapturingGroups()) + 1);
      if (!ex.re->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED,
                        sub.data(), static_cast<int>(sub.size())))
        continue;
      for (const auto& [name, idx] : ex.groups) {
        const auto& sp = sub[static_cast<std::size_t>(idx)];
        if (sp.empty() || facts.contains(name)) continue;
        facts[name] = clean_text(std::string_view(sp.data(), sp.size()), 160);
      }
    }
    Severity severity = rule.severity;
    std::string fold;
    // Rule-specific judgement: what the facts mean.
    if (rule.key == "nvrm.xid" || rule.key == "nvrm.fallen_off_bus") {
      int code = 79;
      if (rule.key == "nvrm.xid") {
        const std::string c = facts.value("code", std::string());
        if (c.empty() || c.size() > 4) continue;
        code = std::stoi(c);
      }
      const XidInfo x = pb_.xid(code);
      facts["code"] = std::to_string(code);
      facts["xid_name"] = x.name;
      facts["xid_meaning"] = x.meaning;
      facts["xid_action"] = x.action;
      severity = x.severity;
      // NVLink Xids 144-150 say in their text whether this instance is fatal.
      if (code >= 144 && code <= 150 && line.find(" Fatal ") != std::string_view::npos) severity = Severity::kError;
      fold = std::to_string(code);
    } else if (rule.key == "selinux.avc") {
      const std::string p = facts.value("permissive", std::string());
      severity = p == "0" ? Severity::kError : Severity::kWarn;  // permissive=1: logged, not blocking
      std::string d = facts.value("comm", std::string("?")) + " {" + facts.value("perms", std::string("?")) +
                      "} " + facts.value("tclass", std::string("?"));
      if (facts.contains("target")) d += " " + facts.value("target", std::string());
      d += " (" + facts.value("scontext", std::string("?")) + " -> " + facts.value("tcontext", std::string("?")) + ")";
      if (p == "1") d += " permissive";
      facts["denial"] = d;
    } else if (rule.key == "cuda.insufficient") {
      // cudaDriverGetVersion's number (10010) reads as a CUDA version (10.1).
      const std::string v = facts.value("driver_cuda", std::string());
      if (v.size() >= 4 && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos) {
        const long n = std::stol(v);
        facts["driver_cuda"] = std::to_string(n / 1000) + "." + std::to_string((n % 1000) / 10);
      }
    } else if (rule.key == "cpupower.governor") {
      if (facts.value("governor", std::string()) == "performance") continue;
    }
    if (rule.finding.empty()) {  // a signal
      Signal& s = r.signals[rule.key];
      s.last_line = line_no;
      if (s.count++ == 0) {
        s.first = {r.name, line_no, clean_text(redact_secrets(line), kEvidenceBytes)};
        s.facts = facts;
      }
      continue;
    }
    if (!time_parsed) {
      time = parse_line_time(line, opt.time);
      time_parsed = true;
    }
    if (opt.since && time && *time < *opt.since) {
      ++r.dropped_old;
      continue;
    }
    if (!time) ++r.untimed;
    ++r.events;
    r.findings.add({rule.finding, rule.cause, fold}, severity,
                   {r.name, line_no, clean_text(redact_secrets(line), kEvidenceBytes)}, time, facts);
  }
}

SourceResult RuleEngine::analyze(LineBlockReader& reader, const std::string& name, const AnalysisOptions& opt) {
  SourceResult r;
  r.name = name;
  std::string doc;
  std::string_view block;
  long line_base = 1;  // line number of the block's first line
  while (reader.next(&block)) {
    if (doc.size() < kDocBytes) doc.append(block.substr(0, std::min(block.size(), kDocBytes - doc.size())));
    std::size_t counted_to = 0;
    long line_no = line_base;
    scanner_->scan(block, [&](std::size_t offset, std::string_view line, const std::vector<int>& ids) {
      line_no += static_cast<long>(count_newlines(block.substr(counted_to, offset - counted_to)));
      counted_to = offset;
      on_match(block, offset, line, line_no, ids, opt, r);
    });
    line_no += static_cast<long>(count_newlines(block.substr(counted_to)));
    if (!block.empty() && block.back() != '\n') ++line_no;  // a cut or final line without newline
    line_base = line_no;
  }
  r.lines = static_cast<std::uint64_t>(line_base - 1);
  r.bytes = reader.bytes();
  r.gzip = reader.gzip();
  r.long_lines = reader.long_lines();
  r.error = reader.error();
  r.kind = detect_kind(reader.head());
  parse_sections(doc, name, pb_, r);
  resolve_source(r, opt);
  return r;
}

#else  // no RE2: structured sections only

struct RuleEngine::Compiled {};

RuleEngine::RuleEngine(const Playbook& pb) : pb_(pb) {}

void RuleEngine::on_match(std::string_view, std::size_t, std::string_view, long, const std::vector<int>&,
                          const AnalysisOptions&, SourceResult&) {}

SourceResult RuleEngine::analyze(LineBlockReader& reader, const std::string& name, const AnalysisOptions& opt) {
  SourceResult r;
  r.name = name;
  std::string doc;
  std::string_view block;
  while (reader.next(&block)) {
    if (doc.size() < kDocBytes) doc.append(block.substr(0, std::min(block.size(), kDocBytes - doc.size())));
    r.lines += static_cast<std::uint64_t>(count_newlines(block));
  }
  r.bytes = reader.bytes();
  r.gzip = reader.gzip();
  r.long_lines = reader.long_lines();
  r.error = reader.error();
  r.kind = detect_kind(reader.head());
  parse_sections(doc, name, pb_, r);
  resolve_source(r, opt);
  return r;
}

#endif

RuleEngine::~RuleEngine() = default;

}  // namespace nodeprobe::diag
