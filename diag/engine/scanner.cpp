#include "scanner.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <stdexcept>

#if NODEPROBE_HAVE_RE2
#include <re2/filtered_re2.h>
#include <re2/re2.h>
#include <re2/set.h>
#endif

namespace nodeprobe::diag {
namespace {

// DFA budget for the set; bounded memory whatever the input size.
constexpr std::int64_t kDfaBudget = 64LL << 20;
// A candidate line whose atoms cover at most this many patterns is checked
// pattern by pattern instead of by the set. Each pattern's own DFA is small
// and warm after a few lines; the set's DFA over every pattern builds new
// states, each a union over thousands of instructions, for every line it has
// not seen the like of. Measured at 2523 patterns (build-test, one core): 64
// against 4, with match_line() below taking the same path, made the
// catalogue's 2864 one-line analyses 6.6x faster (11.3 s to 1.7 s) and the
// 4309 corpus samples 4.9x (54.8 s to 11.2 s), within noise on diag/bench's
// generated log (most of its lines name one pattern); the bound keeps a
// hostile line that holds every atom on the set.
constexpr std::size_t kFewPatterns = 64;
// Atoms shorter than this are too common to filter anything.
constexpr int kMinAtomLen = 3;

[[maybe_unused]] std::size_t line_begin(std::string_view s, std::size_t pos) {
  while (pos > 0 && s[pos - 1] != '\n') --pos;
  return pos;
}

[[maybe_unused]] std::size_t line_end(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return s.size();
  const void* nl = std::memchr(s.data() + pos, '\n', s.size() - pos);
  return nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - s.data()) : s.size();
}

// Wu-Manber multi-literal search over case-folded bytes: a window as long as
// the shortest atom slides along the text; a shift table indexed by a hash of
// the window's last three bytes says how far it may jump. Only windows whose
// shift is 0 are compared against the atoms with that hash.
//
// FilteredRE2 lower-cases every atom, non-ASCII letters included (its
// prefilter folds with Unicode's tables whatever the pattern's flags), so a
// log line holding "Слишком много открытых файлов" (glibc's ru.po strerror)
// does not hold the atom "слишком ...". The fold below is byte-wise and lossy
// on purpose: ASCII A-Z to a-z, and for the two-byte UTF-8 letters of Latin-1,
// Greek and Cyrillic the continuation byte keeps only its low nibble
// (U+00C9 C3 89 and U+00E9 C3 A9, U+0420 D0 A0 and U+0440 D1 80 meet) and the
// lead bytes D1 and CF become D0 and CE. ASCII is untouched, so the cost is
// nil; text in any script only gets more candidate lines, which the RE2::Set
// confirm settles.
[[maybe_unused]] unsigned char fold_byte(int c) {
  if (c >= 'A' && c <= 'Z') return static_cast<unsigned char>(c + 32);
  if (c >= 0x80 && c <= 0xBF) return static_cast<unsigned char>(0x80 | (c & 0x0F));
  if (c == 0xD1) return 0xD0;
  if (c == 0xCF) return 0xCE;
  return static_cast<unsigned char>(c);
}

class AtomFinder {
 public:
  explicit AtomFinder(const std::vector<std::string>& atoms) {
    for (int c = 0; c < 256; ++c) fold_[static_cast<std::size_t>(c)] = fold_byte(c);
    for (const auto& a : atoms) {  // non-empty: index i is the caller's atom i
      std::string folded(a);
      for (char& ch : folded) ch = static_cast<char>(fold_byte(static_cast<unsigned char>(ch)));
      atoms_.push_back(std::move(folded));
    }
    if (atoms_.empty()) return;
    m_ = atoms_.front().size();
    for (const auto& a : atoms_) m_ = std::min(m_, a.size());  // >= 3: kMinAtomLen
    const std::size_t max_shift = m_ - 2;
    shift_.assign(kTable, static_cast<std::uint8_t>(std::min<std::size_t>(max_shift, 255)));
    buckets_.assign(kTable, {});
    for (std::size_t ai = 0; ai < atoms_.size(); ++ai) {
      const auto* a = reinterpret_cast<const unsigned char*>(atoms_[ai].data());
      for (std::size_t j = 2; j < m_; ++j) {
        const std::size_t h = hash3(fold_.data(), a + j - 2);
        shift_[h] = static_cast<std::uint8_t>(std::min<std::size_t>(shift_[h], m_ - 1 - j));
      }
      buckets_[hash3(fold_.data(), a + m_ - 3)].push_back(static_cast<std::uint32_t>(ai));
    }
  }

  /// An offset inside the first atom found at or after `pos`, or npos.
  std::size_t find(std::string_view text, std::size_t pos) const {
    return each_atom(text, pos, [](std::uint32_t) { return true; });
  }

  /// Offers each atom occurrence at or after `pos` to stop(atom index), in
  /// text order (an atom found twice is offered twice); returns the start of
  /// the first one stop() accepts, or npos.
  template <typename Stop>
  std::size_t each_atom(std::string_view text, std::size_t pos, Stop stop) const {
    if (atoms_.empty()) return std::string_view::npos;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    const unsigned char* fold = fold_.data();
    const std::uint8_t* shift = shift_.data();
    std::size_t end = pos + m_ - 1;  // last byte of the window
    while (end < n) {
      const std::size_t h = hash3(fold, p + end - 2);
      const std::uint8_t sh = shift[h];
      if (sh != 0) {
        end += sh;
        continue;
      }
      const std::size_t start = end + 1 - m_;
      for (std::uint32_t ai : buckets_[h]) {
        const std::string& a = atoms_[ai];
        if (start + a.size() <= n && equal_folded(p + start, a) && stop(ai)) return start;
      }
      ++end;
    }
    return std::string_view::npos;
  }

 private:
  static constexpr std::size_t kTable = 1u << 15;
  static std::size_t hash3(const unsigned char* fold, const unsigned char* s) {
    return ((static_cast<std::size_t>(fold[s[0]]) << 10) ^ (static_cast<std::size_t>(fold[s[1]]) << 5) ^
            fold[s[2]]) & (kTable - 1);
  }
  bool equal_folded(const unsigned char* s, const std::string& atom) const {
    for (std::size_t i = 0; i < atom.size(); ++i)
      if (fold_[s[i]] != static_cast<unsigned char>(atom[i])) return false;
    return true;
  }

  std::array<unsigned char, 256> fold_{};
  std::vector<std::string> atoms_;
  std::size_t m_ = 0;
  std::vector<std::uint8_t> shift_;
  std::vector<std::vector<std::uint32_t>> buckets_;
};

}  // namespace

#if NODEPROBE_HAVE_RE2

struct MultiPatternScanner::Impl {
  RE2::Options options;
  std::unique_ptr<RE2::Set> set;         // every pattern: the exact verdict per line
  std::unique_ptr<RE2::Set> unfiltered;  // patterns without atoms, screened per block
  // Each pattern on its own, compiled on first use (compiling them all up
  // front would double the start-up time): for a candidate line whose atoms
  // belong to a few patterns only, and when the DFA runs out of memory.
  std::vector<std::string> patterns;
  mutable std::vector<std::unique_ptr<RE2>> singles;     // sized with patterns, filled on first use
  mutable std::unique_ptr<std::once_flag[]> single_once;  // one per pattern
  std::unique_ptr<AtomFinder> finder;
  std::vector<std::vector<int>> atom_patterns;  // finder's atom index -> the patterns it covers
  bool anchored = false;
  std::vector<int> scratch;  // scan()'s: the patterns a candidate line's atoms cover

  // True when the atoms in `line` from `from` on cover at most kFewPatterns
  // patterns, left in `few`: trying those alone is cheaper than the set's
  // DFA over every pattern (NCCL_DEBUG=INFO logs: every line holds "nccl
  // info ", which one pattern needs).
  bool few_patterns(std::string_view line, std::size_t from, std::vector<int>& few) const {
    if (anchored) return false;
    few.clear();
    const bool many = finder->each_atom(line, from, [&](std::uint32_t ai) {
      for (int p : atom_patterns[ai])
        if (std::find(few.begin(), few.end(), p) == few.end()) few.push_back(p);
      return few.size() > kFewPatterns;  // stop: the set is cheaper
    }) != std::string_view::npos;
    if (many) return false;
    std::sort(few.begin(), few.end());
    return true;
  }

  const RE2& single(std::size_t i) const {
    std::call_once(single_once[i], [&] { singles[i] = std::make_unique<RE2>(patterns[i], options); });
    return *singles[i];
  }

  // The patterns in `few` that match `line`, into `ids`.
  void match_few(std::string_view line, const std::vector<int>& few, std::vector<int>& ids) const {
    ids.clear();
    const re2::StringPiece sp(line.data(), line.size());
    for (int p : few)
      if (RE2::PartialMatch(sp, single(static_cast<std::size_t>(p)))) ids.push_back(p);
  }

  // False with `dfa_failed` set when the DFA gave up; then each pattern is tried.
  void match_all(std::string_view line, std::vector<int>& ids, bool* dfa_failed) const {
    ids.clear();
    RE2::Set::ErrorInfo info{RE2::Set::kNoError};
    const re2::StringPiece sp(line.data(), line.size());
    *dfa_failed = false;
    if (!set->Match(sp, &ids, &info) && info.kind != RE2::Set::kNoError) {
      *dfa_failed = true;
      ids.clear();
      for (std::size_t i = 0; i < patterns.size(); ++i)
        if (RE2::PartialMatch(sp, single(i))) ids.push_back(static_cast<int>(i));
    }
    std::sort(ids.begin(), ids.end());
  }
};

namespace {

// An atom holding a byte that the encodings a log line arrives in rewrite
// (JSON escapes " and \, web pages write & < > " ' as entities) is not in
// the encoded line: the line would never reach the unwrapping. Its longest
// run without such bytes is as necessary (a substring of a necessary atom)
// and survives the encodings; kept when at least 5 bytes long.
std::string encodable_free(const std::string& atom) {
  static constexpr const char* kEncoded = "\"'<>&\\";
  if (atom.find_first_of(kEncoded) == std::string::npos) return atom;
  std::size_t best = 0, best_len = 0;
  for (std::size_t i = 0; i < atom.size();) {
    const std::size_t j = std::min(atom.find_first_of(kEncoded, i), atom.size());
    if (j - i > best_len) best = i, best_len = j - i;
    i = j + 1;
  }
  return best_len >= 5 ? atom.substr(best, best_len) : atom;
}

// Strong literal atoms such that every match of `pattern` contains at least
// one of them ("a cover"). FilteredRE2 gives every atom of the pattern's
// AND/OR formula, weak ones included ("connect", "failed"). The formula is
// monotone, so if it is false when all atoms of C are absent, any match must
// contain an atom of C. Start from the longest atoms, then drop what is not
// needed. Returns false when the pattern has no usable atom.
bool atom_cover(const std::string& pattern, const RE2::Options& options,
                std::vector<std::string>* cover) {
  re2::FilteredRE2 f(kMinAtomLen);
  int id = -1;
  if (f.Add(pattern, options, &id) != RE2::NoError) return false;
  std::vector<std::string> atoms;
  f.Compile(&atoms);
  std::vector<int> potentials;
  auto false_without = [&](const std::vector<char>& removed) {
    std::vector<int> present;
    for (std::size_t i = 0; i < atoms.size(); ++i)
      if (!removed[i]) present.push_back(static_cast<int>(i));
    f.AllPotentials(present, &potentials);
    return potentials.empty();
  };
  std::vector<char> removed(atoms.size(), 0);
  if (atoms.empty() || !false_without(std::vector<char>(atoms.size(), 1))) return false;
  std::vector<std::size_t> order(atoms.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return atoms[a].size() > atoms[b].size(); });
  // One atom every match needs (an AND branch) is the best cover unless it
  // is shorter than what the several-atom cover below achieves.
  std::string single;
  for (std::size_t i : order) {
    removed[i] = 1;
    const bool alone = false_without(removed);
    removed[i] = 0;
    if (alone) {
      single = atoms[i];
      break;
    }
  }
  for (std::size_t i : order) {
    removed[i] = 1;
    if (false_without(removed)) break;
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {  // shortest first: drop if not needed
    if (!removed[*it]) continue;
    removed[*it] = 0;
    if (!false_without(removed)) removed[*it] = 1;
  }
  std::vector<std::string> multi;
  std::size_t shortest = std::string::npos;
  for (std::size_t i = 0; i < atoms.size(); ++i)
    if (removed[i]) {
      multi.push_back(atoms[i]);
      shortest = std::min(shortest, atoms[i].size());
    }
  std::vector<std::string> chosen;
  if (!single.empty() && (single.size() >= shortest || single.size() >= 8)) chosen.push_back(single);
  else chosen = multi;
  for (std::string& a : chosen) cover->push_back(encodable_free(a));
  return true;
}

}  // namespace

MultiPatternScanner::MultiPatternScanner(const std::vector<std::string>& patterns, bool anchor_start)
    : impl_(std::make_unique<Impl>()), count_(patterns.size()) {
  Impl& m = *impl_;
  m.options.set_log_errors(false);
  m.options.set_max_mem(kDfaBudget);
  // Anchored at the start, the DFA stops as soon as no pattern can begin there.
  m.set = std::make_unique<RE2::Set>(m.options, anchor_start ? RE2::ANCHOR_START : RE2::UNANCHORED);
  m.anchored = anchor_start;
  std::vector<std::pair<std::string, int>> owners;  // (atom, a pattern it covers)
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::string& p = patterns[i];
    std::string err;
    if (m.set->Add(p, &err) < 0)
      throw std::invalid_argument("pattern '" + p + "' does not compile: " + err);
    m.patterns.push_back(p);
    std::vector<std::string> cover;
    if (!atom_cover(p, m.options, &cover)) unfiltered_.push_back(static_cast<int>(i));
    for (std::string& a : cover)
      if (!a.empty()) owners.emplace_back(std::move(a), static_cast<int>(i));
  }
  if (!m.set->Compile()) throw std::runtime_error("RE2::Set failed to compile the patterns");
  m.singles.resize(m.patterns.size());
  m.single_once = std::make_unique<std::once_flag[]>(m.patterns.size());
  std::sort(owners.begin(), owners.end());
  for (const auto& [atom, pattern] : owners) {
    if (atoms_.empty() || atoms_.back() != atom) {
      atoms_.push_back(atom);
      m.atom_patterns.emplace_back();
    }
    if (m.atom_patterns.back().empty() || m.atom_patterns.back().back() != pattern)
      m.atom_patterns.back().push_back(pattern);
  }
  if (!unfiltered_.empty()) {
    m.unfiltered = std::make_unique<RE2::Set>(m.options, RE2::UNANCHORED);
    for (int i : unfiltered_) m.unfiltered->Add(patterns[static_cast<std::size_t>(i)], nullptr);
    m.unfiltered->Compile();
  }
  m.finder = std::make_unique<AtomFinder>(atoms_);
}

bool MultiPatternScanner::available() { return true; }
std::string MultiPatternScanner::engine() {
  return "RE2 (FilteredRE2 atoms + Wu-Manber prefilter; a candidate line is confirmed pattern by pattern when "
         "its atoms name few patterns, else by the RE2::Set DFA)";
}

void MultiPatternScanner::check_line(std::string_view block, std::size_t begin, std::size_t end,
                                     std::size_t first_atom, const OnMatch& on_match,
                                     const OnCandidate& on_candidate) {
  const std::string_view line = block.substr(begin, end - begin);
  ++stats_.candidate_lines;
  bool failed = false;
  if (first_atom != std::string_view::npos && impl_->few_patterns(line, first_atom - begin, impl_->scratch)) {
    ++stats_.few_pattern_lines;
    impl_->match_few(line, impl_->scratch, ids_);
  } else {
    impl_->match_all(line, ids_, &failed);
  }
  if (failed) ++stats_.dfa_fallbacks;
  if (!ids_.empty()) {
    ++stats_.lines_matched;
    on_match(begin, line, ids_);
  } else if (on_candidate) {
    on_candidate(begin, line);
  }
}

void MultiPatternScanner::scan(std::string_view block, const OnMatch& on_match, const OnCandidate& on_candidate) {
  stats_.bytes += block.size();
  if (impl_->unfiltered) {
    // Rare: a pattern without a literal. Screen the block, then every line.
    const re2::StringPiece sp(block.data(), block.size());
    RE2::Set::ErrorInfo info{RE2::Set::kNoError};
    // A DFA that ran out of memory has not said "no": check every line.
    if (impl_->unfiltered->Match(sp, nullptr, &info) || info.kind != RE2::Set::kNoError) {
      for (std::size_t pos = 0; pos < block.size();) {
        const std::size_t end = line_end(block, pos);
        check_line(block, pos, end, std::string_view::npos, on_match, on_candidate);
        pos = end + 1;
      }
      return;
    }
  }
  std::size_t pos = 0;
  while (pos < block.size()) {
    const std::size_t hit = impl_->finder->find(block, pos);
    if (hit == std::string_view::npos) break;
    const std::size_t begin = line_begin(block, hit);
    const std::size_t end = line_end(block, hit);
    check_line(block, begin, end, hit, on_match, on_candidate);
    pos = end + 1;
  }
}

bool MultiPatternScanner::may_match(std::string_view text) const {
  return impl_->unfiltered || impl_->finder->find(text, 0) != std::string_view::npos;
}

std::vector<int> MultiPatternScanner::match_line(std::string_view line) const {
  std::vector<int> ids;
  // As scan() checks a line: without an atom no pattern can match (unless
  // one has no atom), with atoms of a few patterns those are tried alone.
  // Locals, not the scan's scratch: this is const and may run beside it.
  if (!impl_->unfiltered && !impl_->anchored) {
    const std::size_t hit = impl_->finder->find(line, 0);
    if (hit == std::string_view::npos) return ids;
    std::vector<int> few;
    if (impl_->few_patterns(line, hit, few)) {
      impl_->match_few(line, few, ids);
      return ids;
    }
  }
  bool failed = false;
  impl_->match_all(line, ids, &failed);
  return ids;
}

#else  // no RE2: no scanner; callers check available() first and say why.

struct MultiPatternScanner::Impl {};

MultiPatternScanner::MultiPatternScanner(const std::vector<std::string>& patterns, bool)
    : count_(patterns.size()) {
  throw std::runtime_error("log scanning is unavailable: this build has no RE2 (install re2-devel "
                           "or libre2-dev and rebuild)");
}
bool MultiPatternScanner::available() { return false; }
std::string MultiPatternScanner::engine() { return "none (built without RE2)"; }
void MultiPatternScanner::check_line(std::string_view, std::size_t, std::size_t, std::size_t, const OnMatch&,
                                     const OnCandidate&) {}
void MultiPatternScanner::scan(std::string_view, const OnMatch&, const OnCandidate&) {}
bool MultiPatternScanner::may_match(std::string_view) const { return false; }
std::vector<int> MultiPatternScanner::match_line(std::string_view) const { return {}; }

#endif

MultiPatternScanner::~MultiPatternScanner() = default;

}  // namespace nodeprobe::diag
