#include "rule_engine.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "normalise.h"
#include "text_util.h"

#if NODEPROBE_HAVE_RE2
#include <re2/re2.h>
#endif

namespace nodeprobe::diag {

#if NODEPROBE_HAVE_RE2
namespace {

// Length of evidence text kept per line: whole messages (an Xid line with
// its description, an AVC record) fit.
constexpr std::size_t kEvidenceBytes = 600;

std::string_view next_lines(std::string_view block, std::size_t from, int n) {
  std::size_t end = from;
  for (int i = 0; i < n && end < block.size(); ++i) {
    const void* nl = std::memchr(block.data() + end, '\n', block.size() - end);
    end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - block.data()) + 1 : block.size();
  }
  return block.substr(from, end - from);
}

// The lines after a match as its rule reads them: each unwrapped (a JSON
// record's message, escapes) or without its wrappers, as the matched line was.
std::string follow_text(std::string_view lines) {
  std::string out;
  for (std::size_t p = 0; p < lines.size();) {
    const std::size_t nl = std::min(lines.find('\n', p), lines.size());
    const std::string_view line = lines.substr(p, nl - p);
    p = nl + 1;
    if (needs_unwrap(line)) {
      for (const std::string& piece : unwrap(line)) out += piece + "\n";
    } else {
      out.append(strip_wrappers(line));
      out += '\n';
    }
  }
  return out;
}

// dmesg's "[ 1234.567890]" seconds since boot (after an optional "<6>").
std::optional<double> dmesg_seconds(std::string_view s) {
  std::size_t p = 0;
  if (p < s.size() && s[p] == '<') {
    const std::size_t e = s.find('>');
    if (e == std::string_view::npos || e > 5) return std::nullopt;
    p = e + 1;
  }
  if (p >= s.size() || s[p] != '[') return std::nullopt;
  ++p;
  while (p < s.size() && s[p] == ' ') ++p;
  double v = 0, scale = 0;
  bool any = false;
  for (; p < s.size() && s[p] != ']'; ++p) {
    const char c = s[p];
    if (c >= '0' && c <= '9') {
      any = true;
      if (scale == 0) v = v * 10 + (c - '0');
      else v += (c - '0') * scale, scale /= 10;
    } else if (c == '.' && scale == 0) {
      scale = 0.1;
    } else {
      return std::nullopt;
    }
  }
  if (!any || p >= s.size()) return std::nullopt;
  return v;
}

bool nvlink_xid(int code) { return code == 74 || (code >= 144 && code <= 150) || code == 155; }

// The ECC cause an Xid stands for ("" when it is not a memory Xid).
const char* ecc_cause(int code) {
  switch (code) {
    case 48: case 94: case 95: case 140: return "uncorrectable";
    case 63: return "remap_pending";
    case 64: return "remap_failed";
    case 92: return "";
    default: return nullptr;
  }
}

}  // namespace

struct RuleEngine::Compiled {
  struct Extractor {
    std::unique_ptr<RE2> re;
    std::vector<std::pair<std::string, int>> groups;  // name -> capture index
  };
  std::vector<std::vector<Extractor>> extract;           // per rule
  std::vector<std::vector<std::unique_ptr<RE2>>> unless;  // per rule: look-alike guards
  std::vector<std::vector<std::size_t>> suppressors;      // per rule: rule indices
};

// Where a logical line sits: its source line, the physical line it came from
// (time, follow lines) and what the unwrapping found.
struct RuleEngine::LineCtx {
  std::string_view block;
  std::size_t after = 0;            // offset just past the physical line in the block
  std::string_view physical;        // the physical line (time stamps, dmesg seconds)
  long line_no = 0;
  std::optional<double> record_time;  // a JSON record's own timestamp
  std::string rest;                 // logical lines after this one in the same physical line
};

RuleEngine::RuleEngine(const Playbook& pb, const RuleSet& rules)
    : pb_(pb), rules_(rules), compiled_(std::make_unique<Compiled>()) {
  const auto& rs = rules_.rules();
  std::vector<std::string> patterns;
  for (std::size_t i = 0; i < rs.size(); ++i)
    for (const auto& p : rs[i].patterns) {
      patterns.push_back(p.re);
      pattern_rule_.push_back(i);
    }
  scanner_ = std::make_unique<MultiPatternScanner>(patterns);
  std::vector<std::string> anchored;
  for (std::size_t i = 0; i < patterns.size(); ++i)
    for (std::string& a : anchored_alternatives(patterns[i])) {
      anchored.push_back(std::move(a));
      anchored_ids_.push_back(static_cast<int>(i));
    }
  // Matched on the message behind a line's wrappers, at its start only: an
  // unanchored alternative of such a pattern is matched on the raw line, an
  // anchored one also behind the wrappers (x|^y: ^y on its own).
  if (!anchored.empty()) anchored_ = std::make_unique<MultiPatternScanner>(anchored, true);
  RE2::Options o;
  o.set_log_errors(false);
  compiled_->extract.resize(rs.size());
  compiled_->unless.resize(rs.size());
  compiled_->suppressors.resize(rs.size());
  for (std::size_t i = 0; i < rs.size(); ++i) {
    for (const auto& x : rs[i].extract) {
      Compiled::Extractor ex;
      ex.re = std::make_unique<RE2>(x, o);
      if (!ex.re->ok()) throw std::invalid_argument("rule " + rs[i].key + ": extract '" + x + "': " + ex.re->error());
      for (const auto& [name, idx] : ex.re->NamedCapturingGroups()) ex.groups.emplace_back(name, idx);
      compiled_->extract[i].push_back(std::move(ex));
    }
    for (const auto& u : rs[i].unless) {
      auto re = std::make_unique<RE2>(u, o);
      if (!re->ok()) throw std::invalid_argument("rule " + rs[i].key + ": unless '" + u + "': " + re->error());
      compiled_->unless[i].push_back(std::move(re));
    }
    for (const auto& s : rs[i].suppressed_by) {
      auto it = std::find_if(rs.begin(), rs.end(), [&](const Rule& r) { return r.key == s; });
      if (it == rs.end()) throw std::invalid_argument("rule " + rs[i].key + ": unknown suppressor " + s);
      compiled_->suppressors[i].push_back(static_cast<std::size_t>(it - rs.begin()));
    }
  }
}

std::vector<int> RuleEngine::body_matches(std::string_view line, std::string_view* body) const {
  if (!anchored_) return {};
  // Every point where the message may begin behind its wrappers; the body
  // passed on is the earliest that matched. The set is anchored at the start:
  // each try stops within a few bytes unless a pattern begins there.
  std::string_view starts[8];
  const std::size_t n = message_starts(line, starts, 8);
  std::vector<int> ids;
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<int> local = anchored_->match_line(starts[i]);
    if (local.empty()) continue;
    if (ids.empty()) *body = starts[i];
    for (int l : local) {
      const int id = anchored_ids_[static_cast<std::size_t>(l)];
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  return ids;
}

void RuleEngine::add_body_matches(std::string_view text, std::vector<int>* ids, std::string_view* body) const {
  for (int id : body_matches(text, body))
    if (std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
}

void RuleEngine::on_physical(std::string_view block, std::size_t offset, std::string_view line, long line_no,
                             const std::vector<int>* ids, const AnalysisOptions& opt, SourceResult& r,
                             std::vector<std::pair<long, std::size_t>>* matched) {
  LineCtx c;
  c.block = block;
  c.after = offset + line.size() + 1;
  c.physical = line;
  c.line_no = line_no;
  if (!needs_unwrap(line)) {
    // A timestamp, host or container prefix hides the start of the message
    // from the anchored patterns: match those on the message itself.
    std::string_view body;
    std::vector<int> body_ids = body_matches(line, &body);
    if (ids && !ids->empty()) {
      body_ids.erase(std::remove_if(body_ids.begin(), body_ids.end(),
                                    [&](int id) { return std::find(ids->begin(), ids->end(), id) != ids->end(); }),
                     body_ids.end());
      on_logical(c, line, *ids, opt, r, matched);
    }
    if (!body_ids.empty()) on_logical(c, body, body_ids, opt, r, matched);
    return;
  }
  // Escaped or wrapped content: match each logical line on its own.
  const std::vector<std::string> pieces = unwrap(line, &c.record_time);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::vector<int> piece_ids = scanner_->match_line(pieces[i]);
    std::string_view body;
    add_body_matches(pieces[i], &piece_ids, &body);
    if (piece_ids.empty()) continue;
    c.rest.clear();
    for (std::size_t k = i + 1; k < pieces.size() && k < i + 9; ++k) c.rest += pieces[k] + "\n";
    on_logical(c, pieces[i], piece_ids, opt, r, matched);
  }
}

void RuleEngine::on_logical(const LineCtx& c, std::string_view line, const std::vector<int>& pattern_ids,
                            const AnalysisOptions& opt, SourceResult& r,
                            std::vector<std::pair<long, std::size_t>>* matched_out) {
  const auto& rules = rules_.rules();
  // Rules that matched this line, each once.
  std::vector<std::size_t> matched;
  for (int id : pattern_ids) {
    const std::size_t ri = pattern_rule_[static_cast<std::size_t>(id)];
    if (std::find(matched.begin(), matched.end(), ri) == matched.end()) matched.push_back(ri);
  }
  std::optional<double> time;
  bool time_parsed = false;
  bool line_counted = false;  // untimed and dropped_old count lines, not the rules a line matched
  const re2::StringPiece line_sp(line.data(), line.size());
  for (std::size_t ri : matched) {
    const Rule& rule = rules[ri];
    bool suppressed = false;
    for (std::size_t s : compiled_->suppressors[ri])
      if (std::find(matched.begin(), matched.end(), s) != matched.end()) suppressed = true;
    for (const auto& u : compiled_->unless[ri])
      if (RE2::PartialMatch(line_sp, *u)) suppressed = true;
    if (suppressed) continue;
    if (matched_out) matched_out->emplace_back(c.line_no, ri);
    // Facts from the line (and the lines after it for multi-line messages).
    std::string text(line);
    if (rule.follow_lines > 0) {
      std::string more = c.rest;
      if (c.after < c.block.size()) more += follow_text(next_lines(c.block, c.after, rule.follow_lines));
      std::replace(more.begin(), more.end(), '\n', ' ');
      text += " " + more;
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
    std::string cause = rule.cause;
    std::string fold;
    int xid_code = -1;
    // Named judgements: what the facts mean.
    if (rule.judge == "xid") {
      int code = 79;  // "fallen off the bus" without an Xid number
      const std::string cs = facts.value("code", std::string());
      const bool names_code = std::any_of(rule.extract.begin(), rule.extract.end(),
                                          [](const std::string& x) { return x.find("?P<code>") != std::string::npos; });
      if (cs.empty() && names_code) continue;  // an Xid line whose number could not be read
      if (!cs.empty()) {
        if (cs.size() > 4 || cs.find_first_not_of("0123456789") != std::string::npos) continue;
        code = std::stoi(cs);
      }
      // Xid 45 is the driver cleaning up after an earlier Xid it names:
      // that one is the event ("Ch 00000001 caused by previous Xid 149").
      const std::string prev = facts.value("prev_code", std::string());
      if (code == 45 && !prev.empty() && prev.size() <= 4 && prev.find_first_not_of("0123456789") == std::string::npos) {
        code = std::stoi(prev);
        facts["reported_as"] = "Xid 45 (cleanup after Xid " + prev + ")";
      }
      const XidInfo x = pb_.xid(code);
      facts.update(Playbook::xid_facts(x));
      severity = x.severity;
      // The same Xid has the same cause from a kernel line as from a table.
      if (cause.empty()) cause = x.cause;
      // NVLink Xids say in their text whether this instance is fatal.
      if (nvlink_xid(code) && code != 74 && line.find("Fatal") != std::string_view::npos &&
          line.find("Non-fatal") == std::string_view::npos && line.find("Nonfatal") == std::string_view::npos)
        severity = Severity::kError;
      // Xid 154 names the recovery the driver wants.
      if (code == 154)
        if (const std::string a = recovery_node_action(line); !a.empty()) facts["xid_node_action"] = a;
      fold = std::to_string(code);
      xid_code = code;
    } else if (rule.judge == "selinux") {
      // An AVC record says permissive=0/1; systemd's access trace says
      // state=enforcing/permissive. Without either, resolve_source decides
      // from the mode the log shows.
      const std::string state = facts.value("state", std::string());
      std::string p = facts.value("permissive", std::string());
      if (p.empty() && state == "permissive") p = "1";
      if (p.empty() && state == "enforcing") p = "0";
      if (p == "1") cause = "permissive";
      else if (p == "0") cause = "enforcing";
      std::string d = facts.value("comm", std::string("?")) + " {" + facts.value("perms", std::string("?")) +
                      "} " + facts.value("tclass", std::string("?"));
      if (facts.contains("target")) d += " " + facts.value("target", std::string());
      d += " (" + facts.value("scontext", std::string("?")) + " -> " + facts.value("tcontext", std::string("?")) + ")";
      if (p == "1") d += " permissive";
      facts["denial"] = d;
    } else if (rule.judge == "cuda_version") {
      // cudaDriverGetVersion's number (10010) reads as a CUDA version (10.1).
      for (const char* k : {"driver_cuda", "runtime_cuda"}) {
        const std::string v = facts.value(k, std::string());
        if (v.size() >= 4 && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos) {
          const long n = std::stol(v);
          facts[k] = std::to_string(n / 1000) + "." + std::to_string((n % 1000) / 10);
        }
      }
    } else if (rule.judge == "governor") {
      // No governor read (a command whose next line is not its value), or
      // the one this finding asks for: nothing to report.
      const std::string g = facts.value("governor", std::string());
      if (g.empty() || g == "performance") continue;
    } else if (rule.judge == "answer_false") {
      // A yes/no check with its printed answer after it (a REPL's next
      // line, print(...), prose): only a False answer is the failure.
      if (facts.value("answer", std::string()) != "False") continue;
    } else if (rule.judge == "data_time") {
      // A training loop's own meters (pytorch/examples AverageMeter, timm):
      // the wait for the next batch against the whole step, now and on
      // average. Batch 0 always waits for the workers to start; one slow
      // batch or that warm-up does not make the input the bottleneck.
      auto secs = [&](const char* k) {
        const std::string v = facts.value(k, std::string());
        return v.empty() ? -1.0 : std::strtod(v.c_str(), nullptr);
      };
      const double step = secs("step_s"), step_avg = secs("step_avg_s");
      const double data = secs("data_s"), data_avg = secs("data_avg_s");
      if (step <= 0 || step_avg <= 0 || data < 0.5 * step || data_avg < 0.5 * step_avg) continue;
      const std::string batch = facts.value("batch", std::string());
      if (!batch.empty() && batch.find_first_not_of('0') == std::string::npos) continue;
      facts["data_percent"] = std::to_string(static_cast<int>(100.0 * data_avg / step_avg + 0.5));
    } else if (rule.judge == "aer") {
      const std::string sev = facts.value("aer_severity", std::string());
      const bool uncorrected = sev.find("ncorrect") != std::string::npos || sev.find("atal") != std::string::npos ||
                               line.find("Uncorrect") != std::string_view::npos ||
                               line.find("aer_uncor_severity") != std::string_view::npos;  // printed for uncorrectable only
      cause = uncorrected ? "aer_uncorrected" : "aer_corrected";
    }
    r.fired.insert(rule.key);
    if (rule.finding.empty()) {  // a signal
      Signal& s = r.signals[rule.key];
      s.last_line = c.line_no;
      if (s.count++ == 0) {
        s.first = {r.name, c.line_no, clean_text(redact_secrets(line), kEvidenceBytes)};
        s.facts = facts;
      }
      continue;
    }
    if (!time_parsed) {
      time = c.record_time ? c.record_time : parse_line_time(c.physical, opt.time);
      if (!time && line.data() != c.physical.data()) time = parse_line_time(line, opt.time);
      time_parsed = true;
    }
    if (opt.since && time && *time < *opt.since) {
      if (!line_counted) ++r.dropped_old;
      line_counted = true;
      continue;
    }
    if (!time && !line_counted) ++r.untimed;
    line_counted = true;
    ++r.events;
    // What makes this line one event: the rule's event facts, else the message.
    EventRef ev;
    ev.window_s = rule.event_window_s;
    if (!time) ev.mono = dmesg_seconds(c.physical);
    if (!rule.event.empty()) {
      for (const auto& k : rule.event)
        if (facts.contains(k)) ev.key += k + "=" + facts.value(k, std::string()) + ";";
      ev.keyed = !ev.key.empty();
      ev.attach = ev.key.empty();
    } else {
      ev.key = "body:" + std::string(message_body(line).substr(0, 240));
    }
    FindingKey key{rule.finding, cause, fold};
    if (opt.current_from && time && *time < *opt.current_from) {
      key.past = true;
      facts["window"] = opt.window.empty() ? std::string("before the window judged") : opt.window;
      ++r.past_events;
    }
    const Evidence evidence{r.name, c.line_no, clean_text(redact_secrets(line), kEvidenceBytes)};
    FindingSet& into = rule.waits_for_context() ? r.pending[rule.key] : r.findings;
    const long before = into.all().count(key) ? into.all().at(key).count : 0;
    into.add(key, severity, evidence, time, facts, &ev);
    if (into.all().at(key).count == before) ++r.duplicates;
    // An Xid that is a memory or NVLink fault is also that finding.
    if (xid_code >= 0) {
      if (const char* ec = ecc_cause(xid_code))
        into.add({"gpu.ecc", ec, "", key.past}, Severity::kUnknown, evidence, time, facts, &ev);
      if (nvlink_xid(xid_code))
        into.add({"gpu.nvlink", "nvlink_errors", "", key.past}, severity, evidence, time,
                 Json{{"detail", "Xid " + std::to_string(xid_code) + " (" + facts.value("xid_name", std::string()) + ")"},
                      {"pci", facts.value("pci", std::string())}},
                 &ev);
    }
  }
}

SourceResult RuleEngine::analyze(LineBlockReader& reader, const std::string& name, const AnalysisOptions& opt) {
  SourceResult r;
  r.name = name;
  std::string doc;
  std::string_view block;
  long line_base = 1;  // line number of the block's first line
  std::vector<std::pair<long, std::size_t>> matched;  // (line, rule) in this block
  bool scan = true;
  std::string spaced;  // a block with no-break spaces, rewritten (ascii_spaces)
  while (reader.next(&block)) {
    block = ascii_spaces(block, &spaced);
    if (doc.size() < kDocBytes) doc.append(block.substr(0, std::min(block.size(), kDocBytes - doc.size())));
    // A nodeprobe report or facts document is structured evidence (its
    // checks, findings and fields, parse_sections): its reasons and error
    // texts are not log lines to match.
    if (line_base == 1 && (detect_kind(reader.head()) == "report" || detect_kind(reader.head()) == "nodeprobe-json"))
      scan = false;
    if (!scan) {
      line_base += static_cast<long>(count_newlines(block));
      continue;
    }
    std::size_t counted_to = 0;
    long line_no = line_base;
    matched.clear();
    auto at = [&](std::size_t offset) {
      line_no += static_cast<long>(count_newlines(block.substr(counted_to, offset - counted_to)));
      counted_to = offset;
      return line_no;
    };
    scanner_->scan(
        block,
        [&](std::size_t offset, std::string_view line, const std::vector<int>& ids) {
          on_physical(block, offset, line, at(offset), &ids, opt, r, &matched);
        },
        [&](std::size_t offset, std::string_view line) {
          // No pattern matched the raw line: unwrap it, or try the anchored
          // patterns on the message behind its prefix.
          if (needs_unwrap(line) || anchored_) on_physical(block, offset, line, at(offset), nullptr, opt, r, &matched);
        });
    // Lines a terminal hard-wrapped, or a message broken in two mid-sentence:
    // match them joined, for the rules no piece matched on its own.
    std::vector<WrapRun> runs = wrap_runs(block);
    const std::size_t wrapped = runs.size();
    for (WrapRun& run : sentence_runs(block)) {
      const bool inside = std::any_of(runs.begin(), runs.begin() + static_cast<long>(wrapped), [&](const WrapRun& w) {
        return run.first_line + 1 >= w.first_line && run.first_line < w.first_line + w.lines;
      });
      if (!inside) runs.push_back(std::move(run));
    }
    auto already_named = [&](std::size_t ri) {
      const Rule& rule = rules_.rules()[ri];
      if (r.fired.count(rule.key)) return true;
      if (rule.finding.empty()) return false;
      const auto names = [&](const FindingSet& set) {
        return std::any_of(set.all().begin(), set.all().end(),
                           [&](const auto& f) { return f.first.id == rule.finding; });
      };
      // Findings that wait on their context (needs, explained_by, escalate) count too.
      return names(r.findings) ||
             std::any_of(r.pending.begin(), r.pending.end(), [&](const auto& p) { return names(p.second); });
    };
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const WrapRun& run = runs[k];
      // The anchored patterns too, behind the joined line's wrappers, as
      // on_physical tries them on one line; only those matched: read the body.
      std::vector<int> ids = scanner_->match_line(run.text);
      const bool whole = !ids.empty();
      std::string_view body = run.text;
      add_body_matches(run.text, &ids, &body);
      if (ids.empty()) continue;
      const std::string_view text = whole ? std::string_view(run.text) : body;
      const long first = line_base + run.first_line;
      std::vector<int> fresh;
      for (int id : ids) {
        const std::size_t ri = pattern_rule_[static_cast<std::size_t>(id)];
        const bool seen = std::any_of(matched.begin(), matched.end(), [&](const auto& m) {
          return m.second == ri && m.first >= first && m.first < first + run.lines;
        });
        // A sentence join only recovers a message the source otherwise lacks:
        // a rule that already fired here, or whose finding another rule
        // raised, gains no second, joined occurrence.
        if (!seen && !(k >= wrapped && already_named(ri))) fresh.push_back(id);
      }
      if (fresh.empty()) continue;
      LineCtx c;
      c.block = block;
      c.after = block.size();
      c.physical = block.substr(run.first_offset, std::min<std::size_t>(run.text.size(), block.size() - run.first_offset));
      c.line_no = first;
      on_logical(c, text, fresh, opt, r, nullptr);
    }
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
  resolve_source(r, opt, rules_);
  return r;
}

#else  // no RE2: structured sections only

struct RuleEngine::Compiled {};

RuleEngine::RuleEngine(const Playbook& pb, const RuleSet& rules) : pb_(pb), rules_(rules) {}

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
  resolve_source(r, opt, rules_);
  return r;
}

#endif

RuleEngine::~RuleEngine() = default;

}  // namespace nodeprobe::diag
