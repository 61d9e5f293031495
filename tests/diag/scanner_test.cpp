// The scanner finds exactly the lines a naive per-line, per-pattern RE2
// search finds: the prefilter may only skip lines that cannot match.
#include <gtest/gtest.h>

#include <re2/re2.h>
#include <regex.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string_view>

#include "rules.h"
#include "scanner.h"

namespace nodeprobe::diag {
namespace {

std::vector<std::string> rule_patterns() {
  std::vector<std::string> p;
  for (const auto& r : default_rules().rules())
    for (const auto& x : r.patterns) p.push_back(x.re);
  return p;
}

// Matching (line index, pattern ids) by brute force: every pattern on its
// own, over the whole text, with no prefilter. A per-line search of each
// pattern on each line would be the plainest reference, but at some 2500
// patterns and 34000 corpus lines it takes minutes; this one is exact too.
// Each pattern, in multi-line mode ((?m): ^ and $ also at line boundaries),
// searches the text from a line start; a match starting in line K is
// confirmed on line K alone with the pattern as the scanner compiles it (a
// match through \s or [^x] may run past the line's end), and the search
// goes on from line K + 1. No line is passed over: a match on line L alone
// is also a match in the text, so the leftmost match from any line start
// before L starts on L or before it.
std::vector<std::pair<std::size_t, std::vector<int>>> naive(const std::vector<std::string>& pats, const std::string& text) {
  std::vector<std::size_t> starts{0};  // line k is [starts[k], starts[k + 1] - 1)
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  if (starts.back() < text.size()) starts.push_back(text.size() + 1);  // a last line without '\n'
  const std::size_t lines = starts.size() - 1;
  const re2::StringPiece all(text.data(), text.size());
  std::vector<std::vector<int>> ids(lines);
  for (std::size_t i = 0; i < pats.size(); ++i) {
    const RE2 exact(pats[i]);
    const RE2 multi("(?m)" + pats[i]);
    EXPECT_TRUE(exact.ok() && multi.ok()) << pats[i];
    std::size_t k = 0;
    re2::StringPiece m;
    while (k < lines && multi.Match(all, starts[k], text.size(), RE2::UNANCHORED, &m, 1)) {
      const auto at = static_cast<std::size_t>(m.data() - text.data());
      k = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
      if (k >= lines) break;  // an empty match at the very end of the text
      const re2::StringPiece line(text.data() + starts[k], starts[k + 1] - 1 - starts[k]);
      if (RE2::PartialMatch(line, exact)) ids[k].push_back(static_cast<int>(i));
      ++k;
    }
  }
  std::vector<std::pair<std::size_t, std::vector<int>>> out;
  for (std::size_t k = 0; k < lines; ++k)
    if (!ids[k].empty()) out.emplace_back(k, ids[k]);
  return out;
}

std::vector<std::pair<std::size_t, std::vector<int>>> scanned(MultiPatternScanner& s, const std::string& text) {
  std::vector<std::pair<std::size_t, std::vector<int>>> out;
  std::size_t counted = 0, line = 0;  // matches come in text order: count the newlines once
  s.scan(text, [&](std::size_t off, std::string_view, const std::vector<int>& ids) {
    line += static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted),
                                                text.begin() + static_cast<std::ptrdiff_t>(off), '\n'));
    counted = off;
    out.emplace_back(line, ids);
  });
  return out;
}

std::string corpus_text() {
  std::string all;
  for (const auto& e : std::filesystem::recursive_directory_iterator(NODEPROBE_DIAG_CORPUS)) {
    if (!e.is_regular_file() || e.path().filename() == "manifest.json") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    all += ss.str();
    if (!all.empty() && all.back() != '\n') all += '\n';
  }
  return all;
}

TEST(Scanner, EveryRulePatternCompilesAndHasALiteralCover) {
  MultiPatternScanner s(rule_patterns());
  EXPECT_EQ(s.size(), rule_patterns().size());
  EXPECT_TRUE(s.unfiltered().empty()) << "a rule pattern has no literal atom: it would be screened per block";
  for (const auto& a : s.atoms()) EXPECT_GE(a.size(), 5u) << "weak atom '" << a << "' slows the prefilter";
}

TEST(Scanner, MatchesTheNaiveSearchOnTheCorpus) {
  const auto pats = rule_patterns();
  MultiPatternScanner s(pats);
  const std::string text = corpus_text();
  ASSERT_GT(text.size(), 10000u);
  const auto want = naive(pats, text);
  EXPECT_EQ(scanned(s, text), want);
  // match_line, which checks the lines unwrapped from JSON, escapes and
  // terminal wraps, takes the prefilter too: the same patterns, line by line.
  const std::map<std::size_t, std::vector<int>> by_line(want.begin(), want.end());
  std::istringstream in(text);
  std::string line;
  std::size_t n = 0;
  int wrong = 0;
  while (std::getline(in, line)) {
    const auto it = by_line.find(n);
    const std::vector<int> expect = it == by_line.end() ? std::vector<int>{} : it->second;
    if (s.match_line(line) != expect && ++wrong <= 5) ADD_FAILURE() << "match_line differs on line " << n << ": " << line.substr(0, 160);
    ++n;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(Scanner, MatchesTheNaiveSearchOnMutatedText) {
  const auto pats = rule_patterns();
  MultiPatternScanner s(pats);
  const std::string text = corpus_text();
  std::mt19937 rng(42);
  // Flip case, drop and duplicate bytes: the prefilter must never hide a match.
  // Each third of the corpus (cut at a line) is mutated once, so the naive
  // search reads the corpus once, not three times (it grows with every rule).
  std::size_t from = 0;
  for (int round = 0; round < 3; ++round) {
    std::size_t to = round == 2 ? text.size() : text.find('\n', text.size() * static_cast<std::size_t>(round + 1) / 3);
    to = to == std::string::npos ? text.size() : to + 1;
    const std::string_view slice = std::string_view(text).substr(from, to - from);
    from = to;
    std::string m;
    for (char c : slice) {
      const auto r = static_cast<unsigned>(rng() % 100);
      if (r < 2) continue;
      if (r < 5) m += static_cast<char>(std::isupper(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) : std::toupper(static_cast<unsigned char>(c)));
      else m += c;
      if (r == 99) m += c;
    }
    EXPECT_EQ(scanned(s, m), naive(pats, m)) << "round " << round;
  }
}

TEST(Scanner, PatternsWithoutAtomsFallBackToBlockScreening) {
  const std::vector<std::string> pats = {"[0-9]+x[0-9]+", "NVRM: Xid"};
  MultiPatternScanner s(pats);
  ASSERT_EQ(s.unfiltered(), std::vector<int>{0});
  const std::string text = "a 12x34 b\nnothing\nNVRM: Xid (PCI:0): 79\n";
  EXPECT_EQ(scanned(s, text), naive(pats, text));
}

TEST(Scanner, LastLineWithoutNewlineAndCrLf) {
  MultiPatternScanner s({"Too many open files"});
  const std::string text = "ok\r\nOSError: [Errno 24] Too many open files\r\nend\nToo many open files";
  std::vector<std::string> lines;
  s.scan(text, [&](std::size_t, std::string_view l, const std::vector<int>&) { lines.emplace_back(l); });
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "OSError: [Errno 24] Too many open files\r");
  EXPECT_EQ(lines[1], "Too many open files");
}

TEST(Scanner, FindsTranslatedTextWhateverTheCaseOfItsLetters) {
  // FilteredRE2 lower-cases non-ASCII atoms too ("Слишком" -> "слишком"), so
  // a fold of ASCII alone would never see glibc's ru.po strerror in a log.
  const std::vector<std::string> pats = {"Слишком много открытых файлов", "^\\s*(Убито|Getötet)\\s*$",
                                         "fork: retry: (资源暂时不可用|Ресурс временно недоступен)",
                                         "ÉCHEC DE LA CONNEXION"};
  MultiPatternScanner s(pats);
  bool lowered = false;
  for (const auto& a : s.atoms()) lowered = lowered || a.find("слишком") != std::string::npos;
  EXPECT_TRUE(lowered) << "RE2's prefilter no longer lower-cases non-ASCII atoms; the fold may be simplified";
  const std::string text =
      "java.io.FileNotFoundException: /data/x (Слишком много открытых файлов)\n"
      "Убито\nубито\nGetötet\n-bash: fork: retry: Ресурс временно недоступен\n"
      "bash: fork: retry: 资源暂时不可用\nÉCHEC DE LA CONNEXION\nsome other line ÀÉÎ абв\n";
  const auto got = scanned(s, text);
  EXPECT_EQ(got, naive(pats, text));
  EXPECT_EQ(got.size(), 6u);
}

TEST(Scanner, BadPatternIsAnError) {
  EXPECT_THROW(MultiPatternScanner({"(unclosed"}), std::invalid_argument);
}

TEST(Scanner, PosixTranslationSpellsOutCaseFolding) {
  EXPECT_EQ(to_posix_ere("NVRM: Xid \\("), "NVRM: Xid \\(");
  EXPECT_EQ(to_posix_ere("(?i)ab\\s[c-d]"), "[aA][bB]\\s[c-dC-D]");
  EXPECT_EQ(to_posix_ere("(?i)x[^y]"), "[xX][^yY]");
  EXPECT_EQ(to_posix_ere("(?i)a[a-z_-]"), "[aA][a-z_A-Z-]");
}

TEST(Scanner, EveryRulePatternTranslatesToOneValidPosixEre) {
  // The benchmark hands these to grep -E -f: one line each, each compiling.
  for (const auto& pat : rule_patterns()) {
    EXPECT_EQ(pat.find_first_of("\r\n"), std::string::npos) << "a rule pattern holds a line break: " << pat;
    const std::string ere = to_posix_ere(pat);
    EXPECT_EQ(ere.find_first_of("\r\n"), std::string::npos) << ere;
    regex_t re;
    const int rc = ::regcomp(&re, ere.c_str(), REG_EXTENDED | REG_NOSUB);
    EXPECT_EQ(rc, 0) << pat << " -> " << ere;
    if (rc == 0) ::regfree(&re);
  }
}

}  // namespace
}  // namespace nodeprobe::diag
