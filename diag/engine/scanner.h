#pragma once
/// Multi-pattern line scanner. Two stages, both linear in the input:
///  1. a literal prefilter: RE2's FilteredRE2 derives, for every pattern, the
///     lowercase "atoms" a match must contain; one Wu-Manber search over
///     all atoms (case-folded, byte classes) finds candidate lines;
///  2. only candidate lines go on: when the atoms a line holds belong to a
///     few patterns, each of those is tried alone; else one RE2::Set (a DFA
///     for every pattern) decides which patterns really match.
/// Patterns without atoms ("unfiltered") are screened per block by a second
/// RE2::Set. Memory is bounded by the automaton and the DFA budget, never by
/// the input. std::regex is never used (STYLE.md, "Fast paths stay lean").

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nodeprobe::diag {

/// Counters a scan leaves behind (for the benchmark and --verbose).
struct ScanStats {
  std::uint64_t bytes = 0;
  std::uint64_t candidate_lines = 0;  ///< lines the prefilter passed to the DFA
  std::uint64_t lines_matched = 0;    ///< lines with at least one pattern
  std::uint64_t dfa_fallbacks = 0;    ///< lines checked pattern by pattern (DFA out of memory)
  std::uint64_t few_pattern_lines = 0;  ///< candidate lines whose atoms named few patterns, tried alone
};

class MultiPatternScanner {
 public:
  /// Called for each matching line: its offset in the block, its text
  /// (without the newline) and the indices of the patterns it matches, ascending.
  using OnMatch = std::function<void(std::size_t offset, std::string_view line,
                                     const std::vector<int>& pattern_ids)>;

  /// Compiles `patterns` (RE2 syntax). Throws std::invalid_argument naming the
  /// first pattern that does not compile, std::runtime_error when this build
  /// has no RE2.
  explicit MultiPatternScanner(const std::vector<std::string>& patterns, bool anchor_start = false);
  ~MultiPatternScanner();
  MultiPatternScanner(const MultiPatternScanner&) = delete;
  MultiPatternScanner& operator=(const MultiPatternScanner&) = delete;

  /// Called for a candidate line (it holds an atom) that no pattern matched
  /// as it stands: the caller may normalise it and try again.
  using OnCandidate = std::function<void(std::size_t offset, std::string_view line)>;

  /// Scans `block`. Lines end at '\n' (a trailing '\r' stays in the line); a
  /// last line without '\n' is scanned too, so pass blocks cut at line ends.
  void scan(std::string_view block, const OnMatch& on_match, const OnCandidate& on_candidate = nullptr);

  /// False when no pattern can match `text`: it holds none of the atoms and
  /// every pattern has one (the prefilter alone, no regex run).
  bool may_match(std::string_view text) const;

  /// Indices of the patterns matching one line, checked as scan() checks a
  /// candidate line (exact; the prefilter only decides how); with
  /// `anchor_start` only matches that begin at the line's first byte.
  std::vector<int> match_line(std::string_view line) const;

  std::size_t size() const { return count_; }
  /// Literal atoms the prefilter looks for (lowercase).
  const std::vector<std::string>& atoms() const { return atoms_; }
  /// Patterns that have no atom and are screened block by block instead.
  const std::vector<int>& unfiltered() const { return unfiltered_; }
  const ScanStats& stats() const { return stats_; }

  /// True when this build has a multi-pattern engine (RE2).
  static bool available();
  /// A one-line description of the engine (or why there is none).
  static std::string engine();

 private:
  struct Impl;
  /// `first_atom`: where the prefilter found the line's first atom (npos:
  /// the line is checked against every pattern).
  void check_line(std::string_view block, std::size_t begin, std::size_t end, std::size_t first_atom,
                  const OnMatch& on_match, const OnCandidate& on_candidate);

  std::unique_ptr<Impl> impl_;
  std::size_t count_ = 0;
  std::vector<std::string> atoms_;
  std::vector<int> unfiltered_;
  ScanStats stats_;
  std::vector<int> ids_;  // reused per line: no allocation on the hot path
};

}  // namespace nodeprobe::diag
