#pragma once
/// Normalisation: one physical line as it arrives (journald JSON, docker
/// json-file, rsyslog #012 escapes, colour codes, Python reprs with "\n",
/// progress bars with '\r') becomes the logical lines inside it, and a
/// logical line's wrappers (timestamps, hostnames, program[pid]:, dmesg
/// -T/-x, container, Slurm, torchrun and mpirun prefixes, NCCL's
/// host:pid:tid [gpu]) can be stripped to the message itself.
///
/// The scanner matches raw blocks first (fast path: most lines need
/// nothing); only a candidate line that needs unwrapping is unwrapped and
/// matched again piece by piece, so normalising costs nothing on the bulk of
/// a log. Lines a terminal hard-wrapped at a fixed width are joined back
/// (wrap_runs) and matched as one.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nodeprobe::diag {

/// True when `line` holds wrapped or escaped content that unwrap() changes.
bool needs_unwrap(std::string_view line);

/// True when `line` carries a JSON log record (journald -o json, docker
/// json-file, a JSON logger), possibly behind a prefix.
bool is_json_record(std::string_view line);

/// The logical lines inside one physical line: a JSON record's message
/// field (MESSAGE, message, msg, log) decoded, ANSI escapes removed, "#011"
/// as a tab, split at "#012", literal "\n" and '\r'. Empty pieces are
/// dropped. `time` receives the record's own timestamp when it has one
/// (__REALTIME_TIMESTAMP, time, timestamp), epoch seconds.
std::vector<std::string> unwrap(std::string_view line, std::optional<double>* time = nullptr);

/// `block` with every U+00A0 no-break space as an ASCII space: text copied
/// from a web page that wrote its spaces as &nbsp; ("out of memory" with
/// no-break spaces holds none of the prefilter's literals). `block` itself
/// when it has none; else the rewritten text, kept in `storage`. Line ends
/// are unchanged, so line numbers are too.
std::string_view ascii_spaces(std::string_view block, std::string* storage);

/// The message without the wrappers that carry time, host, process,
/// container, rank or task (see the file comment). Never empty when the
/// line is not: a line that is all prefix stays as it is.
std::string_view message_body(std::string_view line);

/// Where the message may begin behind its wrappers, for patterns anchored at
/// the message's start: the text after each wrapper message_body strips, and
/// after the prefixes that may be a wrapper or the message's own first word
/// (the word after a timestamp or host, pdsh's "host: ", Python logging's
/// "LEVEL:logger:"). At most `max` views into `line`, earliest first, without
/// trailing spaces or '\r'; the line itself is not among them. Byte-level,
/// no allocation.
std::size_t message_starts(std::string_view line, std::string_view* out, std::size_t max);

/// The line without the wrappers message_body strips, but with the text's
/// own indentation after them kept (one separating space dropped), for the
/// parsers of tables and `-q` outputs that read columns and indents. The
/// line itself when it has no wrapper.
std::string_view strip_wrappers(std::string_view line);

/// An evidence line for people: the message without its wrappers, whole
/// when it fits in `max_bytes`, else cut at a word boundary with "...".
std::string evidence_display(std::string_view text, std::size_t max_bytes);

/// A run of physical lines that a terminal hard-wrapped: [first, last]
/// 0-based line indexes within a block and the joined text.
struct WrapRun {
  std::size_t first_offset = 0;  ///< byte offset of the first line in the block
  long first_line = 0;           ///< index of the first line in the block (0-based)
  int lines = 0;
  std::string text;
};

/// Runs of lines hard-wrapped at one fixed width in `block`: the width is a
/// line length >= 60 that at least three lines share exactly and no line
/// exceeds; a run is such full-width lines followed by the continuation,
/// which must not itself start like a new log line (save an endpoint in
/// brackets, "[10.0.0.2]:29500", after a piece cut after a space). Empty when the block
/// shows no wrapping (the common case, found with one pass of memchr).
std::vector<WrapRun> wrap_runs(std::string_view block);

/// Pairs of lines where a person or an issue editor broke one message in
/// two at a word boundary: the first (>= 40 bytes) stops mid-sentence (a
/// lower-case word or a comma at its end, not a table edge), the second
/// carries no record start or wrapper (nor a colon in its first word) and
/// goes on in lower case or with a path. The joined text is the first line,
/// one space, the second without its indent. The engine matches it only for
/// rules that neither line matched and that did not fire elsewhere in the
/// source.
std::vector<WrapRun> sentence_runs(std::string_view block);

}  // namespace nodeprobe::diag
