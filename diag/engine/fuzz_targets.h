#pragma once
/// Entry points the libFuzzer targets (diag/fuzz/) and the regression test
/// (tests/diag/regressions) share: bytes in, no crash, no hang, no leak.

#include <cstddef>
#include <cstdint>

namespace nodeprobe::diag {

/// Bytes as a log (gzip detected): scanner, rules, structured parsers,
/// context rules, playbook rendering and JSON output.
void fuzz_analyze(const std::uint8_t* data, std::size_t size);

/// Bytes as a support bundle (.tar or .tar.gz): every entry read, the
/// manifest parsed when present, names checked.
void fuzz_bundle(const std::uint8_t* data, std::size_t size);

/// Bytes as one report, or two separated by a NUL byte (before, after):
/// loading (bounded JSON, redaction), every renderer (text, Markdown, HTML
/// with charts), the exporters and compare with its renderers. Aborts when
/// a report it loaded does not load again after being written (round trip).
void fuzz_report(const std::uint8_t* data, std::size_t size);

/// Bytes as a directory tree (fuzz_dir_tree records: files, directories,
/// symbolic links, FIFOs, hard links) made in a fresh temporary directory
/// and diagnosed as an extracted bundle. A canary file outside the bundle,
/// reachable only through a link, must never reach the report: the target
/// aborts if it does.
void fuzz_bundle_dir(const std::uint8_t* data, std::size_t size);

}  // namespace nodeprobe::diag
